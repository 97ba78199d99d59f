"""Abuse under load: 50 concurrent clients hammer /payment/available and /token/metadata for 20 s
while one user pays through the API, against anvil.

The API runs in its own process (granian, one worker, as `reflex run --env prod` serves it; free
port, throw-away SQLite in WAL mode, development sign-in, default rate limits); the hammering
clients run in another process (asyncio + httpx, one connection each, signed in as --attackers
accounts with registered addresses; each loop alternates a quote of a new random amount and a
metadata lookup). This process measures GET /api/v1/me (one request after another) first without
load (the baseline), then during the load, while the payer does what the browser does: quote,
approve (signed with eth-account, POST /tx/submit), poll the quote, sign the Pay typed data,
POST /payment/execute, poll /payment/status.

Checks (exit 1 when missed): the payment ends ok; the relayer's balance drops by exactly that
payment's gasUsed * effectiveGasPrice and its nonce by one (the load made it pay for nothing
else); no 5xx (nor dropped connection) among the hammering's answers; p99 of /me under load below 50 ms.

    source env.sh && python bench/abuse.py [--clients 50] [--seconds 20] [--attackers 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.devstack import api_process, dev_stack, sign_in  # noqa: E402

RESULTS = REPO / "bench" / "results"
TARGET_P99_MS = 50.0
PROBE_GAP = 0.01  # between two /me probes
FLOW_TIMEOUT = 120.0


def wait_until(cond, timeout: float, what: str, every: float = 0.1):
    end = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > end:
            raise TimeoutError(what)
        time.sleep(every)


def hammer(base: str, cookies: list[dict], clients: int, seconds: float, token: str, out) -> None:
    """`clients` concurrent loops until `seconds` have passed; puts {status: count} on `out`."""
    import httpx

    counts: Counter = Counter()

    async def loop(i: int, end: float) -> None:
        async with httpx.AsyncClient(base_url=base, cookies=cookies[i % len(cookies)], timeout=30) as c:
            while time.monotonic() < end:
                if i % 2:
                    what, path, params = "metadata", "/token/metadata", {"chain_id": "31337", "token_address": token}
                else:  # a new amount each time: a new quote row, if let through
                    what, path = "available", "/payment/available"
                    params = {"chain_id": "31337", "token_address": token, "amount": str(random.randrange(1, 10**12))}
                try:
                    counts[f"{what} {(await c.get(path, params=params)).status_code}"] += 1
                except httpx.HTTPError as e:
                    counts[f"{what} {type(e).__name__}"] += 1
                i += 1

    async def main() -> None:
        end = time.monotonic() + seconds
        await asyncio.gather(*(loop(i, end) for i in range(clients)))

    asyncio.run(main())
    out.put(dict(counts))


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--attackers", type=int, default=5, help="signed-in accounts shared by the clients")
    parser.add_argument("--baseline-seconds", type=float, default=5.0)
    args = parser.parse_args()
    with dev_stack("bench-abuse-") as (port, node, dep):
        return run(args, port, node, dep)


def run(args, port: int, node, dep: dict) -> int:
    from eth_account import Account
    from web3 import Web3

    from contracts.artifacts import artifact
    from contracts.deploy import DEV_DEPLOYER_KEY, FAUCET_TOKEN_UNITS
    from wallet_app.serve import relayer_process

    token = dep["tokens"]["tEUR"]  # no permit: the set-up approves (the quote offers a Permit for tUSD)
    w3 = Web3(Web3.HTTPProvider(node.url, request_kwargs={"timeout": 30}))
    payer = Account.create()
    deployer = Account.from_key(DEV_DEPLOYER_KEY)
    token_c = w3.eth.contract(address=token, abi=artifact("TestToken")["abi"])
    nonce = w3.eth.get_transaction_count(deployer.address)
    for i, tx in enumerate([{"to": payer.address, "value": 10**17, "gas": 21_000},
                            {"to": token, "data": token_c.encode_abi("mint", [payer.address, FAUCET_TOKEN_UNITS]),
                             "gas": 100_000, "value": 0}]):
        signed = deployer.sign_transaction({"chainId": 31337, "nonce": nonce + i, "gasPrice": w3.eth.gas_price, **tx})
        w3.eth.wait_for_transaction_receipt(w3.eth.send_raw_transaction(signed.raw_transaction))

    # Served as in production (reflex run --env prod: granian, one worker without Redis); payments
    # settle through the relayer process, as `make run` starts it.
    with api_process(port) as base, relayer_process():
        return measure(args, base, token, payer, w3, token_c)


def measure(args, base: str, token: str, payer, w3, token_c) -> int:
    import httpx
    from eth_account import Account
    from eth_account.messages import encode_typed_data
    from sqlmodel import select

    from wallet_app.core.config import get_settings
    from wallet_app.core.db import get_session
    from wallet_app.dev import DEV_RELAYER_KEY
    from wallet_app.models import Payment
    from wallet_app.services import payments

    def signed_in(email: str, address: str | None = None) -> httpx.Client:
        c = httpx.Client(base_url=base, timeout=60)
        sign_in(c, email, address)
        return c

    prober = signed_in("prober@example.com", Account.create().address)
    attackers = [signed_in(f"attacker{i}@example.com", Account.create().address) for i in range(args.attackers)]
    cookies = [dict(c.cookies) for c in attackers]
    payer_client = signed_in("payer@example.com", payer.address)

    def probe_me(seconds: float, slices: list | None = None) -> list[float]:
        """/me latencies (ms); `slices` gets them per 5 s as well."""
        times, start = [], time.monotonic()
        while time.monotonic() < start + seconds:
            t0 = time.perf_counter()
            prober.get("/me").raise_for_status()
            times.append((time.perf_counter() - t0) * 1000)
            if slices is not None:
                index = int((time.monotonic() - start) // 5)
                slices.extend([] for _ in range(index + 1 - len(slices)))
                slices[index].append(times[-1])
            time.sleep(PROBE_GAP)
        return times

    probe_me(1.0)  # warm-up
    baseline = probe_me(args.baseline_seconds)

    relayer_address = Account.from_key(DEV_RELAYER_KEY).address  # the server's, in development
    balance_before = w3.eth.get_balance(relayer_address)
    nonce_before = w3.eth.get_transaction_count(relayer_address)
    merchant = Account.create().address
    amount = 1_234_567
    outcome: dict = {}

    def pay() -> None:
        try:
            outcome.update(pay_flow())
        except Exception as e:  # noqa: BLE001 (reported, and counted as not ok)
            outcome.update(status="error", error=repr(e)[:300])

    def pay_flow() -> dict:
        c = payer_client
        params = {"chain_id": 31337, "token_address": token, "amount": str(amount)}
        q = c.get("/payment/available", params=params).json()
        b = q["transaction"]
        signed = payer.sign_transaction({
            "chainId": int(b["chain_id"]), "to": b["to"], "data": b["data"], "value": int(b["value"]),
            "nonce": int(b["nonce"]), "gas": int(b["gas_limit"]), "gasPrice": int(b["gas_price"])})
        c.post("/tx/submit", json={"raw_tx": "0x" + bytes(signed.raw_transaction).hex()}).raise_for_status()
        q = wait_until(lambda: (lambda x: x if x.get("available") else None)(
            c.get("/payment/available", params=params).json()), FLOW_TIMEOUT, "quote never available", 1.0)
        deadline = int(time.time()) + 300
        message = {"merchant": merchant, "token": token, "from": payer.address, "amount": amount,
                   "paymentRef": q["payment_id"], "deadline": deadline}
        typed = payments.pay_typed_data(31337, q["verifying_contract"], message)
        sig = Account.sign_message(encode_typed_data(full_message=typed), payer.key).signature
        r = c.post("/payment/execute", json={
            "chain_id": 31337, "merchant_address": merchant, "token_address": token, "amount": str(amount),
            "payment_id": q["payment_id"], "deadline": deadline, "signature": "0x" + bytes(sig).hex()})
        r.raise_for_status()
        pid = r.json()["id"]
        status = wait_until(lambda: (lambda s: s if s["status"] in ("ok", "failed") else None)(
            c.get("/payment/status", params={"id": pid}).json()), FLOW_TIMEOUT, "status never final", 1.0)
        return {"payment_id": q["payment_id"], **status}

    counts_q: multiprocessing.Queue = multiprocessing.Queue()
    load = multiprocessing.Process(target=hammer, args=(base, cookies, args.clients, args.seconds, token, counts_q))
    load.start()
    time.sleep(1.0)  # the load is on before the payer starts
    payer_thread = threading.Thread(target=pay)
    payer_thread.start()
    slices: list[list[float]] = []
    under_load = probe_me(args.seconds - 2.0, slices)
    counts = counts_q.get(timeout=args.seconds + 60)
    load.join()
    payer_thread.join(FLOW_TIMEOUT)

    payment_gas_cost, tx_hash = 0, None
    if outcome.get("payment_id"):
        with get_session() as db:
            row = db.exec(select(Payment).where(Payment.payment_id == outcome["payment_id"])).one()
            tx_hash = row.tx_hash
        receipt = w3.eth.get_transaction_receipt(tx_hash)
        payment_gas_cost = receipt["gasUsed"] * receipt["effectiveGasPrice"]
    relayer_spent = balance_before - w3.eth.get_balance(relayer_address)
    relayer_txs = w3.eth.get_transaction_count(relayer_address) - nonce_before
    merchant_paid = token_c.functions.balanceOf(merchant).call()
    base_p99, load_p99 = p99(baseline), p99(under_load)
    server_errors = sum(n for k, n in counts.items() if not k.split()[1].startswith(("2", "4")))
    settings = get_settings()  # the server's too (same environment)
    figures = {
        "clients": args.clients, "attackers": args.attackers, "seconds": args.seconds,
        "limits": {"payment_quote": settings.rate_limit_payment_quote,
                   "token_metadata": settings.rate_limit_token_metadata},
        "hammer_requests": sum(counts.values()), "hammer_statuses": dict(sorted(counts.items())),
        "hammer_failed": server_errors, "payment": outcome, "merchant_paid": merchant_paid,
        "relayer_spent_wei": relayer_spent, "payment_gas_cost_wei": payment_gas_cost, "relayer_txs": relayer_txs,
        "me_baseline_p99_ms": round(base_p99, 2), "me_baseline_median_ms": round(statistics.median(baseline), 2),
        "me_load_p99_ms": round(load_p99, 2), "me_load_median_ms": round(statistics.median(under_load), 2),
        "me_load_max_ms_per_5s": [round(max(x), 1) for x in slices if x],
        "me_probes": [len(baseline), len(under_load)],
        "load_average_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "abuse.json").write_text(json.dumps(figures, indent=2) + "\n")
    for k, v in figures.items():
        print(f"{k}: {v}")
    paid = outcome.get("status") == "ok" and merchant_paid == amount
    gas_only_payment = relayer_spent == payment_gas_cost > 0 and relayer_txs == 1
    print(f"abuse: payment={'ok' if paid else 'FAILED'} relayer_gas_only_payment={gas_only_payment} "
          f"hammer_failed={server_errors} me_p99_ms={load_p99:.1f} (target < {TARGET_P99_MS:.0f}) "
          f"baseline_p99_ms={base_p99:.1f} ratio={load_p99 / base_p99:.2f}")
    return 0 if paid and gas_only_payment and server_errors == 0 and load_p99 < TARGET_P99_MS else 1


if __name__ == "__main__":
    sys.exit(main())
