"""GET /api/v1/assets for one user holding 20 tokens on each of 2 chains (two anvil nodes),
against a naive per-token balanceOf loop, in the same run.

Both variants go through the real ASGI app (session cookie, DB, service, JSON): the naive
one only swaps services.chain.balances for a loop of one balanceOf eth_call per token.
Prints JSON-RPC requests per chain for one GET /assets and the median latencies.
Targets: 1 eth_call per chain; at least 5x faster than the naive loop.

    source env.sh && python bench/balances.py [--runs 30] [--tokens 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eth_account import Account  # noqa: E402
from web3 import Web3  # noqa: E402

from bench.devstack import use_dev_environment, write_chains_file  # noqa: E402
from contracts.artifacts import artifact, selector  # noqa: E402
from contracts.deploy import DEV_DEPLOYER_KEY, _deploy_contract, _send, _w3, deploy  # noqa: E402
from wallet_app.dev.anvil import Anvil  # noqa: E402

CHAIN_IDS = (31337, 31338)
TARGET_SPEEDUP = 5.0


def setup_chain(node: Anvil, deployments_dir: Path, owner: str, n_tokens: int) -> list[str]:
    """Deploys the dev contracts plus extra test tokens up to n_tokens; mints some of each to owner."""
    deployed = deploy(node.url, deployments_dir)
    w3 = _w3(node.url)
    tokens = list(deployed["tokens"].values())
    for i in range(n_tokens - len(tokens)):
        tokens.append(_deploy_contract(w3, DEV_DEPLOYER_KEY, "TestToken", f"Bench Token {i}", f"B{i}"))
    abi = artifact("TestToken")["abi"]
    for i, token in enumerate(tokens):
        data = w3.eth.contract(address=token, abi=abi).encode_abi("mint", [owner, (i + 1) * 10**6])
        _send(w3, DEV_DEPLOYER_KEY, {"to": token, "data": data})
    return tokens


def naive_balances(chain_svc):
    """The baseline: one balanceOf eth_call per token, one after the other."""
    def balances(chain, owner, tokens):
        w3 = chain_svc.web3_for(chain)
        # balanceOf(address) calldata written directly: the baseline pays for round trips only.
        data = "0x" + selector("IERC20Full", "balanceOf").hex() + owner.lower()[2:].rjust(64, "0")
        out = {}
        for token in tokens:
            ret = w3.eth.call({"to": Web3.to_checksum_address(token), "data": data})
            out[token] = int.from_bytes(bytes(ret), "big")
        return out

    return balances


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--tokens", type=int, default=20, help="tokens per chain")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-balances-"))
    owner = Account.create().address
    with Anvil(port=0, chain_id=CHAIN_IDS[0]) as a, Anvil(port=0, chain_id=CHAIN_IDS[1]) as b:
        nodes = dict(zip(CHAIN_IDS, (a, b), strict=True))
        t0 = time.perf_counter()
        tokens = {cid: setup_chain(node, work, owner, args.tokens) for cid, node in nodes.items()}
        print(f"setup: {args.tokens} tokens on each of {len(nodes)} chains in {time.perf_counter() - t0:.1f}s")

        write_chains_file(work, {cid: node.url for cid, node in nodes.items()})
        # Development settings, but dev.install is never called: no faucet funds anyone. 40 tokens
        # added at once: past the per-user limit that is there for people.
        use_dev_environment(work, RATE_LIMIT_TOKEN_ADD="100/second", RATE_LIMIT_BALANCES="1000/second")
        from wallet_app.api import build_api
        from wallet_app.core.db import upgrade_schema
        from wallet_app.services import accounts, sessions
        from wallet_app.services import chain as chain_svc
        from wallet_app.services import tokens as tokens_svc

        upgrade_schema()
        user = accounts.login_user("bench-sub", "bench@example.com", "en")
        accounts.set_address(user.id, owner)
        for cid, addrs in tokens.items():
            for token in addrs:
                tokens_svc.add_token(user.id, cid, token)
        cookie = sessions.create_session(user.id)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            from starlette.testclient import TestClient

        # Count the JSON-RPC requests each chain's client sends (_make_request is the HTTP
        # round trip; web3 caches a composed make_request, so that one cannot be wrapped late).
        counts: dict[int, Counter] = {}
        for cfg in chain_svc.get_chains():
            provider = chain_svc.web3_for(cfg).provider
            counter = counts.setdefault(cfg.chain_id, Counter())
            real = provider._make_request
            provider._make_request = lambda m, data, real=real, counter=counter: counter.update([m]) or real(m, data)

        real_balances = chain_svc.balances
        with TestClient(build_api(), base_url="http://localhost") as client:
            client.cookies.set(sessions.SESSION_COOKIE, cookie)

            def get_assets() -> list[dict]:
                resp = client.get("/api/v1/assets")
                resp.raise_for_status()
                return resp.json()

            def timed(runs: int) -> tuple[float, list[dict]]:
                get_assets()  # warm-up
                samples = []
                for _ in range(runs):
                    t = time.perf_counter()
                    items = get_assets()
                    samples.append(time.perf_counter() - t)
                return statistics.median(samples) * 1000, items

            for c in counts.values():
                c.clear()
            items = get_assets()
            per_chain = {cid: dict(c) for cid, c in counts.items()}
            rpc_max = max(sum(c.values()) for c in counts.values())
            fast_ms, fast_items = timed(args.runs)

            chain_svc.balances = naive_balances(chain_svc)
            try:
                for c in counts.values():
                    c.clear()
                get_assets()
                naive_per_chain = {cid: dict(c) for cid, c in counts.items()}
                naive_ms, naive_items = timed(args.runs)
            finally:
                chain_svc.balances = real_balances

    expected = sum(len(v) + 1 for v in tokens.values())  # each chain's native coin is in every list too
    assert len(items) == expected, f"{len(items)} items, expected {expected}"
    assert fast_items == naive_items, "aggregated and naive balances differ"
    speedup = naive_ms / fast_ms
    print(f"items: {len(items)} ({args.tokens} tokens and the native coin x {len(tokens)} chains),"
          " equal to the naive loop's")
    print(f"json-rpc per chain, aggregated: {json.dumps(per_chain)}")
    print(f"json-rpc per chain, naive:      {json.dumps(naive_per_chain)}")
    print(f"GET /assets median of {args.runs}: aggregated {fast_ms:.2f} ms, naive loop {naive_ms:.2f} ms")
    ok = rpc_max == 1 and all(c == {"eth_call": 1} for c in per_chain.values()) and speedup >= TARGET_SPEEDUP
    print(f"balances: rpc_per_chain={rpc_max} speedup={speedup:.1f}x (target >= {TARGET_SPEEDUP:.0f}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
