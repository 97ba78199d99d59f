"""Incoming transfers for 100 users over 10,000 blocks of anvil history: the indexer
(services.indexer: one eth_getLogs filter for all users per 1,000-block range, the blocks read
in JSON-RPC batches) against a per-user naive scan, in the same run.

History: anvil with automine off; every `--every`-th block holds `--per-block` transfers from
anvil's unlocked accounts #2-#9 (tUSD, tKRW and ETH to random users, and noise: transfers to
addresses that are no user, and a token in nobody's list), the blocks between are empty
(anvil_mine). The indexer runs from the first history block to the head with the database
(SQLite in a temp dir) holding the 100 users. The naive scan does, for each user alone, what a
per-user scanner must: eth_getLogs with that user as the recipient per 1,000-block range, and
every block with its transactions (one request each) for native transfers. It is measured on
`--naive-users` users over the whole history and scaled to all users (its work is the same per
user); its findings for those users must equal the indexer's.

Mining gets slower with the chain's height on anvil (superlinear: 10,000 blocks take about 3 to 6
minutes here), so the history is made once and kept in bench/results (anvil_dumpState; the
users are drawn from --seed); later runs load it at anvil's start. --fresh-history makes it again.

Counted: JSON-RPC calls (each call of a batch counts) and HTTP requests, on the wire.
Target: at least 10x fewer JSON-RPC calls per 1,000 blocks than the naive scan.

    source env.sh && python bench/indexer.py [--users 100] [--blocks 10000] [--naive-users 3] [--fresh-history]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eth_account import Account  # noqa: E402
from web3 import Web3  # noqa: E402

from bench.devstack import use_dev_environment, write_chains_file  # noqa: E402
from contracts.artifacts import artifact  # noqa: E402
from contracts.deploy import DEV_DEPLOYER_KEY, _deploy_contract, _send, _w3, deploy  # noqa: E402
from wallet_app.dev.anvil import Anvil  # noqa: E402

TARGET_RATIO = 10.0
SENDERS = range(2, 10)  # anvil's unlocked dev accounts #2-#9 (#0 deploys, #1 is the relayer)
RESULTS = Path(__file__).resolve().parent / "results"


class WireCounter:
    """Counts what a web3 provider sends: HTTP requests and the JSON-RPC calls in them."""

    def __init__(self, provider) -> None:
        self.calls: Counter[str] = Counter()
        self.http = 0
        # The app's provider (services.rpc_http) posts through its own post(); web3's own, requests.
        owner = provider if hasattr(provider, "post") else provider._request_session_manager
        name = "post" if owner is provider else "make_post_request"
        real = getattr(owner, name)

        def counted(*args, **kwargs):
            body = json.loads(args[-1] if name == "post" else args[1])
            self.http += 1
            self.calls.update(c["method"] for c in (body if isinstance(body, list) else [body]))
            return real(*args, **kwargs)

        setattr(owner, name, counted)

    def reset(self) -> None:
        self.calls.clear()
        self.http = 0

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def rpc(w3: Web3, method: str, params: list):
    answer = w3.provider.make_request(method, params)
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def make_history(w3: Web3, deployed: dict, users: list[str], blocks: int, every: int, per_block: int,
                 rnd: random.Random) -> tuple[int, Counter]:
    """Mines `blocks` blocks from the next one; -> (first block, expected (to, token, amount) multiset)."""
    erc20 = Web3().eth.contract(abi=artifact("TestToken")["abi"])
    accounts = rpc(w3, "eth_accounts", [])
    senders = [Web3.to_checksum_address(accounts[i]) for i in SENDERS]
    # The tokens in every user's list (chains.dev.json's `tokens`); tEUR, a payment token only, is not.
    tokens = [deployed["tokens"][symbol] for symbol in ("tUSD", "tKRW")]
    for token in tokens:  # the senders' tokens, minted by the deployer (the tokens' owner)
        for s in senders:
            _send(w3, DEV_DEPLOYER_KEY, {"to": token, "data": erc20.encode_abi("mint", [s, 10**15])})
    junk = _deploy_contract(w3, DEV_DEPLOYER_KEY, "TestToken", "Junk", "JUNK")  # in nobody's list
    for s in senders:
        _send(w3, DEV_DEPLOYER_KEY, {"to": junk, "data": erc20.encode_abi("mint", [s, 10**15])})
    strangers = [Account.create().address for _ in range(50)]
    rpc(w3, "evm_setAutomine", [False])
    first = int(rpc(w3, "eth_blockNumber", []), 16) + 1
    expected: Counter = Counter()
    mined = 0
    while mined < blocks:
        batch = []
        for sender in rnd.sample(senders, min(per_block, len(senders))):  # one tx per sender: no nonce races
            kind = rnd.choice(["eth", "token", "token", "stranger", "junk"])
            to = rnd.choice(strangers if kind == "stranger" else users)
            amount = rnd.randrange(1, 10**6)
            if kind in ("eth", "stranger") and rnd.random() < 0.5:
                tx = {"from": sender, "to": to, "value": hex(amount), "gas": hex(21_000)}
                if kind == "eth":
                    expected[(to.lower(), "0x" + "0" * 40, amount)] += 1
            else:
                token = junk if kind == "junk" else rnd.choice(tokens)
                data = erc20.encode_abi("transfer", [to, amount])
                tx = {"from": sender, "to": token, "data": data, "gas": hex(80_000)}
                if kind in ("eth", "token"):
                    expected[(to.lower(), token.lower(), amount)] += 1
            batch.append(("eth_sendTransaction", [tx]))
        for answer in w3.provider.make_batch_request(batch):
            if "error" in answer:
                raise RuntimeError(f"send: {answer['error']}")
        rpc(w3, "evm_mine", [])
        gap = min(every - 1, blocks - mined - 1)
        if gap > 0:
            rpc(w3, "anvil_mine", [hex(gap)])
        mined += 1 + max(gap, 0)
    rpc(w3, "evm_setAutomine", [True])
    return first, expected


def load_history(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def naive_scan(w3: Web3, user: str, tokens: list[str], first: int, last: int, range_blocks: int) -> Counter:
    """One user's incoming transfers, found alone: logs to them per range, every block for native."""
    from wallet_app.services import indexer

    found: Counter = Counter()
    for start in range(first, last + 1, range_blocks):
        end = min(start + range_blocks - 1, last)
        logs = rpc(w3, "eth_getLogs", [{"fromBlock": hex(start), "toBlock": hex(end), "address": tokens,
                                        "topics": [indexer.TRANSFER_TOPIC, None, indexer._address_topic(user)]}])
        for t in indexer.transfers_from_logs(logs, {user}):
            found[(t.to, t.token_address, t.amount)] += 1
    for n in range(first, last + 1):
        for t in indexer.native_from_block(rpc(w3, "eth_getBlockByNumber", [hex(n), True]), {user}):
            found[(t.to, t.token_address, t.amount)] += 1
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=40, help="one block in this many holds transfers")
    parser.add_argument("--per-block", type=int, default=6, help="transactions in such a block (at most 8)")
    parser.add_argument("--naive-users", type=int, default=3, help="users the naive scan is measured on")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--fresh-history", action="store_true", help="make the history again (not the kept one)")
    args = parser.parse_args(argv)
    rnd = random.Random(args.seed)
    started = time.perf_counter()

    work = Path(tempfile.mkdtemp(prefix="bench-indexer-"))
    users = [Web3.to_checksum_address("0x" + rnd.randbytes(20).hex()) for _ in range(args.users)]
    cache = RESULTS / f"indexer-history-v2-{args.users}-{args.blocks}-{args.every}-{args.per_block}-{args.seed}.json"
    history = load_history(cache) if not args.fresh_history else None
    # Mining slows down with the chain's height on anvil (about 4 us x height per block here):
    # 10,000 blocks take minutes, so the history is made once and kept (anvil_dumpState).
    extra = ["--prune-history", "1"]
    if history is not None:  # too big for a JSON-RPC request (anvil_loadState): loaded at start
        state_file = work / "history-state.json"
        state_file.write_bytes(gzip.decompress(bytes.fromhex(history["state"].removeprefix("0x"))))
        extra += ["--load-state", str(state_file)]
    with Anvil(port=0, chain_id=31337, extra_args=extra) as node:
        w3 = _w3(node.url)
        t0 = time.perf_counter()
        if history is None:
            deployed = deploy(node.url, work)
            first, expected = make_history(w3, deployed, users, args.blocks, args.every, args.per_block, rnd)
            RESULTS.mkdir(exist_ok=True)
            cache.write_text(json.dumps({
                "state": rpc(w3, "anvil_dumpState", []), "first": first, "deployed": deployed,
                "expected": [[*k, v] for k, v in expected.items()]}))
            made = f"made in {time.perf_counter() - t0:.1f} s, kept in {cache.name}"
        else:
            first, deployed = history["first"], history["deployed"]
            expected = Counter({(to, token, amount): n for to, token, amount, n in history["expected"]})
            (work / "deployments-31337.json").write_text(json.dumps(deployed))
            made = f"loaded from {cache.name} in {time.perf_counter() - t0:.1f} s (--fresh-history to make it again)"
        last = int(rpc(w3, "eth_blockNumber", []), 16)
        print(f"history: blocks {first}..{last} ({last - first + 1}), {sum(expected.values())} transfers to users,"
              f" {made}")

        write_chains_file(work, {31337: node.url})
        # Development settings, but dev.install is never called: no faucet, no hidden sender.
        use_dev_environment(work, RATE_LIMIT_ADDRESS="1000/minute")
        from sqlmodel import select

        from wallet_app.core.db import get_session, upgrade_schema
        from wallet_app.models import Activity, ChainCursor, User
        from wallet_app.services import accounts, indexer
        from wallet_app.services import chain as chain_svc

        upgrade_schema()
        for i, address in enumerate(users):
            accounts.set_address(accounts.login_user(f"bench-{i}", f"bench{i}@example.com", "en").id, address)
        chain = chain_svc.get_chain(31337)
        with get_session() as db:  # the cursor at the first history block (a new one starts at the head)
            db.add(ChainCursor(chain_id=chain.chain_id, next_block=first, lease_owner=None, lease_until=0))
            db.commit()

        counter = WireCounter(chain_svc.web3_for(chain).provider)
        owner = indexer.new_owner()
        t0 = time.perf_counter()
        scanned = received = 0
        while True:
            counts = indexer.index_chain(chain, owner)
            scanned += counts["blocks"]
            received += counts["received"]
            if counts["blocks"] == 0:
                break
        elapsed = time.perf_counter() - t0
        fast = {"calls": dict(counter.calls), "total": counter.total, "http": counter.http}
        counter.reset()
        again = indexer.index_chain(chain, owner)["received"]
        with get_session() as db:
            rows = list(db.exec(select(Activity).where(Activity.type == "receive")))
            address_of = {u.id: u.address for u in db.exec(select(User))}
        found = Counter((address_of[r.user_id], r.token_address, int(r.amount or 0)) for r in rows)

        # The naive per-user scan, on a sample of users, over the same blocks.
        naive_w3 = Web3(Web3.HTTPProvider(node.url, request_kwargs={"timeout": 30}))
        naive_counter = WireCounter(naive_w3.provider)
        tokens = sorted(t.token_address.lower() for t in chain.tokens)
        sample = [u.lower() for u in random.Random(args.seed).sample(users, min(args.naive_users, len(users)))]
        t0 = time.perf_counter()
        naive_found: Counter = Counter()
        for user in sample:
            naive_found += naive_scan(naive_w3, user, tokens, first, last, indexer.RANGE_BLOCKS)
        naive_elapsed = time.perf_counter() - t0

    blocks = last - first + 1
    scale = args.users / len(sample)
    naive_total = naive_counter.total * scale
    per_k = fast["total"] * 1000 / blocks
    naive_per_k = naive_total * 1000 / blocks
    ratio = naive_per_k / per_k
    sampled_fast = Counter({k: v for k, v in found.items() if k[0] in sample})
    ok_found = found == expected
    if not ok_found:  # what differs, by token
        for label, c in (("expected", expected), ("found", found)):
            print(f"{label} by token: {dict(Counter(k[1] for k in c.elements()))}")
    ok_naive = naive_found == sampled_fast
    result = {
        "users": args.users, "blocks": blocks, "transfers": sum(expected.values()), "received": received,
        "again": again, "seconds": round(elapsed, 2), "blocks_per_second": round(blocks / elapsed),
        "rpc": fast, "rpc_per_1000_blocks": round(per_k, 1),
        "http_per_1000_blocks": round(fast["http"] * 1000 / blocks, 1),
        "naive_users_measured": len(sample), "naive_rpc_measured": dict(naive_counter.calls),
        "naive_http_measured": naive_counter.http, "naive_seconds_measured": round(naive_elapsed, 2),
        "naive_rpc_per_1000_blocks": round(naive_per_k, 1), "ratio": round(ratio, 1),
        "found_equal_expected": ok_found, "naive_equal_indexer": ok_naive,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "indexer.json").write_text(json.dumps(result, indent=2))
    print(f"indexer: {blocks} blocks in {elapsed:.2f} s ({blocks / elapsed:.0f} blocks/s), {received} entries"
          f" ({sum(expected.values())} expected; equal: {ok_found}), a second pass added {again}")
    print(f"indexer json-rpc: {fast['total']} calls in {fast['http']} http requests {fast['calls']}")
    print(f"indexer per 1,000 blocks: {per_k:.1f} json-rpc calls, {fast['http'] * 1000 / blocks:.1f} http requests")
    print(f"naive, measured on {len(sample)} users: {naive_counter.total} calls in {naive_counter.http} http requests"
          f" {dict(naive_counter.calls)} in {naive_elapsed:.1f} s ({blocks * len(sample) / naive_elapsed:.0f}"
          f" user-blocks/s); its findings equal the indexer's for them: {ok_naive}")
    print(f"naive for {args.users} users (x{scale:g}): {naive_total:.0f} calls, {naive_per_k:.1f} per 1,000 blocks,"
          f" about {naive_elapsed * scale:.0f} s")
    print(f"erc-20 part alone: indexer {fast['calls'].get('eth_getLogs', 0)} eth_getLogs, naive"
          f" {naive_counter.calls['eth_getLogs'] * scale:.0f}")
    print(f"run took {time.perf_counter() - started:.0f} s")
    passed = ok_found and ok_naive and again == 0 and ratio >= TARGET_RATIO
    print(f"indexer: users={args.users} blocks={blocks} bps={blocks / elapsed:.0f} rpc_per_1000={per_k:.1f}"
          f" naive_rpc_per_1000={naive_per_k:.1f} ratio={ratio:.1f}x (target >= {TARGET_RATIO:.0f}x)"
          f" {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
