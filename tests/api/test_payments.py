"""Merchant payments through /api/v1/payment against a real anvil with the contracts deployed."""

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data
from sqlalchemy import event, update
from sqlmodel import col, select
from web3 import Web3

from contracts.artifacts import artifact
from contracts.deploy import _deploy_contract, deploy, fund
from tests.anvil_mining import mining_paused
from tests.conftest import use_env
from tests.waits import wait_until
from wallet_app import relayer as relayer_loop
from wallet_app.core.config import REPO_ROOT, get_settings
from wallet_app.core.db import get_engine, get_session
from wallet_app.dev import DEV_RELAYER_KEY
from wallet_app.dev.anvil import Anvil
from wallet_app.models import Activity, MerchantWebhook, Payment
from wallet_app.services import chain as chain_svc
from wallet_app.services import payment_watch, payments, relayer

API = "/api/v1"
RELAYER = Account.from_key(DEV_RELAYER_KEY)
# anvil's account #2 of the dev mnemonic: sends what tests need (the deployer's nonces belong
# to the dev faucet's threads).
ANVIL_KEY_2 = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"
TOKEN_ABI = artifact("TestToken")["abi"]


def use_chain(monkeypatch, chains_path, deployments_path):
    monkeypatch.setenv("CHAINS_FILE", str(chains_path))
    monkeypatch.setenv("DEPLOYMENTS_DIR", str(deployments_path))
    get_settings.cache_clear()


@pytest.fixture
def app(chain_env, app):
    """The api conftest's app, with settings pointed at the shared test anvil."""
    yield app
    relayer.forget_process_state()


@pytest.fixture
def payer(client, login, funded):
    """A signed-in user whose wallet address is a funded account (1 ETH, 1,000 tUSD)."""
    login(f"{funded.address.lower()}@example.com")
    assert client.post(f"{API}/me/address", json={"address": funded.address}).status_code == 200
    return funded


def token_of(deployed_map) -> str:
    return deployed_map["tokens"]["tUSD"]


def plain_token_of(deployed_map) -> str:
    """The test token without EIP-2612 permit: its quotes offer an approve transaction."""
    return deployed_map["tokens"]["tEUR"]


def get_quote(client, token, amount, chain_id=31337, **extra):
    r = client.get(f"{API}/payment/available", params={"chain_id": chain_id, "token_address": token,
                                                       "amount": str(amount), **extra})
    assert r.status_code == 200, r.text
    return r.json()


def sign_built(acct, built: dict) -> str:
    """Signs a built transaction as the browser does (legacy, EIP-155)."""
    tx = {"chainId": int(built["chain_id"]), "to": built["to"], "data": built["data"], "value": int(built["value"]),
          "nonce": int(built["nonce"]), "gas": int(built["gas_limit"]), "gasPrice": int(built["gas_price"])}
    return "0x" + bytes(acct.sign_transaction(tx).raw_transaction).hex()


def approve_through_api(client, w3_, acct, quote):
    r = client.post(f"{API}/tx/submit", json={"raw_tx": sign_built(acct, quote["transaction"])})
    assert r.status_code == 200, r.text
    assert w3_.eth.wait_for_transaction_receipt(r.json()["tx_hash"], timeout=30)["status"] == 1


def approve_directly(send_tx_, acct, token, spender, amount=2**256 - 1):
    data = Web3().eth.contract(abi=TOKEN_ABI).encode_abi("approve", [spender, amount])
    assert send_tx_(acct, token, data)["status"] == 1


def pay_body(acct, quote, merchant, token, amount, deadline, chain_id=31337, key=None):
    message = {"merchant": merchant, "token": token, "from": acct.address, "amount": amount,
               "paymentRef": quote["payment_id"], "deadline": deadline}
    typed = payments.pay_typed_data(chain_id, quote["verifying_contract"], message)
    sig = Account.sign_message(encode_typed_data(full_message=typed), key or acct.key).signature
    return {"chain_id": chain_id, "merchant_address": merchant, "token_address": token, "amount": str(amount),
            "payment_id": quote["payment_id"], "deadline": deadline, "signature": "0x" + bytes(sig).hex()}


def wait_status(client, pid, timeout=30.0, want=("ok", "failed"), drive=True) -> dict:
    """Polls /payment/status until its status is in `want`. The status only reads: with drive,
    this test plays the relayer process between polls (one wallet_app.relayer.run_once())."""
    end = time.monotonic() + timeout
    while True:
        r = client.get(f"{API}/payment/status", params={"id": pid})
        assert r.status_code == 200, r.text
        if r.json()["status"] in want:
            return r.json()
        assert time.monotonic() < end, f"payment {pid} still {r.json()}"
        if drive:
            relayer_loop.run_once()
        else:
            time.sleep(0.05)  # poll interval


def send_queued(chain) -> None:
    """The relayer process's sending half (relayer.send_queued): what execute queued gets its
    nonce and is sent."""
    assert relayer.send_queued(chain)["sent"] >= 1


def balance(w3_, token, who) -> int:
    return w3_.eth.contract(address=token, abi=TOKEN_ABI).functions.balanceOf(who).call()


def rows() -> list[Payment]:
    with get_session() as s:
        return list(
            s.exec(select(Payment).where(Payment.status != "quoted").order_by(col(Payment.nonce).nulls_first()))
        )


@contextlib.contextmanager
def sent_unmined(client, w3_, chain, payer, q, merchant, token, amount):
    """The payment executed and sent by the relayer with anvil's automine off (on again at the
    end): its row, its transaction in the node's pool and not mined."""
    with mining_paused(w3_):
        r = client.post(f"{API}/payment/execute",
                        json=pay_body(payer, q, merchant, token, amount, int(time.time()) + 300))
        assert r.status_code == 200, r.text
        send_queued(chain)
        (row,) = rows()
        yield row


# ---------------------------------------------------------------- the flow


def test_quote_approve_pay_status_ok(client, payer, deployed, w3):
    token, amount, merchant = plain_token_of(deployed), 2_500_000, Account.create().address
    q = get_quote(client, token, amount)
    assert q["available"] is False and q["verifying_contract"] == deployed["payment"]
    tx = q["transaction"]
    assert (tx["to"], tx["chain_id"], tx["value"]) == (token, "31337", "0")
    assert tx["data"].startswith("0x095ea7b3")  # approve(address,uint256)
    # Polls before the approve is mined hand out the same unused quote.
    assert get_quote(client, token, amount)["payment_id"] == q["payment_id"]

    approve_through_api(client, w3, payer, q)
    q2 = get_quote(client, token, amount)
    assert q["permit"] is None
    assert q2 == {**q, "available": True, "transaction": None, "reason": None}

    now = int(time.time())
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q2, merchant, token, amount, now + 300))
    assert r.status_code == 200, r.text
    assert r.json() == {"id": q["payment_id"]}
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == amount

    # A used quote is not handed out again.
    assert get_quote(client, token, amount)["payment_id"] != q["payment_id"]
    # Activity: the approve (recorded by /tx/submit) and the payment, now ok, with the relayer's tx.
    (row,) = rows()
    with get_session() as s:
        act = s.get(Activity, row.activity_id)
    assert (act.type, act.status, act.tx_hash, act.counterparty, act.amount) == (
        "payment", "ok", row.tx_hash, merchant.lower(), str(amount))
    assert json.loads(act.data) == {"payment_id": q["payment_id"]}
    with get_session() as s:
        kinds = sorted(a.type for a in s.exec(select(Activity).where(Activity.user_id == act.user_id)))
    assert kinds == ["approve", "payment"]


def waited(pid: str) -> bool:
    """Whether a status wait of this payment id (any user's) is on."""
    return any(key[1] == pid for w in list(payment_watch._watches.values()) for key in w.waiters)


def test_status_wait_is_held_until_the_relayer_settles(client, payer, deployed, w3, send_tx, monkeypatch):
    """GET /payment/status?wait=N answers pending only after N s, and ok as soon as the relayer
    has settled the payment. With Redis (TEST_REDIS=1) the relayer's announcement wakes it: the
    watch's own query is pushed out of the test's reach, so only the message can."""
    if get_settings().redis_url:
        monkeypatch.setattr(payment_watch, "REDIS_POLL_SECONDS", 600.0)
    token, amount, merchant = token_of(deployed), 1_500_000, Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, amount)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, amount, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    pid = q["payment_id"]
    assert client.get(f"{API}/payment/status", params={"id": pid, "wait": 0.3}).json() == {"status": "pending"}
    assert client.get(f"{API}/payment/status", params={"id": pid, "wait": 26}).status_code == 422  # over 25 s

    def relay_once_watched() -> None:
        wait_until(lambda: waited(pid), 10, "no waiter")
        relayer_loop.run_once()

    relaying = threading.Thread(target=relay_once_watched)
    relaying.start()
    r = client.get(f"{API}/payment/status", params={"id": pid, "wait": 20})
    relaying.join()
    assert r.json() == {"status": "ok"}
    assert balance(w3, token, merchant) == amount
    # Final answers come at once, and another user's id is still unknown to this one.
    assert client.get(f"{API}/payment/status", params={"id": pid, "wait": 20}).json() == {"status": "ok"}
    assert not waited(pid)
    r = client.get(f"{API}/payment/status", params={"id": "0x" + "cd" * 32, "wait": 20})
    assert (r.status_code, r.json()["detail"]) == (404, "unknown_payment")


def test_short_balance_offers_no_approve(client, payer, deployed):
    q = get_quote(client, token_of(deployed), 10**18)  # more than the 1,000 tUSD the payer holds
    assert (q["available"], q["transaction"], q["reason"]) == (False, None, "insufficient_balance")


def test_second_execute_does_not_pay_twice(client, payer, deployed, w3, send_tx):
    token, amount, merchant = token_of(deployed), 1_000_000, Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, amount)
    assert q["available"] is True
    body = pay_body(payer, q, merchant, token, amount, int(time.time()) + 300)
    relayer_nonce = w3.eth.get_transaction_count(RELAYER.address)
    ids = [client.post(f"{API}/payment/execute", json=body).json()["id"] for _ in range(2)]
    # Even a fresh signature (new deadline) for the same payment_id is the same payment.
    again = pay_body(payer, q, merchant, token, amount, int(time.time()) + 200)
    ids.append(client.post(f"{API}/payment/execute", json=again).json()["id"])
    assert ids == [q["payment_id"]] * 3
    assert wait_status(client, q["payment_id"])["status"] == "ok"
    assert balance(w3, token, merchant) == amount
    assert w3.eth.get_transaction_count(RELAYER.address) == relayer_nonce + 1
    # The same payment_id for another merchant is refused.
    other = pay_body(payer, q, Account.create().address, token, amount, int(time.time()) + 300)
    r = client.post(f"{API}/payment/execute", json=other)
    assert (r.status_code, r.json()["detail"]) == (409, "payment_id_used")


def test_refusals_before_relaying(client, payer, deployed, w3, send_tx, login):
    token, amount, merchant = token_of(deployed), 3_000_000, Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, amount)
    now = int(time.time())
    relayer_nonce = w3.eth.get_transaction_count(RELAYER.address)

    def refused(body, status, code):
        r = client.post(f"{API}/payment/execute", json=body)
        assert (r.status_code, r.json().get("detail")) == (status, code), r.text

    refused(pay_body(payer, q, merchant, token, amount, now + 300, key=Account.create().key), 400, "bad_signer")
    # Right key, but another verifying contract in the domain.
    refused(pay_body(payer, {**q, "verifying_contract": token}, merchant, token, amount, now + 300) | {
        "payment_id": q["payment_id"]}, 400, "bad_signer")
    refused(pay_body(payer, q, merchant, token, amount, now - 1), 400, "expired")
    refused(pay_body(payer, q, merchant, token, amount, now + 3700), 400, "invalid_deadline")
    refused(pay_body(payer, q, merchant, token, amount + 1, now + 300), 409, "quote_mismatch")
    refused(pay_body(payer, q, merchant, token, amount, now + 300) | {"signature": "0x1234"}, 400, "invalid_signature")
    refused(pay_body(payer, q, merchant, token, amount, now + 300) | {"chain_id": 1}, 400, "unsupported_chain")
    refused(pay_body(payer, {**q, "payment_id": "0x" + "ab" * 32}, merchant, token, amount, now + 300),
            404, "unknown_payment")
    r = client.get(f"{API}/payment/status", params={"id": q["payment_id"]})
    assert r.status_code == 404  # never executed
    assert w3.eth.get_transaction_count(RELAYER.address) == relayer_nonce  # nothing was sent

    # Another user cannot execute this user's quote, even with a valid signature of their own.
    good = pay_body(payer, q, merchant, token, amount, now + 300)
    login("mallory@example.com")
    other = Account.create()
    assert client.post(f"{API}/me/address", json={"address": other.address}).status_code == 200
    refused(pay_body(other, q, merchant, token, amount, now + 300), 404, "unknown_payment")
    refused(good, 404, "unknown_payment")
    assert client.get(f"{API}/payment/available", params={"chain_id": 31337, "token_address": token,
                                                          "amount": "x"}).status_code == 400


def test_quote_needs_session_and_address(client, login, deployed):
    params = {"chain_id": 31337, "token_address": token_of(deployed), "amount": "1"}
    assert client.get(f"{API}/payment/available", params=params).status_code == 401
    login("noaddress@example.com")
    r = client.get(f"{API}/payment/available", params=params)
    assert (r.status_code, r.json()["detail"]) == (409, "no_address")


def test_twenty_concurrent_payments_all_ok_with_contiguous_nonces(client, payer, deployed, w3, send_tx, monkeypatch):
    monkeypatch.setenv("PAYMENT_OPEN_QUOTES_MAX", "20")  # one user, twenty open quotes at once
    get_settings.cache_clear()
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    amounts = [1_000 + i for i in range(20)]
    quotes = [get_quote(client, token, a) for a in amounts]
    assert len({q["payment_id"] for q in quotes}) == 20
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    deadline = int(time.time()) + 300
    bodies = [pay_body(payer, q, merchant, token, a, deadline) for q, a in zip(quotes, amounts, strict=True)]
    barrier = threading.Barrier(20)

    def go(body):
        barrier.wait(timeout=10)
        return client.post(f"{API}/payment/execute", json=body)

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(go, bodies))
    assert [r.status_code for r in answers] == [200] * 20
    for q in quotes:
        assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == sum(amounts)
    nonces = [r.nonce for r in rows()]
    assert nonces == list(range(start_nonce, start_nonce + 20))
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 20


def test_a_pass_reads_its_rows_in_a_few_queries_not_one_per_payment(client, payer, deployed, w3, send_tx, chain):
    """send_queued and reconcile load a pass's payments and activity entries in one query per
    table: the session holds them weakly, so a pass that let them go re-read every row by its id
    (2 round trips a payment, what a pass of 100 spent most of its time on with PostgreSQL)."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    deadline = int(time.time()) + 300
    for a in (41, 42, 43):
        q = get_quote(client, token, a)
        assert client.post(f"{API}/payment/execute",
                           json=pay_body(payer, q, merchant, token, a, deadline)).status_code == 200
    statements: list[str] = []

    def seen(conn, cursor, statement, *_):
        statements.append(" ".join(statement.split()).lower())

    @contextlib.contextmanager
    def recorded():
        event.listen(get_engine(), "before_cursor_execute", seen)
        try:
            yield
        finally:
            event.remove(get_engine(), "before_cursor_execute", seen)

    with recorded():
        assert relayer.send_queued(chain)["sent"] == 3
    # anvil mines each as it arrives, a moment later on a loaded machine (CI once reconciled first)
    for row in rows():
        w3.eth.wait_for_transaction_receipt(row.tx_hash, timeout=30)
    with recorded():
        assert relayer.reconcile(chain)["ok"] == 3
    by_id = [s for s in statements if s.startswith("select") and re.search(r"where (payments|activities)\.id = ", s)]
    assert by_id == []
    # A fixed few per pass (PostgreSQL: 9, with the lock and the payments on their way read twice),
    # where one per payment would add 3 to 6.
    assert len([s for s in statements if s.startswith("select")]) <= 10
    assert [r.status for r in rows()] == ["ok"] * 3


@contextlib.contextmanager
def rpc_methods(monkeypatch):
    """The methods of each JSON-RPC batch the relayer module sends, batch by batch."""
    batches: list[list[str]] = []
    real = relayer._batch

    def recorded(w3_, calls):
        batches.append([method for method, _ in calls])
        return real(w3_, calls)

    monkeypatch.setattr(relayer, "_batch", recorded)
    yield batches
    monkeypatch.setattr(relayer, "_batch", real)


def sent_gas(w3_, row: Payment) -> tuple[int, int]:
    """(the relayed transaction's gas limit, the gas its receipt says it used)."""
    return w3_.eth.get_transaction(row.tx_hash)["gas"], w3_.eth.get_transaction_receipt(row.tx_hash)["gasUsed"]


def test_execute_dry_runs_pay_with_one_eth_call_within_the_cap(client, payer, deployed, send_tx, monkeypatch):
    """eth_estimateGas costs the node a dozen runs of pay() (anvil: 0.9 ms of its CPU against 0.07
    for one eth_call): execute checks with one run at the chain's cap instead."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 44)
    with rpc_methods(monkeypatch) as batches:
        r = client.post(f"{API}/payment/execute",
                        json=pay_body(payer, q, merchant, token, 44, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    assert batches == [["eth_gasPrice", "eth_getBalance", "eth_call"]]


def test_the_relayer_estimates_a_kind_once_then_checks_with_one_eth_call(client, payer, deployed, w3, send_tx,
                                                                          chain, monkeypatch):
    """A queued pay() is checked with one eth_call at the highest estimate known for its token and
    kind, and gets that estimate's gas limit; one that needs more than that is estimated after all
    and gets its own. Every limit leaves the margin over the gas the payment used."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    deadline = int(time.time()) + 300

    def relayed(amount: int) -> tuple[list[list[str]], Payment]:
        q = get_quote(client, token, amount)
        assert client.post(f"{API}/payment/execute",
                           json=pay_body(payer, q, merchant, token, amount, deadline)).status_code == 200
        with rpc_methods(monkeypatch) as batches:
            assert relayer.send_queued(chain) == {"sent": 1, "failed": 0}
        assert wait_status(client, q["payment_id"]) == {"status": "ok"}
        (row,) = [r for r in rows() if r.payment_id == q["payment_id"]]
        return batches, row

    reads = ["eth_gasPrice", "eth_getTransactionCount"]
    kind = (31337, token.lower(), False)
    batches, first = relayed(51)  # the merchant's first receipt of the token: its dearest pay()
    assert batches[0] == [*reads, "eth_estimateGas"]
    estimate = relayer._estimates[kind]
    limit, used = sent_gas(w3, first)
    assert limit == relayer.pay_gas_limit(chain, estimate) and used <= estimate

    batches, second = relayed(52)
    assert batches[0] == [*reads, "eth_call"]
    second_limit, second_used = sent_gas(w3, second)
    assert second_limit == limit and second_used * (100 + relayer.GAS_MARGIN_PERCENT) // 100 <= limit
    assert relayer._estimates[kind] == estimate

    relayer._estimates[kind] = 30_000  # below what any pay() needs: the eth_call runs out of gas
    batches, third = relayed(53)
    assert batches[:2] == [[*reads, "eth_call"], ["eth_estimateGas"]]
    own = relayer._estimates[kind]
    assert 30_000 < own
    limit, used = sent_gas(w3, third)
    assert limit == relayer.pay_gas_limit(chain, own) and used * (100 + relayer.GAS_MARGIN_PERCENT) // 100 <= limit
    assert balance(w3, token, merchant) == 51 + 52 + 53


# ---------------------------------------------------------------- the relayer across failures and restarts


def test_lost_send_is_resent_after_restart_without_a_nonce_gap(client, payer, deployed, w3, send_tx, chain,
                                                               monkeypatch):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    qa, qb, qc = (get_quote(client, token, a) for a in (11, 22, 33))
    deadline = int(time.time()) + 300
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    for q, a in ((qa, 11), (qb, 22), (qc, 33)):
        assert client.post(f"{API}/payment/execute",
                           json=pay_body(payer, q, merchant, token, a, deadline)).status_code == 200
    real_batch = relayer._send_batch

    def lossy(c, raws):
        # A: the connection drops before the node gets it (outcome unknown, nothing sent).
        # B: sent, waits in the node's queue behind A's nonce.
        # C: it reaches the node, but the process dies before recording that.
        real_batch(c, raws[1:])
        return [(relayer.SendOutcome.UNKNOWN, "ConnectionError"), (relayer.SendOutcome.SENT, ""),
                (relayer.SendOutcome.UNKNOWN, "")]

    monkeypatch.setattr(relayer, "_send_batch", lossy)
    relayer.send_queued(chain)
    monkeypatch.setattr(relayer, "_send_batch", real_batch)
    by_id = {r.payment_id: r for r in rows()}
    assert [by_id[q["payment_id"]].nonce for q in (qa, qb, qc)] == [start_nonce, start_nonce + 1, start_nonce + 2]
    assert by_id[qa["payment_id"]].sent_at is None and by_id[qa["payment_id"]].raw_tx
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce  # A's nonce holds everything up

    relayer.forget_process_state()  # "restart": the next relayer pass reconciles
    for q in (qa, qb, qc):
        assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == 66
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 3
    assert all(r.settled for r in rows())


def test_a_refused_send_keeps_its_nonce_with_a_filler(client, payer, deployed, w3, send_tx, chain, monkeypatch):
    """Given back, the nonce of a pay() that one backend refused and another took was used by the
    next payment while the first was mined after all (test_relayer_reprice)."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    qa, qb = get_quote(client, token, 5), get_quote(client, token, 6)
    deadline = int(time.time()) + 300
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    client.post(f"{API}/payment/execute", json=pay_body(payer, qa, merchant, token, 5, deadline))
    real_batch = relayer._send_batch
    monkeypatch.setattr(relayer, "_send_batch", lambda c, raws: [(relayer.SendOutcome.REJECTED, "insufficient funds")])
    assert relayer.send_queued(chain) == {"sent": 0, "failed": 1}
    monkeypatch.setattr(relayer, "_send_batch", real_batch)
    assert wait_status(client, qa["payment_id"]) == {"status": "failed", "reason": "relay_rejected: insufficient funds"}
    client.post(f"{API}/payment/execute", json=pay_body(payer, qb, merchant, token, 6, deadline))
    assert wait_status(client, qb["payment_id"]) == {"status": "ok"}
    assert [r.nonce for r in rows()] == [start_nonce, start_nonce + 1]  # the filler's, then qb's
    def filler_settled() -> bool:
        relayer.reconcile(chain)
        return rows()[0].settled

    wait_until(filler_settled, 30.0, "the filler is not settled")
    filler = w3.eth.get_transaction_receipt(rows()[0].tx_hash)
    assert (filler["status"], filler["to"], filler["gasUsed"]) == (1, RELAYER.address, 21_000)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 2  # no hole
    assert wait_status(client, qa["payment_id"]) == {"status": "failed", "reason": "relay_rejected: insufficient funds"}
    assert balance(w3, token, merchant) == 6


def test_stuck_transaction_is_replaced_with_the_same_nonce(client, payer, deployed, w3, send_tx, chain, monkeypatch):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 77)
    with sent_unmined(client, w3, chain, payer, q, merchant, token, 77) as first:
        assert wait_status(client, q["payment_id"], want=("pending",)) == {"status": "pending"}
        monkeypatch.setenv("RELAYER_STUCK_SECONDS", "0")
        get_settings.cache_clear()
        assert relayer.reconcile(chain)["replaced"] == 1
        (second,) = rows()
        assert (second.nonce, second.old_tx_hashes) == (first.nonce, first.tx_hash)
        assert second.tx_hash != first.tx_hash and int(second.gas_price) > int(first.gas_price)
        w3.provider.make_request("evm_mine", [])
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    (done,) = rows()
    assert done.tx_hash == second.tx_hash  # the replacement was mined, the original dropped
    assert balance(w3, token, merchant) == 77


def test_a_transaction_the_node_left_out_is_replaced_once_without_waiting_to_be_stuck(client, payer, deployed, w3,
                                                                                   send_tx, chain, monkeypatch):
    """anvil, sent a batch, now and then keeps one transaction as known while it is in none of its
    pools (eth_getTransactionByHash answers it, the pending count stops before it, a re-send is
    'already imported'), and mines neither it nor the later nonces queued behind it: the payments
    waited for relayer_stuck_seconds (30 s). Seen in bench/payments; the node's state here is its
    pending count (read through _node_now) as anvil answered it then."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 78)
    with sent_unmined(client, w3, chain, payer, q, merchant, token, 78) as first:
        monkeypatch.setattr(relayer, "LEFT_OUT_SECONDS", 0.0)
        # In the pool as a ready transaction (the pending count is past it): waiting is right.
        assert w3.eth.get_transaction_count(RELAYER.address, "pending") == first.nonce + 1
        assert relayer.reconcile(chain) == {"ok": 0, "failed": 0, "resent": 0, "replaced": 0, "pending": 1}
        # Known, but the pending count stops before it: replaced now, not after relayer_stuck_seconds.
        node_now = relayer._node_now

        def pending_count_lagging(w3_, address):
            node = node_now(w3_, address)
            return node._replace(pool_nonce=node.mined_nonce)

        monkeypatch.setattr(relayer, "_node_now", pending_count_lagging)
        monkeypatch.setattr(relayer, "LEFT_OUT_SECONDS", 5.0)
        assert relayer.reconcile(chain)["replaced"] == 0  # sent less than LEFT_OUT_SECONDS ago
        monkeypatch.setattr(relayer, "LEFT_OUT_SECONDS", 0.0)
        assert relayer.reconcile(chain)["replaced"] == 1
        (second,) = rows()
        assert (second.nonce, second.old_tx_hashes) == (first.nonce, first.tx_hash)
        assert int(second.gas_price) > int(first.gas_price)
        # Once: a pending count that keeps lagging does not re-price it pass after pass.
        assert relayer.reconcile(chain)["replaced"] == 0
        w3.provider.make_request("evm_mine", [])
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert rows()[0].tx_hash == second.tx_hash
    assert balance(w3, token, merchant) == 78


def test_a_mined_payment_whose_receipt_is_late_stays_pending_then_ok(client, payer, deployed, w3, send_tx, chain,
                                                                    monkeypatch):
    """A node may answer the relayer's new nonce before the receipt (anvil under load, a provider's
    lagging replica): that is no dropped payment. It once marked paid payments failed 'dropped'."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 31)
    client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 31, int(time.time()) + 300))
    send_queued(chain)
    wait_until(lambda: balance(w3, token, merchant) == 31, 30.0, "not mined")  # automine, after the send answered
    real_receipts = relayer._receipts
    monkeypatch.setattr(relayer, "_receipts", lambda w3_, hashes: {})  # the node has no receipt yet
    assert relayer.reconcile(chain)["pending"] == 1
    monkeypatch.setattr(relayer, "_known_hashes", lambda w3_, hashes: set())  # nor the transaction
    assert relayer.reconcile(chain)["pending"] == 1
    (row,) = rows()
    assert (row.status, row.settled) == ("pending", False)
    monkeypatch.setattr(relayer, "_receipts", real_receipts)
    assert relayer.reconcile(chain)["ok"] == 1
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}


def test_a_nonce_taken_by_another_transaction_fails_the_payment_as_dropped(client, payer, deployed, w3, send_tx,
                                                                          chain, monkeypatch):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 32)
    with sent_unmined(client, w3, chain, payer, q, merchant, token, 32) as row:
        # Someone else with the relayer's key: a transfer to itself, same nonce, higher price.
        foreign = RELAYER.sign_transaction({"chainId": 31337, "to": RELAYER.address, "value": 0, "gas": 21_000,
                                            "nonce": row.nonce, "gasPrice": int(row.gas_price) * 2})
        w3.eth.send_raw_transaction(foreign.raw_transaction)
        w3.provider.make_request("evm_mine", [])
    assert relayer.reconcile(chain)["pending"] == 1  # gone, but not for DROPPED_AFTER_SECONDS yet
    monkeypatch.setattr(relayer, "DROPPED_AFTER_SECONDS", 0.0)
    assert relayer.reconcile(chain)["failed"] == 1
    assert wait_status(client, q["payment_id"]) == {"status": "failed", "reason": "dropped"}
    assert balance(w3, token, merchant) == 0


def test_deadline_passing_before_mining_ends_failed(client, login, tmp_path, monkeypatch):
    """On its own chain: time travel would break the shared node's clock for other tests."""
    with Anvil(port=0, start_timeout=20) as node:
        dep = deploy(node.url, tmp_path)
        entries = json.loads((REPO_ROOT / "chains.dev.json").read_text())
        for e in entries:
            e["rpc_url"] = node.url
        (tmp_path / "chains.json").write_text(json.dumps(entries))
        use_chain(monkeypatch, tmp_path / "chains.json", tmp_path)
        acct = Account.create()
        fund(node.url, acct.address, tmp_path)
        login("late@example.com")
        assert client.post(f"{API}/me/address", json={"address": acct.address}).status_code == 200
        w3_ = Web3(Web3.HTTPProvider(node.url))
        token, merchant = plain_token_of(dep), Account.create().address
        q = get_quote(client, token, 500)
        approve_through_api(client, w3_, acct, q)
        assert get_quote(client, token, 500)["available"] is True
        w3_.provider.make_request("evm_setAutomine", [False])
        r = client.post(f"{API}/payment/execute",
                        json=pay_body(acct, q, merchant, token, 500, int(time.time()) + 300))
        assert r.status_code == 200, r.text
        send_queued(chain_svc.get_chain(31337))  # sent in time, mined after the deadline
        assert wait_status(client, q["payment_id"], want=("pending",))["status"] == "pending"
        w3_.provider.make_request("evm_increaseTime", [400])
        w3_.provider.make_request("evm_mine", [])
        assert wait_status(client, q["payment_id"]) == {"status": "failed", "reason": "expired"}
        assert balance(w3_, token, merchant) == 0
        (row,) = rows()
        assert row.settled and w3_.eth.get_transaction_receipt(row.tx_hash)["status"] == 0
        with get_session() as s:
            assert s.get(Activity, row.activity_id).status == "failed"
        chain_svc._clients.pop((31337, node.url), None)



# ---------------------------------------------------------------- the relayer's limits (issue 12)


def chains_with(monkeypatch, tmp_path, rpc_url, deployments_path, **fields):
    """chains.dev.json pointed at `rpc_url` with some fields of the chain replaced, in use."""
    entries = json.loads((REPO_ROOT / "chains.dev.json").read_text())
    for e in entries:
        e.update(rpc_url=rpc_url, **fields)
    # A new file each time: the settings then name another file, which get_chains reads at once
    # (a file rewritten in place is seen within CHAINS_CHECK_SECONDS).
    path = tmp_path / f"chains-limits-{len(list(tmp_path.glob('chains-limits-*.json')))}.json"
    path.write_text(json.dumps(entries))
    use_chain(monkeypatch, path, deployments_path)
    return chain_svc.get_chain(31337)


def all_rows() -> list[Payment]:
    with get_session() as s:
        return list(s.exec(select(Payment)))


def assert_retry_after(resp, leaves_at: int) -> None:
    """Retry-After: the seconds from the answer until `leaves_at` (epoch seconds), give or take the
    second that may have ticked between the server's clock and this one."""
    now = int(time.time())
    assert leaves_at - now <= int(resp.headers["Retry-After"]) <= leaves_at - now + 1


def refused_with(resp, status, code):
    assert (resp.status_code, resp.json().get("detail")) == (status, code), resp.text


def quote_resp(client, token, amount):
    return client.get(f"{API}/payment/available", params={"chain_id": 31337, "token_address": token,
                                                          "amount": str(amount)})


def relayer_funds(w3_) -> tuple[int, int]:
    return w3_.eth.get_transaction_count(RELAYER.address, "pending"), w3_.eth.get_balance(RELAYER.address)


@pytest.fixture
def burner(anvil_node, deployed) -> str:
    """A 'token' answering 2^255 to allowance/balanceOf whose transferFrom burns ~20M gas."""
    return _deploy_contract(Web3(Web3.HTTPProvider(anvil_node.url)), ANVIL_KEY_2, "GasBurnerToken")


def test_a_token_off_the_allow_list_is_refused_before_any_chain_read(client, payer, deployed, deployments_dir,
                                                                     burner, tmp_path, monkeypatch):
    # A node that answers nothing: any chain read would give rpc_unavailable instead.
    chains_with(monkeypatch, tmp_path, "http://127.0.0.1:1", deployments_dir)
    merchant, deadline = Account.create().address, int(time.time()) + 300
    refused_with(quote_resp(client, burner, 5), 400, "token_not_payable")
    body = pay_body(payer, {"payment_id": "0x" + "ab" * 32, "verifying_contract": deployed["payment"]},
                    merchant, burner, 5, deadline)
    refused_with(client.post(f"{API}/payment/execute", json=body), 400, "token_not_payable")
    # An allowed token, in any spelling, goes on to the chain.
    refused_with(quote_resp(client, token_of(deployed).lower(), 5), 503, "rpc_unavailable")


def test_a_gas_burning_token_is_refused_by_the_allow_list_and_by_the_gas_cap(client, payer, deployed, w3,
                                                                            anvil_node, deployments_dir, burner,
                                                                            tmp_path, monkeypatch):
    merchant, before = Account.create().address, relayer_funds(w3)
    refused_with(quote_resp(client, burner, 10), 400, "token_not_payable")
    # Allow-listed by a careless operator: the quote passes (huge allowance and balance), the
    # gas cap stops it before anything is sent.
    chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir,
                payment_tokens=["deployments:tokens.tUSD", burner])
    q = get_quote(client, burner, 10)
    assert (q["available"], q["transaction"]) == (True, None)
    body = pay_body(payer, q, merchant, burner, 10, int(time.time()) + 300)
    refused_with(client.post(f"{API}/payment/execute", json=body), 400, "payment_gas_too_high")
    assert relayer_funds(w3) == before
    assert rows() == []  # the quote was not claimed: nothing pending, nothing to reconcile


def test_a_node_gas_price_above_the_cap_pauses_payments(client, payer, deployed, w3, anvil_node, deployments_dir,
                                                       tmp_path, monkeypatch, caplog):
    token = token_of(deployed)
    q = get_quote(client, token, 10)
    chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, max_gas_price_wei=1)
    with caplog.at_level("WARNING", logger="wallet_app.services.relayer"):
        refused_with(quote_resp(client, token, 10), 400, "payments_unavailable")
        body = pay_body(payer, q, Account.create().address, token, 10, int(time.time()) + 300)
        refused_with(client.post(f"{API}/payment/execute", json=body), 400, "payments_unavailable")
    messages = [r.getMessage() for r in caplog.records]  # one per pause, not one per refused request
    assert len(messages) == 1 and all(
        re.fullmatch(r"payments paused on chain 31337: gas price [1-9]\d* above the cap 1", m) for m in messages
    ), messages


def test_re_pricing_a_stuck_transaction_stays_under_the_caps(client, payer, deployed, w3, send_tx, anvil_node,
                                                             deployments_dir, tmp_path, monkeypatch, caplog):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 88)
    with sent_unmined(client, w3, chain_svc.get_chain(31337), payer, q, merchant, token, 88) as first:
        old = int(first.gas_price)
        use_env(monkeypatch, RELAYER_STUCK_SECONDS=0)
        # An absolute cap 5% above the stuck price: no room for the +10% nodes require.
        chain = chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir,
                            max_gas_price_wei=old * 105 // 100)
        with caplog.at_level("WARNING", logger="wallet_app.services.relayer"):
            assert relayer.reconcile(chain)["replaced"] == 0
        assert [r.getMessage() for r in caplog.records] == [
            f"payment {first.payment_id} (nonce {first.nonce}) stuck at gas price {old}: "
            "the chain's cap leaves no room to re-price"]
        (same,) = rows()
        assert (same.tx_hash, same.gas_price) == (first.tx_hash, first.gas_price)
        # A multiple of the node's price below the usual +25%: the replacement is priced at the cap.
        chain = chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, max_gas_price_multiple=1.2)
        now_price = w3.eth.gas_price
        assert relayer.reconcile(chain)["replaced"] == 1
        (second,) = rows()
        assert int(second.gas_price) == min(int(now_price * 1.2), chain.max_gas_price_wei)
        assert old * 110 // 100 < int(second.gas_price) < old * 125 // 100
        # The hourly budget counts the replacement's price from now on (gas limit x price until mined).
        assert second.gas_cost_wei == chain_svc.decode_raw_tx(second.raw_tx).gas_limit * int(second.gas_price)
        w3.provider.make_request("evm_mine", [])
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}


def test_deadline_between_a_minute_and_an_hour_ahead(client, payer, deployed, w3, send_tx):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 99)
    before = relayer_funds(w3)
    now = int(time.time())
    refused_with(client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 99, now + 59)),
                 400, "invalid_deadline")
    refused_with(client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 99, now + 3660)),
                 400, "invalid_deadline")
    assert relayer_funds(w3) == before
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 99, int(time.time()) + 75))
    assert r.status_code == 200, r.text
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}


def test_quote_quota_counts_new_quotes_not_polls(client, payer, deployed, monkeypatch):
    use_env(monkeypatch, PAYMENT_QUOTES_PER_HOUR=3)
    token = token_of(deployed)
    ids = [get_quote(client, token, a)["payment_id"] for a in (1, 2, 3)]
    for _ in range(5):  # the 1 s polls after an approve: the same open quote, not a new one
        assert get_quote(client, token, 2)["payment_id"] == ids[1]
    first = min(r.created_at for r in all_rows())
    refused = quote_resp(client, token, 4)
    refused_with(refused, 429, "payment_quota_exceeded")
    assert_retry_after(refused, first + 3600)  # when the oldest of the three leaves the hour
    assert get_quote(client, token, 3)["payment_id"] == ids[2]


def test_open_quote_cap(client, payer, deployed, w3, send_tx, monkeypatch):
    use_env(monkeypatch, PAYMENT_OPEN_QUOTES_MAX=2)
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q1, _q2 = get_quote(client, token, 1), get_quote(client, token, 2)
    refused = quote_resp(client, token, 3)
    refused_with(refused, 429, "too_many_open_quotes")
    first = min(r.created_at for r in all_rows())
    assert_retry_after(refused, first + get_settings().payment_quote_ttl_seconds)  # the oldest quote's expiry
    # Paying one closes it: room for one more.
    assert client.post(f"{API}/payment/execute",
                       json=pay_body(payer, q1, merchant, token, 1, int(time.time()) + 300)).status_code == 200
    assert get_quote(client, token, 3)["available"] is True
    refused_with(quote_resp(client, token, 4), 429, "too_many_open_quotes")


def quoted_payments(client, payer, deployed, send_tx_, amounts) -> tuple[str, str, list[dict], list[dict]]:
    """(token, merchant, quotes, execute bodies) of payments of these amounts of tUSD by `payer`,
    its allowance given directly, to a new merchant."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx_, payer, token, deployed["payment"])
    quotes = [get_quote(client, token, a) for a in amounts]
    deadline = int(time.time()) + 300
    bodies = [pay_body(payer, q, merchant, token, a, deadline) for q, a in zip(quotes, amounts, strict=True)]
    return token, merchant, quotes, bodies


def paid_an_hour_ago(client, quote, body) -> int:
    """Executes one payment (the first row), waits until it is ok, then moves every claim out of
    this hour's spend. -> what its execute reserved (max_pay_gas x the dry run's price), read
    before it was mined (then it is what it cost)."""
    assert client.post(f"{API}/payment/execute", json=body).status_code == 200
    reserved = rows()[0].gas_cost_wei
    assert wait_status(client, quote["payment_id"]) == {"status": "ok"}
    with get_session() as s:
        s.execute(update(Payment).values(claimed_at=col(Payment.claimed_at) - 3601))
        s.commit()
    return reserved


def test_execute_quota(client, payer, deployed, w3, send_tx, monkeypatch):
    use_env(monkeypatch, PAYMENT_EXECUTES_PER_HOUR=2)
    token, merchant, quotes, bodies = quoted_payments(client, payer, deployed, send_tx, (1, 2, 3))
    for body in bodies[:2]:
        assert client.post(f"{API}/payment/execute", json=body).status_code == 200
    before = relayer_funds(w3)
    refused = client.post(f"{API}/payment/execute", json=bodies[2])
    refused_with(refused, 429, "payment_quota_exceeded")
    assert_retry_after(refused, min(r.claimed_at for r in rows()) + 3600)  # the first execute leaves the hour
    # A repeat of an executed payment is not a new execute: the same id, nothing sent.
    assert client.post(f"{API}/payment/execute", json=bodies[0]).json() == {"id": quotes[0]["payment_id"]}
    assert relayer_funds(w3)[0] == before[0]
    for q in quotes[:2]:
        assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == 3


def held_at_a_barrier(monkeypatch, module, name: str, parties: int) -> None:
    """`module.name` waits until `parties` callers are in it: every request has passed the early
    quota check before any writes, as requests racing on two workers may."""
    barrier, real = threading.Barrier(parties, timeout=10), getattr(module, name)

    def held(*args, **kwargs):
        barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, held)


def test_concurrent_executes_keep_to_the_quota(client, payer, deployed, w3, send_tx, monkeypatch):
    use_env(monkeypatch, PAYMENT_EXECUTES_PER_HOUR=2)
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    amounts = (1, 2, 3, 4)
    quotes = [get_quote(client, token, a) for a in amounts]
    deadline = int(time.time()) + 300
    bodies = [pay_body(payer, q, merchant, token, a, deadline) for q, a in zip(quotes, amounts, strict=True)]
    held_at_a_barrier(monkeypatch, relayer, "ready_and_dry_run", len(bodies))  # after the early check
    with ThreadPoolExecutor(len(bodies)) as pool:
        answers = list(pool.map(lambda body: client.post(f"{API}/payment/execute", json=body), bodies))
    assert sorted((r.status_code, r.json().get("detail")) for r in answers) == [
        (200, None), (200, None), (429, "payment_quota_exceeded"), (429, "payment_quota_exceeded")]
    paid = [q for q, r in zip(quotes, answers, strict=True) if r.status_code == 200]
    for q in paid:
        assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    # The refused ones left nothing behind: still quoted, no activity entry.
    assert sorted(r.status for r in all_rows()) == ["ok", "ok", "quoted", "quoted"]
    with get_session() as s:
        assert len(list(s.exec(select(Activity).where(Activity.type == "payment")))) == 2


def test_concurrent_quotes_keep_to_the_quota(client, payer, deployed, monkeypatch):
    use_env(monkeypatch, PAYMENT_QUOTES_PER_HOUR=2)
    token = token_of(deployed)
    held_at_a_barrier(monkeypatch, relayer, "check_ready", 4)  # after the early check, before the write
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda a: quote_resp(client, token, a), (1, 2, 3, 4)))
    assert sorted((r.status_code, r.json().get("detail")) for r in answers) == [
        (200, None), (200, None), (429, "payment_quota_exceeded"), (429, "payment_quota_exceeded")]
    assert len(all_rows()) == 2


def test_concurrent_executes_keep_to_the_relayer_budget(client, payer, deployed, w3, send_tx, anvil_node,
                                                      deployments_dir, tmp_path, monkeypatch):
    _token, _merchant, quotes, bodies = quoted_payments(client, payer, deployed, send_tx, (1, 2, 3, 4, 5))
    # One payment first, to learn what an execute reserves, then out of this hour's spend.
    chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, relayer_max_spend_wei_per_hour=10**18)
    reserved = paid_an_hour_ago(client, quotes[0], bodies[0])
    # Room for two claims (the second starts under the budget), not three: 1.5 reservations, all
    # of it this one user's to spend (test_one_user_may_spend_a_share_of_the_budget).
    use_env(monkeypatch, PAYMENT_USER_BUDGET_PERCENT=100)
    chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir,
                relayer_max_spend_wei_per_hour=reserved * 3 // 2)
    held_at_a_barrier(monkeypatch, payments, "_payable_token_info", 4)  # every budget check passed, no claim yet
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda body: client.post(f"{API}/payment/execute", json=body), bodies[1:]))
    assert sorted((r.status_code, r.json().get("detail")) for r in answers) == [
        (200, None), (200, None), (400, "payments_unavailable"), (400, "payments_unavailable")]
    assert sorted(r.status for r in all_rows()) == ["ok", "pending", "pending", "quoted", "quoted"]


def test_one_user_may_spend_a_share_of_the_budget(client, payer, deployed, w3, send_tx, anvil_node,
                                                  deployments_dir, tmp_path, monkeypatch):
    """One account paying itself 1 unit 30 times an hour (a permit needs no ETH) spent the whole
    budget, and payments paused for everyone (an audit): a user's payments of the hour may reserve
    PAYMENT_USER_BUDGET_PERCENT of it (by default 10: one budget, ten users' worth), then 429; the
    first payment of the hour always may."""
    token, merchant, quotes, bodies = quoted_payments(client, payer, deployed, send_tx, (1, 2, 3))
    chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, relayer_max_spend_wei_per_hour=10**18)
    reserved = paid_an_hour_ago(client, quotes[0], bodies[0])
    # A budget of ten reservations and a share of 1 %: a tenth of one, under what a mined payment costs
    # (the relayer brings a reservation down to the real cost: about a quarter of it).
    use_env(monkeypatch, PAYMENT_USER_BUDGET_PERCENT=1)
    chain = chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir,
                        relayer_max_spend_wei_per_hour=reserved * 10)
    assert client.post(f"{API}/payment/execute", json=bodies[1]).status_code == 200
    r = client.post(f"{API}/payment/execute", json=bodies[2])
    refused_with(r, 429, "payment_quota_exceeded")
    assert int(r.headers["Retry-After"]) == 3600
    relayer.check_budget(chain)  # the budget has room: the others' payments go on
    assert [row.status for row in all_rows() if row.payment_id == quotes[2]["payment_id"]] == ["quoted"]


def test_relayer_below_its_balance_floor_refuses_payments(client, payer, deployed, w3, send_tx,
                                                         monkeypatch, caplog):
    token = token_of(deployed)
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 7)  # while the relayer still had funds
    poor = Account.create()
    send_tx(Account.from_key(ANVIL_KEY_2), poor.address, value=10**15)  # 0.001 ETH, under the default floor of 0.01 ETH
    key_hex = "0x" + bytes(poor.key).hex()
    use_env(monkeypatch, RELAYER_PRIVATE_KEY=key_hex)
    with caplog.at_level("WARNING", logger="wallet_app.services.relayer"):
        refused_with(quote_resp(client, token, 7), 400, "payments_unavailable")
        body = pay_body(payer, q, Account.create().address, token, 7, int(time.time()) + 300)
        refused_with(client.post(f"{API}/payment/execute", json=body), 400, "payments_unavailable")
        for _ in range(5):
            refused_with(quote_resp(client, token, 7), 400, "payments_unavailable")
        said = [f"payments paused on chain 31337: relayer {poor.address} holds {10**15} wei, below the floor {10**16}"]
        assert [r.getMessage() for r in caplog.records] == said  # once, not once per refused request
        monkeypatch.setattr(relayer, "PAUSED_WARN_SECONDS", 0)  # its time come: said again
        refused_with(quote_resp(client, token, 7), 400, "payments_unavailable")
    assert [r.getMessage() for r in caplog.records] == said * 2
    assert key_hex[2:] not in caplog.text
    assert w3.eth.get_balance(poor.address) == 10**15 and w3.eth.get_transaction_count(poor.address) == 0
    # Topped up above the floor: payments are available again.
    send_tx(Account.from_key(ANVIL_KEY_2), poor.address, value=10**16)
    assert quote_resp(client, token, 7).status_code == 200


def test_the_relayer_budget_pauses_new_payments_and_queued_ones_still_settle(client, payer, deployed, w3, send_tx,
                                                                          anvil_node, deployments_dir, tmp_path,
                                                                          monkeypatch, caplog):
    token, merchant, quotes, bodies = quoted_payments(client, payer, deployed, send_tx, (1, 2, 3))
    # A budget that two payments' reservations fill: each counts max_pay_gas (300000) x the gas
    # price of its dry run from its claim (nothing is mined until the test drives the relayer).
    chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, relayer_max_spend_wei_per_hour=10**18)
    for body in bodies[:2]:
        r = client.post(f"{API}/payment/execute", json=body)
        assert r.status_code == 200, r.text
    reserved = [row.gas_cost_wei for row in rows()]
    assert all(c > 0 and c % 300_000 == 0 for c in reserved), reserved
    chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, relayer_max_spend_wei_per_hour=sum(reserved))
    before = relayer_funds(w3)
    with caplog.at_level("WARNING", logger="wallet_app.services.relayer"):
        refused_with(client.post(f"{API}/payment/execute", json=bodies[2]), 400, "payments_unavailable")
        refused_with(quote_resp(client, token, 3), 400, "payments_unavailable")  # a poll of an open quote
        refused_with(quote_resp(client, token, 4), 400, "payments_unavailable")  # a new one
    # One warning, not one per refusal.
    assert [r.getMessage() for r in caplog.records] == [
        f"payments paused on chain 31337: the relayer spent {sum(reserved)} wei in the last hour, "
        f"its budget is {sum(reserved)}"]
    assert relayer_funds(w3) == before

    # The two accepted before the budget was reached are still sent, and settle.
    for q in quotes[:2]:
        assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == 3
    settled = rows()
    costs = [(lambda rc: rc["gasUsed"] * rc["effectiveGasPrice"])(w3.eth.get_transaction_receipt(row.tx_hash))
             for row in settled]
    assert [row.gas_cost_wei for row in settled] == costs  # what they really cost, now
    assert sum(costs) < sum(reserved)  # under the budget again: payments resume
    assert get_quote(client, token, 3)["payment_id"] == quotes[2]["payment_id"]

    # A budget that this hour's spend reaches, exactly: paused (no second warning within the hour)...
    chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, relayer_max_spend_wei_per_hour=sum(costs))
    refused_with(quote_resp(client, token, 3), 400, "payments_unavailable")
    assert len([r for r in caplog.records if "payments paused" in r.getMessage()]) == 1
    # ... until the hour moves on past those payments.
    with get_session() as s:
        s.execute(update(Payment).values(claimed_at=col(Payment.claimed_at) - 3601))
        s.commit()
    assert get_quote(client, token, 3)["payment_id"] == quotes[2]["payment_id"]
    r = client.post(f"{API}/payment/execute", json=bodies[2])
    assert r.status_code == 200, r.text
    assert wait_status(client, quotes[2]["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == 6


# ---------------------------------------------------------------- someone else with the same paymentRef


def send_from_mempool_watcher(w3_, acct, to, data, gas_price) -> str:
    """Sends without waiting (automine is off): a front-runner outbidding the relayer's gas price."""
    tx = {"to": to, "data": data, "value": 0, "chainId": 31337, "gas": 300_000, "gasPrice": gas_price,
          "nonce": w3_.eth.get_transaction_count(acct.address, "pending")}
    return "0x" + bytes(w3_.eth.send_raw_transaction(acct.sign_transaction(tx).raw_transaction)).hex()


def paid_logs(w3_, contract_address, ref, *indexed) -> list[str]:
    """Paid events by (paymentRef[, merchant[, from]]), as a merchant would filter them -> tx hashes."""
    topic = lambda a: "0x" + "00" * 12 + a.lower()[2:]  # noqa: E731
    event = chain_svc.contract("NewblPayment2").events.Paid()
    logs = w3_.eth.get_logs({"address": contract_address, "fromBlock": 0,
                             "topics": [event.topic, ref, *map(topic, indexed)]})
    return ["0x" + bytes(log["transactionHash"]).hex() for log in logs]


def test_front_running_the_ref_with_a_junk_token_changes_nothing_for_the_user(client, payer, deployed, w3, send_tx,
                                                                               chain):
    token, merchant, amount = token_of(deployed), Account.create().address, 4_000
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, amount)
    # The attacker: some ETH, 1 wei of its own junk token approved to the payment contract.
    funder, attacker = Account.from_key(ANVIL_KEY_2), Account.create()
    send_tx(funder, attacker.address, value=10**17)
    junk = _deploy_contract(w3, ANVIL_KEY_2, "TestToken", "Junk", "JUNK")
    erc20 = Web3().eth.contract(abi=TOKEN_ABI)
    send_tx(funder, junk, erc20.encode_abi("mint", [attacker.address, 1]))
    send_tx(attacker, junk, erc20.encode_abi("approve", [deployed["payment"], 1]))
    pay_abi = Web3().eth.contract(abi=artifact("NewblPayment2")["abi"])
    relayer_before = w3.eth.get_balance(RELAYER.address)

    with sent_unmined(client, w3, chain, payer, q, merchant, token, amount) as row:
        # Watching the mempool: the relayer's pending pay() shows the ref; the attacker pays
        # 1 wei of junk with it, signed and sent by itself, at a higher gas price.
        pending = w3.eth.get_transaction(row.tx_hash)
        _fn, args = pay_abi.decode_function_input(pending["input"])
        ref = args["p"]["paymentRef"]
        theirs = {"merchant": merchant, "token": junk, "from": attacker.address, "amount": 1,
                  "paymentRef": "0x" + ref.hex(), "deadline": int(time.time()) + 300}
        sig = Account.sign_message(encode_typed_data(full_message=payments.pay_typed_data(
            31337, deployed["payment"], theirs)), attacker.key).signature
        data = pay_abi.encode_abi("pay", [(merchant, junk, attacker.address, 1, ref, theirs["deadline"]), sig])
        attack = send_from_mempool_watcher(w3, attacker, deployed["payment"], data, pending["gasPrice"] * 2)
        w3.provider.make_request("evm_mine", [])
    attack_receipt = w3.eth.get_transaction_receipt(attack)
    ours = w3.eth.get_transaction_receipt(row.tx_hash)
    assert attack_receipt["status"] == 1 and attack_receipt["blockNumber"] == ours["blockNumber"]
    assert attack_receipt["transactionIndex"] < ours["transactionIndex"]  # the attacker went first

    assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == amount
    # The relayer paid for the user's pay() only.
    assert relayer_before - w3.eth.get_balance(RELAYER.address) == ours["gasUsed"] * ours["effectiveGasPrice"]
    # A merchant matching on (ref, merchant, payer) sees exactly the user's payment.
    assert paid_logs(w3, deployed["payment"], q["payment_id"], merchant, payer.address) == [row.tx_hash]
    assert sorted(paid_logs(w3, deployed["payment"], q["payment_id"], merchant)) == sorted([row.tx_hash, attack])


def test_the_same_signed_payment_submitted_by_someone_else_first_is_ok(client, payer, deployed, w3, send_tx, chain):
    """Someone copies the relayer's pending pay() (the user's own signature) and gets it mined
    first: the relayer's transaction reverts Replayed, but the user's payment is made: ok."""
    token, merchant, amount = token_of(deployed), Account.create().address, 5_000
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, amount)
    copier = Account.from_key(ANVIL_KEY_2)
    with sent_unmined(client, w3, chain, payer, q, merchant, token, amount) as row:
        pending = w3.eth.get_transaction(row.tx_hash)
        copy = send_from_mempool_watcher(w3, copier, deployed["payment"], pending["input"].to_0x_hex(),
                                         pending["gasPrice"] * 2)
        w3.provider.make_request("evm_mine", [])
    assert w3.eth.get_transaction_receipt(row.tx_hash)["status"] == 0  # ours: Replayed
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == amount
    (done,) = rows()
    assert (done.tx_hash, done.old_tx_hashes) == (copy, row.tx_hash)
    with get_session() as s:
        assert (s.get(Activity, done.activity_id).status, s.get(Activity, done.activity_id).tx_hash) == ("ok", copy)


def test_a_queued_payment_someone_else_got_mined_first_is_ok_not_failed_replayed(client, payer, deployed, w3,
                                                                                  send_tx, chain, monkeypatch):
    """The payer's signed Pay mined by another account before the relayer's pass (or by a
    transaction of the relayer's own that the row no longer holds): its check reverts Replayed,
    and the payment was failed 'replayed', no hash and no webhook, while the merchant was paid."""
    token, merchant, amount = token_of(deployed), Account.create().address, 6_000
    use_env(monkeypatch, MERCHANT_WEBHOOK_URL="http://127.0.0.1:9/hooks", MERCHANT_WEBHOOK_SECRET="s" * 32,
            MERCHANT_WEBHOOK_MERCHANTS=merchant)
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, amount)
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, amount, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    (queued,) = rows()
    copier = Account.from_key(ANVIL_KEY_2)
    copy = send_from_mempool_watcher(w3, copier, deployed["payment"], relayer._queued_call(queued), w3.eth.gas_price)
    assert w3.eth.wait_for_transaction_receipt(copy, timeout=30)["status"] == 1
    assert relayer.send_queued(chain) == {"sent": 0, "failed": 0}
    assert wait_status(client, q["payment_id"], drive=False) == {"status": "ok"}
    (done,) = rows()
    assert (done.settled, done.tx_hash, done.nonce) == (True, copy, None)
    with get_session() as s:
        assert (s.get(Activity, done.activity_id).status, s.get(Activity, done.activity_id).tx_hash) == ("ok", copy)
        (hook,) = s.exec(select(MerchantWebhook)).all()
    event_id = f"evt_31337_{q['payment_id']}_{payer.address.lower()}"
    assert (hook.event_id, json.loads(hook.payload)["tx_hash"]) == (event_id, copy)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce  # the relayer sent nothing
    assert balance(w3, token, merchant) == amount


# ---------------------------------------------------------------- the relayer on its own (issue 13)


def test_status_only_reads(client, payer, deployed, w3, send_tx, chain):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 17)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 17, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    (queued,) = rows()
    assert (queued.status, queued.nonce, queued.tx_hash) == ("pending", None, None)  # execute only queues
    assert wait_status(client, q["payment_id"], drive=False, want=("pending",)) == {"status": "pending"}
    assert rows()[0].model_dump() == queued.model_dump()  # a poll sends nothing
    send_queued(chain)
    (before,) = rows()
    assert w3.eth.wait_for_transaction_receipt(before.tx_hash, timeout=30)["status"] == 1  # mined (automine)
    for _ in range(3):  # however often it is asked, the status only reports what the relayer recorded
        assert wait_status(client, q["payment_id"], want=("pending",)) == {"status": "pending"}
    (after,) = rows()
    assert after.model_dump() == before.model_dump()
    assert relayer_loop.run_once()["ok"] == 1  # the relayer's pass settles it
    assert wait_status(client, q["payment_id"], drive=False) == {"status": "ok"}


def test_the_relayer_process_settles_payments_on_its_own(client, payer, deployed, w3, send_tx, monkeypatch):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 19)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 19, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    monkeypatch.setenv("RELAYER_INTERVAL_SECONDS", "0.2")
    # The test's settings (DATABASE_URL, CHAINS_FILE, DEV_MODE, ...) are in os.environ: inherited.
    proc = subprocess.Popen([sys.executable, "-m", "wallet_app.relayer"], cwd=REPO_ROOT)
    try:
        assert wait_status(client, q["payment_id"], drive=False) == {"status": "ok"}
        (row,) = rows()
        assert row.settled and balance(w3, token, merchant) == 19
    finally:
        proc.terminate()
        assert proc.wait(20) == 0  # SIGTERM: ends its pass and exits cleanly


def test_two_relayer_processes_racing_fifty_payments(client, payer, deployed, w3, send_tx, chain, monkeypatch):
    for name in ("PAYMENT_OPEN_QUOTES_MAX", "PAYMENT_QUOTES_PER_HOUR", "PAYMENT_EXECUTES_PER_HOUR",
                 "PAYMENT_USER_BUDGET_PERCENT"):
        monkeypatch.setenv(name, "100")
    get_settings.cache_clear()
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    amounts = [2_000 + i for i in range(50)]
    quotes = [get_quote(client, token, a) for a in amounts]
    deadline = int(time.time()) + 300
    # The executes queue the payments; the two relayer processes below relay them.
    for q, a in zip(quotes, amounts, strict=True):
        r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, a, deadline))
        assert r.status_code == 200, r.text
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    worker = [sys.executable, str(REPO_ROOT / "tests" / "api" / "relay_worker.py"), "31337"]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}  # the test's settings, and the repo importable
    procs = [subprocess.Popen(worker, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        outs = [p.communicate(timeout=120)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0, 0]
    assert sum(int(out.split()[-1]) for out in outs) == 50  # every payment relayed by one of them
    for q in quotes:
        assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    done = rows()
    assert [r.nonce for r in done] == list(range(start_nonce, start_nonce + 50))  # contiguous, none twice
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 50
    assert all(r.settled and not r.old_tx_hashes for r in done)  # one transaction each
    assert balance(w3, token, merchant) == sum(amounts)  # every payment paid exactly once


def test_a_refused_send_behind_a_later_nonce_is_filled_not_left_as_a_hole(client, payer, deployed, w3, send_tx,
                                                                          chain, monkeypatch):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    qa, qb = get_quote(client, token, 8), get_quote(client, token, 9)
    deadline = int(time.time()) + 300
    for q, a in ((qa, 8), (qb, 9)):
        assert client.post(f"{API}/payment/execute",
                           json=pay_body(payer, q, merchant, token, a, deadline)).status_code == 200
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    real_batch = relayer._send_batch

    def a_refused_b_sent(c, raws):  # pipelined: both got their nonces; A's send is refused, B's is not
        return [(relayer.SendOutcome.REJECTED, "insufficient funds"), *real_batch(c, raws[1:])]

    monkeypatch.setattr(relayer, "_send_batch", a_refused_b_sent)
    assert relayer.send_queued(chain) == {"sent": 1, "failed": 1}
    monkeypatch.setattr(relayer, "_send_batch", real_batch)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce  # B waits behind A's nonce
    assert wait_status(client, qa["payment_id"], drive=False) == {"status": "failed",
                                                                  "reason": "relay_rejected: insufficient funds"}
    assert wait_status(client, qb["payment_id"]) == {"status": "ok"}  # the relayer sent the filler
    relayer_loop.run_once()  # the pass after the filler was mined sees its receipt
    assert [(r.nonce, r.settled) for r in rows()] == [(start_nonce, True), (start_nonce + 1, True)]
    assert wait_status(client, qa["payment_id"]) == {"status": "failed", "reason": "relay_rejected: insufficient funds"}
    assert balance(w3, token, merchant) == 9


def test_a_send_beaten_by_a_relayer_pass_re_sending_the_same_tx_counts_as_sent(client, payer, deployed, w3, send_tx,
                                                                               chain, monkeypatch):
    """The row is stored with its signed tx before the send; another relayer pass in between
    finds it unknown to the node and sends it first. The later send's 'nonce too low' is that
    same tx: no second pay(), no nonce given up."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 23)
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 23, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    real_batch = relayer._send_batch

    def another_pass_first(c, raws):
        assert relayer.reconcile(chain)["resent"] == 1
        tx_hash = "0x" + Web3.keccak(hexstr=raws[0]).hex().removeprefix("0x")
        assert w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)["status"] == 1  # mined: the nonce is used
        return real_batch(c, raws)

    monkeypatch.setattr(relayer, "_send_batch", another_pass_first)
    assert relayer.send_queued(chain) == {"sent": 1, "failed": 0}
    monkeypatch.setattr(relayer, "_send_batch", real_batch)
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    (row,) = rows()
    assert (row.nonce, row.old_tx_hashes, row.settled) == (start_nonce, None, True)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 1  # one transaction, no second pay()
    assert balance(w3, token, merchant) == 23


def test_payments_past_the_payers_allowance_are_held_back_not_sent_to_revert(client, payer, deployed, w3, send_tx,
                                                                               chain):
    """Each execute's dry run sees the chain without the payer's other queued payments: with an
    allowance for one, both of two pass it. The relayer sends the first and holds the second back
    until the first is final; checked again then, it fails without a nonce, and the relayer has
    paid for no reverted pay()."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"], amount=40)
    qa, qb = get_quote(client, token, 31), get_quote(client, token, 32)
    deadline = int(time.time()) + 300
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    for q, amount in ((qa, 31), (qb, 32)):
        assert client.post(f"{API}/payment/execute",
                           json=pay_body(payer, q, merchant, token, amount, deadline)).status_code == 200
    assert relayer.send_queued(chain) == {"sent": 1, "failed": 0}
    held, sent = rows()
    assert [(r.payment_id, r.nonce is None) for r in (held, sent)] == [(qb["payment_id"], True),
                                                                       (qa["payment_id"], False)]
    w3.eth.wait_for_transaction_receipt(sent.tx_hash, timeout=30)  # automine, later on a loaded machine
    assert relayer.reconcile(chain)["ok"] == 1
    assert relayer.send_queued(chain) == {"sent": 0, "failed": 1}
    assert wait_status(client, qb["payment_id"], drive=False) == {"status": "failed",
                                                                   "reason": "insufficient_allowance"}
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 1  # no reverted pay() paid for
    assert balance(w3, token, merchant) == 31


def test_a_payment_waits_while_the_payers_earlier_one_is_on_its_way(client, payer, deployed, w3, send_tx, chain):
    """Sent and not yet final, the first payment still owes the allowance: a second one it leaves
    uncovered waits for it, however many passes that takes, and goes once the first has ended
    without taking the allowance. The first's transaction is left out of the chain here (its row
    says sent), so the chain shows the allowance untouched and only the hold keeps the second."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"], amount=40)
    qa, qb = get_quote(client, token, 31), get_quote(client, token, 32)
    deadline = int(time.time()) + 300
    execute = {q["payment_id"]: pay_body(payer, q, merchant, token, a, deadline) for q, a in ((qa, 31), (qb, 32))}
    assert client.post(f"{API}/payment/execute", json=execute[qa["payment_id"]]).status_code == 200
    with get_session() as db:
        (a,) = rows()
        # Another relayer's nonce: this relayer's next nonce stays its own.
        a.relayer_address, a.nonce, a.raw_tx, a.tx_hash = "0x" + "11" * 20, 7, "0x", "0x" + "ab" * 32
        db.add(a)
        db.commit()
    assert client.post(f"{API}/payment/execute", json=execute[qb["payment_id"]]).status_code == 200
    for _ in range(2):
        assert relayer.send_queued(chain) == {"sent": 0, "failed": 0}
        assert [r.nonce for r in rows() if r.payment_id == qb["payment_id"]] == [None]
    with get_session() as db:
        a = db.get(Payment, a.id)
        a.status, a.reason, a.settled = "failed", "dropped", True
        db.add(a)
        db.commit()
    assert relayer.send_queued(chain) == {"sent": 1, "failed": 0}
    assert wait_status(client, qb["payment_id"]) == {"status": "ok"}
    assert balance(w3, token, merchant) == 32


def test_a_payment_another_relayer_sent_during_the_pass_holds_the_payers_next_one(client, payer, deployed, w3,
                                                                                    send_tx, chain, monkeypatch):
    """The hold reads what is on its way before the nonce lock; a second relayer process may send
    one of the payer's payments between that read and the lock. Read again under the lock, it
    holds the payer's payment back for a later pass."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"], amount=40)
    qb = get_quote(client, token, 32)
    deadline = int(time.time()) + 300
    assert client.post(f"{API}/payment/execute",
                       json=pay_body(payer, qb, merchant, token, 32, deadline)).status_code == 200
    (b,) = rows()
    other = Payment(payment_id="0x" + "cd" * 32, user_id=b.user_id, chain_id=31337, token_address=b.token_address,
                    amount="31", from_address=b.from_address, status="pending", relayer_address="0x" + "11" * 20,
                    nonce=7, raw_tx="0x", tx_hash="0x" + "ab" * 32)
    real = relayer._held_back

    def another_relayer_sends_meanwhile(*args):
        held = real(*args)
        with get_session() as db:
            db.add(other)
            db.commit()
            db.refresh(other)
        return held

    monkeypatch.setattr(relayer, "_held_back", another_relayer_sends_meanwhile)
    assert relayer.send_queued(chain) == {"sent": 0, "failed": 0}
    monkeypatch.setattr(relayer, "_held_back", real)
    assert [r.nonce for r in rows() if r.payment_id == qb["payment_id"]] == [None]
    assert relayer.send_queued(chain) == {"sent": 0, "failed": 0}  # held before the lock now
    with get_session() as db:
        db.execute(update(Payment).where(col(Payment.id) == other.id).values(status="failed", settled=True))
        db.commit()
    assert relayer.send_queued(chain) == {"sent": 1, "failed": 0}
    assert wait_status(client, qb["payment_id"]) == {"status": "ok"}


def test_a_pay_that_would_revert_is_refused_at_execute_and_failed_in_the_queue_without_a_nonce(
        client, payer, deployed, w3, send_tx, chain):
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    qa, qb = get_quote(client, token, 31), get_quote(client, token, 32)
    deadline = int(time.time()) + 300
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    assert client.post(f"{API}/payment/execute",
                       json=pay_body(payer, qa, merchant, token, 31, deadline)).status_code == 200
    # The allowance is taken back while A waits in the queue: the dry run refuses B with the
    # contract's reason, and the relayer fails A before spending a nonce on it.
    approve_directly(send_tx, payer, token, deployed["payment"], amount=0)
    refused = client.post(f"{API}/payment/execute", json=pay_body(payer, qb, merchant, token, 32, deadline))
    assert (refused.status_code, refused.json()) == (400, {"detail": "insufficient_allowance"})
    assert relayer.send_queued(chain) == {"sent": 0, "failed": 1}
    assert wait_status(client, qa["payment_id"], drive=False) == {
        "status": "failed",
        "reason": "insufficient_allowance",
    }
    (row,) = rows()
    assert (row.nonce, row.settled) == (None, True)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce  # nothing sent, no nonce used


def test_a_relayer_out_of_funds_is_told_once_not_on_every_pass(client, payer, deployed, w3, send_tx, chain,
                                                                monkeypatch, caplog):
    """The relayer's ETH spent below one send's cost after a payment was queued (another process
    with the key, a gas price spike): the node refuses the pay() and then its filler for
    'insufficient funds'. The operator is told once, not five times a second by every
    reconcile pass re-sending the filler."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    poor = Account.create()
    send_tx(Account.from_key(ANVIL_KEY_2), poor.address, value=2 * 10**16)
    use_env(monkeypatch, RELAYER_PRIVATE_KEY="0x" + bytes(poor.key).hex())
    q = get_quote(client, token, 5)
    body = pay_body(payer, q, merchant, token, 5, int(time.time()) + 300)
    assert client.post(f"{API}/payment/execute", json=body).status_code == 200
    w3.provider.make_request("anvil_setBalance", [poor.address, hex(10**9)])
    with caplog.at_level("WARNING", logger="wallet_app.services.relayer"):
        assert relayer.send_queued(chain) == {"sent": 0, "failed": 1}
        for _ in range(10):
            relayer.reconcile(chain)
    refusal = "{'code': -32003, 'message': 'Insufficient funds for gas * price + value'}"
    assert [r.getMessage() for r in caplog.records] == [
        f"payment {q['payment_id']} failed: chain 31337 refused relayer {poor.address}'s send (nonce 0): {refusal}",
        f"re-send of payment {q['payment_id']} (nonce 0) gave rejected: {refusal}",
    ]
    assert wait_status(client, q["payment_id"], drive=False) == {"status": "failed",
                                                                 "reason": f"relay_rejected: {refusal}"}


def test_a_relayer_that_cannot_pay_one_send_at_the_gas_price_refuses_payments(client, payer, deployed, w3, send_tx,
                                                                              anvil_node, deployments_dir, tmp_path,
                                                                              monkeypatch, caplog):
    """A balance above the chain's floor but below what one pay() may cost at the node's gas price
    (a small floor set for a cheap L2 whose fees then rose): quotes and executes were accepted,
    and the node refused every send for 'insufficient funds', each payment failed after its payer
    had signed it (and its merchant ref used for good)."""
    token = token_of(deployed)
    approve_directly(send_tx, payer, token, deployed["payment"])
    chain = chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, relayer_min_balance_wei=10**12)
    poor = Account.create()
    one_pay = chain.max_pay_gas * w3.eth.gas_price
    send_tx(Account.from_key(ANVIL_KEY_2), poor.address, value=one_pay // 3)
    use_env(monkeypatch, RELAYER_PRIVATE_KEY="0x" + bytes(poor.key).hex())
    with caplog.at_level("WARNING", logger="wallet_app.services.relayer"):
        refused_with(quote_resp(client, token, 7), 400, "payments_unavailable")
    (line,) = [r.getMessage() for r in caplog.records]
    said = re.fullmatch(rf"payments paused on chain 31337: relayer {poor.address} holds {one_pay // 3} wei, less "
                        r"than 1 payments may cost at gas price (\d+) \((\d+)\)", line)
    assert said and int(said[2]) == chain.max_pay_gas * int(said[1]), line
    send_tx(Account.from_key(ANVIL_KEY_2), poor.address, value=one_pay)
    q = get_quote(client, token, 7)
    body = pay_body(payer, q, Account.create().address, token, 7, int(time.time()) + 300)
    assert client.post(f"{API}/payment/execute", json=body).status_code == 200
    assert relayer.send_queued(chain) == {"sent": 1, "failed": 0}
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}


def test_a_relayer_whose_balance_pays_for_the_payments_in_flight_only_refuses_one_more(
    client, payer, deployed, w3, send_tx, anvil_node, deployments_dir, tmp_path, monkeypatch
):
    """The balance was compared with one pay()'s gas alone: with funds for one and a half, a
    second payment executed while the first was queued was accepted, and the one the balance could
    not pay for would fail at its send after its payer signed it. The gas of the payments not yet
    mined counts too."""
    token = token_of(deployed)
    approve_directly(send_tx, payer, token, deployed["payment"])
    chain = chains_with(monkeypatch, tmp_path, anvil_node.url, deployments_dir, relayer_min_balance_wei=10**12)
    poor = Account.create()
    send_tx(Account.from_key(ANVIL_KEY_2), poor.address, value=chain.max_pay_gas * w3.eth.gas_price * 3 // 2)
    use_env(monkeypatch, RELAYER_PRIVATE_KEY="0x" + bytes(poor.key).hex())
    merchant = Account.create().address
    q = get_quote(client, token, 7)
    body = pay_body(payer, q, merchant, token, 7, int(time.time()) + 300)
    assert client.post(f"{API}/payment/execute", json=body).status_code == 200
    refused_with(quote_resp(client, token, 8), 400, "payments_unavailable")  # the first one still queued
    assert relayer.send_queued(chain) == {"sent": 1, "failed": 0}
    assert wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert get_quote(client, token, 8)["payment_id"]  # mined: its gas is spent, and one more is paid for
