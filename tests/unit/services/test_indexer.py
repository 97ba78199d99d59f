"""The incoming-transfer indexer's pure parts (no chain, no database): ranges, log and block
decoding, the status of a receipt, and which users get which entry."""

import pytest

from wallet_app.services import indexer
from wallet_app.services.chain import ChainConfig, TokenInfo
from wallet_app.services.eth import ZERO_ADDRESS
from wallet_app.services.indexer import Incoming, WatchList

ALICE = "0x" + "a1" * 20
BOB = "0x" + "b2" * 20
EVE = "0x" + "e3" * 20
TOKEN = "0x" + "70" * 20
OTHER_TOKEN = "0x" + "71" * 20
TX = "0x" + "ab" * 32


def topic(address: str) -> str:
    return "0x" + "0" * 24 + address[2:]


def log(to=ALICE, sender=BOB, amount=5, topics=None, data=None, **extra) -> dict:
    return {
        "address": TOKEN.upper().replace("0X", "0x"),
        "topics": topics if topics is not None else [indexer.TRANSFER_TOPIC, topic(sender), topic(to)],
        "data": data if data is not None else "0x" + f"{amount:064x}",
        "transactionHash": TX.upper().replace("0X", "0x"),
        "logIndex": "0x3",
        "blockNumber": "0x10",
        "transactionIndex": "0x2",
        **extra,
    }


@pytest.mark.parametrize("next_block, head, confirmations, max_blocks, expected", [
    (0, 0, 0, 1000, (0, 0)),
    (10, 100, 0, 1000, (10, 100)),
    (10, 100, 5, 1000, (10, 95)),  # a few blocks behind the head
    (10, 5000, 5, 1000, (10, 1009)),  # bounded ranges
    (96, 100, 5, 1000, None),  # at the safe head already
    (100, 100, 0, 1000, (100, 100)),
    (101, 100, 0, 1000, None),
    (0, 3, 5, 1000, None),  # a chain shorter than the confirmations
])
def test_plan_range(next_block, head, confirmations, max_blocks, expected):
    assert indexer.plan_range(next_block, head, confirmations, max_blocks) == expected


@pytest.mark.parametrize("cursor, last_block, rewind, expected", [
    (1000, 999, 128, 872),  # the newest block scanned replaced: the 128 blocks up to it again
    (500, 999, 128, 372),  # a cursor moved back before it: from the cursor
    (50, 49, 128, 0),  # a young chain: from its first block
    (1000, 999, 1, 999),
])
def test_rescan_from(cursor, last_block, rewind, expected):
    assert indexer.rescan_from(cursor, last_block, rewind) == expected


def test_block_data_is_the_entries_data():
    """remove_replaced finds a block's entries by this exact text."""
    assert indexer.block_data(38) == '{"block":38}'
    watch = WatchList({ALICE: [1]}, {}, {})
    (row,) = indexer.entries_for([Incoming(ALICE, BOB, ZERO_ADDRESS, 5, TX, -1, 38)], watch, CHAIN, {})
    assert row["data"] == indexer.block_data(38)


def test_transfer_topic_is_the_erc20_event():
    assert indexer.TRANSFER_TOPIC == "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


@pytest.mark.parametrize("entry, found", [
    (log(), [Incoming(ALICE, BOB, TOKEN, 5, TX, 3, 16, 2)]),
    (log(to=EVE), []),  # not a watched address
    (log(amount=0), []),  # zero-value: address poisoning's favourite
    (log(topics=[indexer.TRANSFER_TOPIC, topic(BOB), topic(ALICE), "0x" + "0" * 63 + "7"], data="0x"), []),  # ERC-721
    (log(topics=["0x" + "11" * 32, topic(BOB), topic(ALICE)]), []),  # another event
    (log(data="0x1234"), []),  # malformed amount
    (log(removed=True), []),  # a reorged log
    (log(topics=[indexer.TRANSFER_TOPIC, topic(BOB), "0x" + "ff" * 32]), []),  # not an address topic
    (log(sender=ZERO_ADDRESS, amount=2**255), [Incoming(ALICE, ZERO_ADDRESS, TOKEN, 2**255, TX, 3, 16, 2)]),  # a mint
])
def test_transfers_from_logs(entry, found):
    assert indexer.transfers_from_logs([entry], {ALICE, BOB}) == found


def block(*txs) -> dict:
    return {"number": "0x2a", "timestamp": "0x64", "transactions": list(txs)}


def tx(to, value, sender=BOB, h=TX) -> dict:
    return {"to": to, "value": hex(value), "from": sender, "hash": h, "transactionIndex": "0x1"}


@pytest.mark.parametrize("b, found", [
    (block(tx(ALICE.upper().replace("0X", "0x"), 7)), [Incoming(ALICE, BOB, ZERO_ADDRESS, 7, TX, -1, 42, 1)]),
    (block(tx(ALICE, 0)), []),  # a call without value
    (block(tx(EVE, 7)), []),
    (block(tx(None, 7)), []),  # a contract creation
    (block(), []),
    (block(tx(EVE, 1), tx(ALICE, 2, sender=ALICE)),  # to oneself counts too: the tx is the user's
     [Incoming(ALICE, ALICE, ZERO_ADDRESS, 2, TX, -1, 42, 1)]),
])
def test_native_from_block(b, found):
    assert indexer.native_from_block(b, {ALICE}) == found


@pytest.mark.parametrize("receipt, status", [
    (None, None),
    ({}, None),
    ({"status": 1}, "ok"),
    ({"status": 0}, "failed"),
])
def test_status_from_receipt(receipt, status):
    assert indexer.status_from_receipt(receipt) == status


CHAIN = ChainConfig(
    chain_id=31337, chain_name="dev", rpc_url="http://x", multicall_address=ZERO_ADDRESS, payment_contract=None,
    native_symbol="ETH", native_name="Ether", native_decimals=18, explorer_url=None,
    tokens=(TokenInfo(TOKEN, "tUSD", "Test USD", 6),),
)


def test_entries_for_users_and_their_tokens():
    # Alice's address is two users (restored under two accounts); user 3 added OTHER_TOKEN.
    watch = WatchList(users={ALICE: [1, 2], BOB: [3]}, holdings={OTHER_TOKEN: {3: ("OTH", 2)}},
                      defaults={TOKEN: ("tUSD", 6)})
    assert watch.tokens == sorted([TOKEN, OTHER_TOKEN])
    found = [
        Incoming(BOB, EVE, ZERO_ADDRESS, 10**18, TX, -1, 17, 1),  # the native coin is everyone's
        Incoming(BOB, EVE, OTHER_TOKEN, 9, TX, 5, 17, 0),  # in Bob's list, with its symbol there
        Incoming(ALICE, EVE, OTHER_TOKEN, 9, TX, 4, 16),  # not in Alice's lists: nobody
        Incoming(ALICE, EVE, TOKEN, 5, TX, 3, 16),  # a default token: both Alice users
    ]
    # In chain order (block, transaction, log), whatever order they were found in.
    rows = indexer.entries_for(found, watch, CHAIN, {16: 1000, 17: 1012})
    picked = [(r["user_id"], r["token_symbol"], r["token_decimals"], r["amount"], r["log_index"], r["created_at"])
              for r in rows]
    assert picked == [
        (1, "tUSD", 6, "5", 3, 1000),
        (2, "tUSD", 6, "5", 3, 1000),
        (3, "OTH", 2, "9", 5, 1012),
        (3, "ETH", 18, str(10**18), -1, 1012),
    ]
    assert {(r["type"], r["status"], r["counterparty"], r["chain_id"]) for r in rows} == {("receive", "ok", EVE, 31337)}
    assert rows[0]["data"] == '{"block":16}'


def test_entries_for_keep_a_users_newest_of_a_flood():
    """A token in a user's list (their own, say) emitting thousands of transfers to them: each was
    a row (the database grew at the attacker's gas price, far past the newest 100 the activity
    list shows). A range keeps a user's newest RECEIVE_KEEP entries; other users lose none."""
    watch = WatchList(users={ALICE: [1], BOB: [2]}, holdings={}, defaults={TOKEN: ("tUSD", 6)})
    flood = [Incoming(ALICE, EVE, TOKEN, 1, TX, i, 16 + i // 100) for i in range(250)]
    rows = indexer.entries_for([*flood, Incoming(BOB, EVE, TOKEN, 7, TX, 0, 16)], watch, CHAIN, {})
    assert indexer.RECEIVE_KEEP == 100
    assert [r["log_index"] for r in rows if r["user_id"] == 1] == list(range(150, 250))
    assert [r["amount"] for r in rows if r["user_id"] == 2] == ["7"]


class _CappedNode:
    """A provider that refuses an eth_getLogs range wider than `cap` blocks, as public providers
    refuse one with too many results (10,000 logs): a token flooding an address with events."""

    def __init__(self, logs_at: dict[int, list[dict]], cap: int) -> None:
        self.logs_at, self.cap, self.ranges, self.filters = logs_at, cap, [], []

    def make_batch_request(self, calls):
        answers = []
        for _method, [f] in calls:
            first, last = int(f["fromBlock"], 16), int(f["toBlock"], 16)
            self.ranges.append((first, last))
            self.filters.append(f)
            if last - first + 1 > self.cap:
                answers.append({"error": {"code": -32005, "message": "query returned more than 10000 results"}})
            else:
                answers.append({"result": [e for n in range(first, last + 1) for e in self.logs_at.get(n, [])]})
        return answers


def test_fetch_logs_reads_a_refused_range_again_in_halves():
    """A refused range failed every pass at the same blocks: the chain's indexer never moved on,
    for every user. It is read again in halves, down to single blocks."""
    from types import SimpleNamespace

    node = _CappedNode({3: [log(blockNumber="0x3")], 900: [log(blockNumber="0x384")]}, cap=100)
    w3 = SimpleNamespace(provider=node)
    got = indexer.fetch_logs(w3, 0, 999, [TOKEN], [ALICE])
    assert [e["blockNumber"] for e in got] == ["0x3", "0x384"]
    assert node.ranges[0] == (0, 999) and max(b - a + 1 for a, b in node.ranges[1:]) <= 500
    # A single block the node still refuses: the pass fails (and is retried), nothing is skipped.
    with pytest.raises(RuntimeError, match="eth_getLogs"):
        indexer.fetch_logs(SimpleNamespace(provider=_CappedNode({}, cap=0)), 0, 999, [TOKEN], [ALICE])


class _ResultCappedNode:
    """A provider that refuses an eth_getLogs whose answer would hold more than `cap` logs (as
    public providers do at 10,000), filtering its logs as a node does: by block, token, recipient."""

    def __init__(self, logs: list[dict], cap: int) -> None:
        self.logs, self.cap, self.refused = logs, cap, 0

    def make_batch_request(self, calls):
        answers = []
        for _method, [f] in calls:
            first, last = int(f["fromBlock"], 16), int(f["toBlock"], 16)
            found = [
                e for e in self.logs
                if first <= int(e["blockNumber"], 16) <= last
                and e["address"].lower() in f["address"] and e["topics"][2] in f["topics"][2]
            ]
            if len(found) > self.cap:
                self.refused += 1
                answers.append({"error": {"code": -32005, "message": "query returned more than 10000 results"}})
            else:
                answers.append({"result": found})
        return answers


def test_fetch_logs_skips_only_a_token_flooding_one_address_within_one_block(caplog):
    """A token emitting more transfers to one address within one block than the provider answers
    (anyone can make one, and list it) failed every pass at that block, for every token and user
    of the chain. Now the filter is narrowed to that token and address, which alone is skipped."""
    from types import SimpleNamespace

    def at(block, to, token=TOKEN, index=0):
        return log(to=to, blockNumber=hex(block), logIndex=hex(index), address=token)

    flood = [at(7, EVE, OTHER_TOKEN, i) for i in range(50)]
    wanted = [at(3, ALICE), at(7, ALICE), at(7, BOB), at(7, ALICE, OTHER_TOKEN, 99), at(9, EVE, OTHER_TOKEN)]
    node = _ResultCappedNode(flood + wanted, cap=20)
    with caplog.at_level("WARNING", logger="wallet_app.services.indexer"):
        got = indexer.fetch_logs(SimpleNamespace(provider=node), 0, 99, [TOKEN, OTHER_TOKEN], [ALICE, BOB, EVE])
    assert sorted((e["blockNumber"], e["address"], e["topics"][2]) for e in got) == sorted(
        (e["blockNumber"], e["address"], e["topics"][2]) for e in wanted
    )
    assert [r.getMessage() for r in caplog.records] == [
        f"eth_getLogs refused the transfers of token {OTHER_TOKEN} to {EVE} in block 7 "
        "({'code': -32005, 'message': 'query returned more than 10000 results'}): skipped"
    ]


def test_fetch_logs_names_a_bounded_number_of_tokens_per_filter():
    """Every user's tokens go into the filters, and anyone can list 50 existing token addresses per
    account at no cost: one filter with thousands of addresses is refused by nodes (geth: 1,000 per
    position) at every block, and the chain's indexer stopped for everyone."""
    from types import SimpleNamespace

    node = _CappedNode({}, cap=1000)
    tokens = ["0x" + f"{i:040x}" for i in range(1, 1201)]
    users = ["0x" + f"{i:040x}" for i in range(10**6, 10**6 + 700)]
    indexer.fetch_logs(SimpleNamespace(provider=node), 0, 9, tokens, users)
    sizes = [(len(f["address"]), len(f["topics"][2])) for f in node.filters]
    assert sizes == [(500, 500), (500, 200), (500, 500), (500, 200), (200, 500), (200, 200)]
    assert sorted({a for f in node.filters for a in f["address"]}) == tokens
