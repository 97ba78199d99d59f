"""Parsing eth_simulateV1 answers (services.txpreview.parse_simulation) with answers recorded from
anvil 1.7.1 (tests/unit/services/recorded/simulate_v1_anvil_1.7.1.json): an ERC-20 transfer, a native
transfer, a reverting call and a node error; approvals the owner gives (shown_approval); and the block
it is simulated in (next_block)."""

import json
from pathlib import Path

import pytest
from eth_abi import encode

from wallet_app.services.chain import TokenInfo, erc20_call_selectors
from wallet_app.services.eth import ZERO_ADDRESS
from wallet_app.services.txpreview import (
    APPROVAL_FOR_ALL_TOPIC,
    APPROVAL_TOPIC,
    PERMIT2_APPROVAL_TOPIC,
    TRANSFER_TOPIC,
    Simulation,
    change_text,
    next_block,
    parse_simulation,
    shown_approval,
)

RECORDED = json.loads((Path(__file__).parent / "recorded" / "simulate_v1_anvil_1.7.1.json").read_text())
OWNER, TUSD, RECIPIENT = RECORDED["owner"], RECORDED["tusd"], RECORDED["recipient"]


def test_erc20_transfer_is_a_token_out():
    assert parse_simulation(RECORDED["transfer"], OWNER) == Simulation("ok", {TUSD.lower(): -12_500_000})
    # Seen from the recipient, the same answer is a token in.
    assert parse_simulation(RECORDED["transfer"], RECIPIENT) == Simulation("ok", {TUSD.lower(): 12_500_000})


def test_native_transfer_is_traced_as_the_native_coin():
    assert parse_simulation(RECORDED["native"], OWNER) == Simulation("ok", {ZERO_ADDRESS: -(10**18)})


def test_revert():
    assert parse_simulation(RECORDED["revert"], OWNER) == Simulation("reverted", {})


@pytest.mark.parametrize("answer", [
    RECORDED["insufficient_funds"],
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}},
    {"jsonrpc": "2.0", "id": 1, "result": []},
    {"jsonrpc": "2.0", "id": 1, "result": [{"calls": [{"status": "0x1", "logs": [{"topics": "x"}]}]}]},
    None,
])
def test_anything_else_is_unavailable(answer):
    assert parse_simulation(answer, OWNER) == Simulation("unavailable", {})


def test_self_transfers_and_other_parties_cancel_out():
    transfer = RECORDED["transfer"]["result"][0]["calls"][0]["logs"][0]
    back = {**transfer, "topics": [transfer["topics"][0], transfer["topics"][2], transfer["topics"][1]]}
    answer = {"result": [{"calls": [{"status": "0x1", "logs": [transfer, back]}]}]}
    assert parse_simulation(answer, OWNER) == Simulation("ok", {})


@pytest.mark.parametrize("units, text", [(-12_500_000, "-12.5 tUSD"), (1, "+0.000001 tUSD"),
                                         (-10**12, "-1,000,000 tUSD")])
def test_change_text_in_the_token_units(units, text):
    assert change_text(units, TokenInfo(TUSD, "tUSD", "Newbl Test USD", 6)) == text


def _topic(address: str) -> str:
    return "0x" + "00" * 12 + address.lower()[2:]


def _answer(*logs):
    return {"result": [{"calls": [{"status": "0x1", "logs": list(logs)}]}]}


NFT, OTHER, TOKEN_ID = "0x" + "71" * 20, "0x" + "0a" * 20, "0x" + "00" * 31 + "07"


@pytest.mark.parametrize("topics, data, status", [
    # ERC-721 (the token id as a fourth topic): transferFrom and approve have the ERC-20 selectors.
    ([TRANSFER_TOPIC, _topic(OWNER), _topic(OTHER), TOKEN_ID], "0x", "unavailable"),  # an NFT out
    ([TRANSFER_TOPIC, _topic(OTHER), _topic(OWNER), TOKEN_ID], "0x", "unavailable"),
    ([TRANSFER_TOPIC, _topic(OTHER), _topic(RECIPIENT), TOKEN_ID], "0x", "ok"),  # others' NFTs
    ([APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER), TOKEN_ID], "0x", "unavailable"),
    ([APPROVAL_FOR_ALL_TOPIC, _topic(OWNER), _topic(OTHER)], "0x" + "00" * 31 + "01", "unavailable"),
    ([APPROVAL_FOR_ALL_TOPIC, _topic(OTHER), _topic(OWNER)], "0x" + "00" * 31 + "01", "ok"),
    # ERC-20's, from a call whose lines do not show it (shown_approval: below).
    ([APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER)], "0x" + "00" * 32, "unavailable"),
    ([APPROVAL_TOPIC, _topic(OTHER), _topic(OWNER)], "0x" + "00" * 32, "ok"),  # another's
    ([PERMIT2_APPROVAL_TOPIC, _topic(OWNER), _topic(TUSD), _topic(OTHER)], "0x" + "00" * 64, "unavailable"),
])
def test_an_nft_of_the_owner_moving_is_no_balance_change_it_can_show(topics, data, status):
    """It said "No balance changes." for a link that sends the user's NFT away (found by an audit)."""
    log = {"address": NFT, "topics": topics, "data": data}
    assert parse_simulation(_answer(log), OWNER) == Simulation(status, {})


def _erc20_log(token: str, topic: str, source: str, target: str, amount: int) -> dict:
    return {"address": token, "topics": [topic, _topic(source), _topic(target)], "data": "0x" + f"{amount:064x}"}


def test_the_allowance_a_transfer_from_spends_is_no_approval():
    """OpenZeppelin 4's transferFrom announces the allowance left (Approval) before its Transfer:
    every swap of such a token by a router the user approved before (a review)."""
    spent = _erc20_log(TUSD, APPROVAL_TOPIC, OWNER, OTHER, 5)
    out = _erc20_log(TUSD, TRANSFER_TOPIC, OWNER, OTHER, 7)
    assert parse_simulation(_answer(spent, out), OWNER) == Simulation("ok", {TUSD.lower(): -7})
    # Not when no Transfer of that token from the user follows at once: an allowance given.
    given = _erc20_log(TUSD, APPROVAL_TOPIC, OWNER, OTHER, 2**256 - 1)
    into = _erc20_log(TUSD, TRANSFER_TOPIC, OTHER, OWNER, 7)
    other_token = _erc20_log(NFT, TRANSFER_TOPIC, OWNER, OTHER, 7)
    # (A permit's allowance, then a transferFrom spending it: the permit's is no spend.)
    for logs in ([given], [given, into], [given, other_token], [given, spent, out], [out, given]):
        assert parse_simulation(_answer(*logs), OWNER) == Simulation("unavailable", {}), logs


def _call(name: str, types: list[str], args: list) -> str:
    return next(s for s, n in erc20_call_selectors().items() if n == name) + encode(types, args).hex()


PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
APPROVE = _call("approve", ["address", "uint256"], [OTHER, 5])
INCREASE_APPROVAL = _call("increaseApproval", ["address", "uint256"], [OTHER, 2**256 - 1])
FOR_ALL = _call("setApprovalForAll", ["address", "bool"], [OTHER, True])
PERMIT2_APPROVE = _call("permit2Approve", ["address", "address", "uint160", "uint48"], [TUSD, OTHER, 1, 0])


@pytest.mark.parametrize("data, to, emitter, topics, status", [
    (APPROVE, NFT, NFT, [APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER)], "ok"),  # the approve's own
    (APPROVE, NFT, TUSD, [APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER)], "unavailable"),  # another token's
    (APPROVE, NFT, NFT, [APPROVAL_TOPIC, _topic(OWNER), _topic(RECIPIENT)], "unavailable"),  # another spender
    (APPROVE, NFT, NFT, [APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER), TOKEN_ID], "unavailable"),  # ERC-721's
    ("0xdeadbeef", NFT, NFT, [APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER)], "unavailable"),
    ("0xdeadbeef", NFT, NFT, [APPROVAL_FOR_ALL_TOPIC, _topic(OWNER), _topic(OTHER)], "unavailable"),
    (INCREASE_APPROVAL, NFT, NFT, [APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER)], "ok"),
    (FOR_ALL, NFT, NFT, [APPROVAL_FOR_ALL_TOPIC, _topic(OWNER), _topic(OTHER)], "ok"),
    (FOR_ALL, NFT, NFT, [APPROVAL_FOR_ALL_TOPIC, _topic(OWNER), _topic(RECIPIENT)], "unavailable"),
    (FOR_ALL, NFT, NFT, [APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER)], "unavailable"),
    (PERMIT2_APPROVE, PERMIT2, PERMIT2, [PERMIT2_APPROVAL_TOPIC, _topic(OWNER), _topic(TUSD), _topic(OTHER)], "ok"),
    (PERMIT2_APPROVE, PERMIT2, PERMIT2, [PERMIT2_APPROVAL_TOPIC, _topic(OWNER), _topic(NFT), _topic(OTHER)],
     "unavailable"),
    (PERMIT2_APPROVE, PERMIT2, TUSD, [APPROVAL_TOPIC, _topic(OWNER), _topic(OTHER)], "unavailable"),
])
def test_an_approval_of_the_owner_is_shown_only_by_the_lines_of_its_own_call(data, to, emitter, topics, status):
    """Any approval the owner gives (ERC-20's Approval too) is no balance change: "No balance changes."
    only for the one the preview's lines name (an increaseApproval of an old token read 'Contract call'
    and "No balance changes.", found by an audit)."""
    tx = {"to": to, "data": data}
    log = {"address": emitter.lower(), "topics": topics, "data": "0x" + "00" * 32}
    assert parse_simulation(_answer(log), OWNER, shown_approval(tx, OWNER)) == Simulation(status, {})


@pytest.mark.parametrize("tokens, status", [(10, "ok"), (11, "unavailable")])
def test_a_simulation_that_changes_more_tokens_than_are_looked_up_is_unavailable(tokens, status):
    """Each changed token is looked up in the database and on the chain on every load of the link:
    a contract emitting Transfer logs to the user from thousands of made-up tokens made one page
    load thousands of lookups (found by an audit)."""
    logs = [{"address": "0x" + f"{i:040x}", "topics": [TRANSFER_TOPIC, _topic(OTHER), _topic(OWNER)],
             "data": "0x" + f"{1:064x}"} for i in range(1, tokens + 1)]
    assert parse_simulation(_answer(*logs), OWNER).status == status


# ---------------------------------------------------------------- the simulated block

LATEST = {"number": "0x10", "timestamp": hex(1_000), "miner": "0x" + "5e" * 20, "hash": "0x" + "ab" * 32}


@pytest.mark.parametrize("now, time", [(2_000.7, hex(2_000)), (1_000, hex(1_001)), (10, hex(1_001))])
def test_next_block_follows_the_latest(now, time):
    """The next number; now, or just after the latest's time (a node refuses one not after it); the
    latest's fee recipient; 32 random bytes of prevrandao (geth's is 0, anvil's the latest's)."""
    block = next_block(LATEST, now)
    assert {k: v for k, v in block.items() if k != "prevRandao"} == {
        "number": "0x11", "time": time, "feeRecipient": LATEST["miner"]}
    assert len(block["prevRandao"]) == 66 and int(block["prevRandao"], 16) != 0
    assert next_block(LATEST, now)["prevRandao"] != block["prevRandao"]


def test_simulate_sends_the_next_block_on_the_latest_read(monkeypatch):
    """eth_simulateV1 on the block read (by its number: a block mined meanwhile would come before the
    overridden next one), with next_block's overrides, and the link's call."""
    from types import SimpleNamespace

    from wallet_app.services import txpreview
    from wallet_app.services.chain import ChainConfig

    asked = []

    def make_request(method, params):
        asked.append((method, params))
        return {"result": LATEST} if method == "eth_getBlockByNumber" else RECORDED["transfer"]

    w3 = SimpleNamespace(provider=SimpleNamespace(make_request=make_request))
    monkeypatch.setattr(txpreview.chain_svc, "web3_for", lambda chain: w3)
    monkeypatch.setattr(txpreview.time, "time", lambda: 5_000)
    chain = ChainConfig(31337, "anvil", "http://127.0.0.1:1", "0x" + "11" * 20, None, "ETH", "Ether", 18, None, ())
    tx = {"chain_id": "31337", "to": TUSD, "data": "0xa9059cbb", "value": "0", "nonce": "0", "gas_limit": "60000",
          "gas_price": "7"}

    assert txpreview.simulate(chain, OWNER, tx) == Simulation("ok", {TUSD.lower(): -12_500_000})
    (block_method, block_params), (method, (options, tag)) = asked
    assert (block_method, block_params, method, tag) == ("eth_getBlockByNumber", ["latest", False], "eth_simulateV1",
                                                         "0x10")
    [state] = options.pop("blockStateCalls")
    assert options == {"traceTransfers": True, "validation": True}
    assert state["calls"] == [{"from": OWNER, "to": TUSD, "data": "0xa9059cbb", "value": "0x0", "gas": hex(60_000),
                               "gasPrice": "0x7"}]
    assert {k: v for k, v in state["blockOverrides"].items() if k != "prevRandao"} == {
        "number": "0x11", "time": hex(5_000), "feeRecipient": LATEST["miner"]}
    # A node that cannot read its latest block: unavailable, nothing simulated.
    asked.clear()
    w3.provider.make_request = lambda method, params: {"error": {"code": -32000, "message": "no"}}
    assert txpreview.simulate(chain, OWNER, tx) == Simulation("unavailable", {})
