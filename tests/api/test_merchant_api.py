"""Merchants (issue 14 item 6) against a real anvil and database: a link's ref paid once, the public
GET /api/v1/merchant/payments answering from the chain's Paid event, and the signed webhook sent
by the relayer to a real HTTP server in this test (HMAC checked, retries, one sender at a time)."""

from __future__ import annotations

import dataclasses
import json
import logging
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from eth_account import Account
from sqlmodel import select

from contracts.deploy import fund
from tests.api.test_payments import (  # noqa: F401 (fixtures: app, payer)
    API,
    app,
    approve_directly,
    balance,
    get_quote,
    pay_body,
    payer,
    token_of,
    wait_status,
)
from wallet_app.core.config import REPO_ROOT, get_settings
from wallet_app.core.db import get_session
from wallet_app.models import MerchantWebhook, Payment, User
from wallet_app.services import chain as chain_svc
from wallet_app.services import merchant_webhooks, relayer
from wallet_app.services.merchant_links import order_ref
from wallet_app.services.merchant_webhooks import verify

SECRET = "whsec-" + "k7Qz" * 6  # the merchant's shared secret; must never show in a log
URL_TOKEN = "path-token-9f3e"  # a merchant's own token in its URL; not logged either
SHOP = Account.create().address  # the merchant the webhooks are for (MERCHANT_WEBHOOK_MERCHANTS)


def new_ref() -> str:
    return order_ref(f"order-{uuid.uuid4()}")


def pay_ref(client, payer_, deployed, send_tx, ref: str, amount: int, merchant: str | None = None) -> str:
    """The payment page's calls for a link with this ref: quote (ref -> payment_id), execute, then
    the relayer's passes until ok. Returns the merchant."""
    token, merchant = token_of(deployed), merchant or Account.create().address
    approve_directly(send_tx, payer_, token, deployed["payment"])
    q = get_quote(client, token, amount, merchant=merchant, ref=ref)
    assert (q["payment_id"], q["available"]) == (ref, True)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer_, q, merchant, token, amount, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    assert wait_status(client, ref) == {"status": "ok"}
    return merchant


def lookup(client, ref: str, **params):
    return client.get(f"{API}/merchant/payments", params={"ref": ref, **params})


def lookup_between_heads(w3, read):
    """read()'s answer and the chain's head just before and just after it: other tests' work on
    the shared anvil may mine a block meanwhile, so a confirmation count lies between the two."""
    before = w3.eth.block_number
    answer = read()
    return answer, (before, w3.eth.block_number)


# ---------------------------------------------------------------- GET /merchant/payments


def test_the_merchant_confirms_a_payment_from_the_chain(client, payer, deployed, w3, send_tx):  # noqa: F811
    ref = new_ref()
    r = lookup(client, ref)
    assert (r.status_code, r.json()) == (404, {"detail": "payment_not_found"})

    merchant = pay_ref(client, payer, deployed, send_tx, ref, 1_500_000)
    with get_session() as s:
        row = s.exec(select(Payment).where(Payment.payment_id == ref)).one()
    receipt = w3.eth.get_transaction_receipt(row.tx_hash)
    client.cookies.clear()  # public: no session
    mined = receipt["blockNumber"]
    r, heads = lookup_between_heads(w3, lambda: lookup(client, ref))
    assert r.status_code == 200, r.text
    body = r.json()
    confirmations = body["payments"][0].pop("confirmations")
    assert heads[0] - mined + 1 <= confirmations <= heads[1] - mined + 1
    assert body == {
        "ref": ref,
        "payments": [{
            "chain_id": 31337,
            "tx_hash": row.tx_hash,
            "block_number": mined,
            "log_index": receipt["logs"][-1]["logIndex"],
            "token": token_of(deployed),
            "amount": "1500000",
            "payer": payer.address,
            "merchant": merchant,
        }],
    }
    assert balance(w3, token_of(deployed), merchant) == 1_500_000
    w3.provider.make_request("evm_mine", [])  # one block more on top
    r, heads = lookup_between_heads(w3, lambda: lookup(client, ref.upper().replace("0X", "0x"), chain_id="31337"))
    more = r.json()["payments"][0]["confirmations"]
    assert heads[0] - mined + 1 <= more <= heads[1] - mined + 1
    assert more > confirmations


def test_the_answer_is_the_chains_not_the_databases(client, payer, deployed):  # noqa: F811
    """A payment row that says ok, with no Paid event on chain behind it, is not a payment."""
    ref = new_ref()
    with get_session() as s:
        user_id = s.exec(select(User.id)).first()
        s.add(Payment(payment_id=ref, user_id=user_id, chain_id=31337, token_address=token_of(deployed).lower(),
                      amount="5", from_address=payer.address.lower(), status="ok", settled=True,
                      tx_hash="0x" + "12" * 32))
        s.commit()
    assert lookup(client, ref).json() == {"detail": "payment_not_found"}


@pytest.mark.parametrize("params, status, code", [
    ({"ref": "0x1234"}, 400, "invalid_payment_id"),
    ({"ref": "order-42"}, 400, "invalid_payment_id"),
    ({"ref": "0x" + "ab" * 32, "chain_id": "1"}, 400, "unsupported_chain"),
    ({}, 422, "invalid_request"),
])
def test_bad_lookups(client, chain_env, params, status, code):
    r = client.get(f"{API}/merchant/payments", params=params)
    assert (r.status_code, r.json()) == (status, {"detail": code})


def test_lookups_are_rate_limited_per_ip(client, chain_env, monkeypatch):
    monkeypatch.setenv("RATE_LIMIT_MERCHANT_PAYMENTS", "2/minute")
    get_settings.cache_clear()
    for _ in range(2):
        assert client.get(f"{API}/merchant/payments", params={"ref": "0x12"}).status_code == 400
    r = client.get(f"{API}/merchant/payments", params={"ref": "0x12"})
    assert (r.status_code, r.json()) == (429, {"detail": "rate_limited"})
    assert 1 <= int(r.headers["Retry-After"]) <= 60


# ---------------------------------------------------------------- a link's ref


def sign_in(client, login, acct) -> None:
    """Signs in as the user whose wallet address is acct's."""
    login(f"{acct.address.lower()}@example.com")
    assert client.post(f"{API}/me/address", json={"address": acct.address}).status_code == 200


def quote_answer(client, token, amount, merchant, ref) -> tuple[int, dict]:
    r = client.get(f"{API}/payment/available", params={"chain_id": 31337, "token_address": token, "amount": amount,
                                                     "merchant": merchant, "ref": ref})
    return r.status_code, r.json()


REF_USED = (409, {"detail": "payment_ref_used"})


def test_an_order_is_paid_once(client, payer, deployed, send_tx, login):  # noqa: F811
    token, shop, ref = token_of(deployed), Account.create().address, new_ref()
    q = get_quote(client, token, 7, merchant=shop, ref=ref)
    assert get_quote(client, token, 7, merchant=shop, ref=ref)["payment_id"] == q["payment_id"] == ref  # a poll
    # The same ref for another amount or merchant: refused, the quote stays (a payer pays a ref once).
    for amount, other in ((8, shop), (7, Account.create().address)):
        assert quote_answer(client, token, amount, other, ref) == REF_USED
    pay_ref(client, payer, deployed, send_tx, ref, 7, shop)
    # Paid: the same link again is refused (nothing can move twice), for this user and another.
    assert quote_answer(client, token, 7, shop, ref) == REF_USED
    sign_in(client, login, Account.create())
    assert quote_answer(client, token, 7, shop, ref) == REF_USED
    # ...but not another order under the same ref: another shop's order with the same number, or
    # another amount (anyone may pay 1 unit with any ref; it did not pay the order).
    for amount, other in ((7, Account.create().address), (1, shop)):
        sign_in(client, login, Account.create())
        status, answer = quote_answer(client, token, amount, other, ref)
        assert (status, answer["payment_id"]) == (200, ref)
    assert len(lookup(client, ref).json()["payments"]) == 1


def test_a_strangers_quote_payment_or_failure_of_a_ref_does_not_stop_its_customer(
        client, payer, deployed, send_tx, login, anvil_node, deployments_dir):  # noqa: F811
    """Order refs are often sequential: anyone could quote one (held 16 minutes), or let a payment of
    it fail (held for good), or pay it 1 unit, and the real customer was refused the order (409
    payment_ref_used). The contract keeps a ref per payer; so does the server now."""
    token, shop, ref, price = token_of(deployed), Account.create().address, new_ref(), 7
    squatter, tipper, failer = Account.create(), Account.create(), Account.create()
    fund(anvil_node.url, tipper.address, deployments_dir)
    sign_in(client, login, squatter)
    assert get_quote(client, token, price, merchant=shop, ref=ref)["payment_id"] == ref  # never paid
    sign_in(client, login, tipper)
    pay_ref(client, tipper, deployed, send_tx, ref, 1, shop)  # 1 unit under the order's ref
    sign_in(client, login, failer)  # a payment of the order that failed (its deadline passed)
    with get_session() as s:
        failer_id = s.exec(select(User).where(User.address == failer.address.lower())).one().id
        s.add(Payment(payment_id=ref, user_id=failer_id, chain_id=31337, token_address=token.lower(),
                      amount=str(price), from_address=failer.address.lower(), merchant_address=shop.lower(),
                      status="failed", reason="expired", claimed_at=int(time.time()), settled=True))
        s.commit()
    sign_in(client, login, payer)
    pay_ref(client, payer, deployed, send_tx, ref, price, shop)
    paid = lookup(client, ref).json()["payments"]
    assert [(p["payer"], p["amount"]) for p in paid] == [(tipper.address, "1"), (payer.address, str(price))]


def test_of_two_users_paying_one_order_at_once_the_second_is_refused(
        client, payer, deployed, w3, send_tx, login, anvil_node, deployments_dir):  # noqa: F811
    """Both quoted the order (a quote holds nothing against others); the first execute's payment is
    on its way: the second's claim is refused, under the ref's lock, and sends nothing."""
    token, shop, ref, price = token_of(deployed), Account.create().address, new_ref(), 5
    approve_directly(send_tx, payer, token, deployed["payment"])
    mine = get_quote(client, token, price, merchant=shop, ref=ref)
    other = Account.create()
    fund(anvil_node.url, other.address, deployments_dir)
    approve_directly(send_tx, other, token, deployed["payment"])
    sign_in(client, login, other)
    theirs = get_quote(client, token, price, merchant=shop, ref=ref)
    deadline = int(time.time()) + 300
    r = client.post(f"{API}/payment/execute", json=pay_body(other, theirs, shop, token, price, deadline))
    assert r.status_code == 200, r.text
    sign_in(client, login, payer)
    assert quote_answer(client, token, price, shop, ref) == REF_USED  # the order is being paid
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, mine, shop, token, price, deadline))
    assert (r.status_code, r.json()) == REF_USED
    with get_session() as s:
        statuses = {(row.from_address, row.status) for row in s.exec(select(Payment).where(Payment.payment_id == ref))}
    assert statuses == {(payer.address.lower(), "quoted"), (other.address.lower(), "pending")}
    sign_in(client, login, other)
    assert wait_status(client, ref) == {"status": "ok"}
    assert [p["payer"] for p in lookup(client, ref).json()["payments"]] == [other.address]
    assert balance(w3, token, shop) == price


def test_a_payment_to_oneself_is_refused(client, payer, deployed):  # noqa: F811
    """It would move nothing and spend the relayer's gas: refused at the quote and at execute."""
    token = token_of(deployed)
    for merchant in (payer.address, payer.address.lower()):
        r = client.get(f"{API}/payment/available", params={"chain_id": 31337, "token_address": token, "amount": 4,
                                                         "merchant": merchant})
        assert (r.status_code, r.json()) == (400, {"detail": "merchant_is_payer"})
    q = get_quote(client, token, 4, merchant=Account.create().address)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, payer.address, token, 4, int(time.time()) + 300))
    assert (r.status_code, r.json()) == (400, {"detail": "merchant_is_payer"})
    with get_session() as s:
        assert s.exec(select(Payment).where(Payment.payment_id == q["payment_id"])).one().status == "quoted"


def test_an_order_whose_payment_failed_for_good_may_be_paid_again(client, payer, deployed, w3, send_tx):  # noqa: F811
    """The customer's own payment of the order failed (here the allowance went before the relayer
    sent it): nothing of it can be mined any more, and the order was still refused to its customer
    for good (409 payment_ref_used). Now it is paid again, under the same ref, and the status of
    the ref is the new payment's, not the failure's."""
    token, shop, ref, price = token_of(deployed), Account.create().address, new_ref(), 4
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, price, merchant=shop, ref=ref)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, shop, token, price, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    approve_directly(send_tx, payer, token, deployed["payment"], amount=0)
    assert wait_status(client, ref)["status"] == "failed"
    with get_session() as s:
        (failed,) = s.exec(select(Payment).where(Payment.payment_id == ref)).all()
        assert (failed.status, failed.settled, failed.tx_hash) == ("failed", True, None)
        failed.settled = False  # as while the relayer still follows a sent transaction of it
        s.add(failed)
        s.commit()
    assert quote_answer(client, token, price, shop, ref) == REF_USED  # it may yet turn out paid
    with get_session() as s:
        failed = s.get(Payment, failed.id)
        failed.settled = True
        s.add(failed)
        s.commit()
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, price, merchant=shop, ref=ref)
    assert (q["payment_id"], q["available"]) == (ref, True)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, shop, token, price, int(time.time()) + 300))
    assert (r.status_code, r.json()) == (200, {"id": ref})
    # Not sent yet: a held status read waits for this payment, not the failure before it.
    assert client.get(f"{API}/payment/status", params={"id": ref, "wait": 0.5}).json() == {"status": "pending"}
    assert wait_status(client, ref) == {"status": "ok"}
    assert [p["amount"] for p in lookup(client, ref).json()["payments"]] == [str(price)]
    assert balance(w3, token, shop) == price
    assert quote_answer(client, token, price, shop, ref) == REF_USED  # paid: once


def test_a_ref_held_by_a_quote_never_paid_is_freed_after_its_ttl(client, payer, deployed):  # noqa: F811
    """The user's own quote holds the ref for that user (another amount: refused) until it lapses."""
    token, merchant, ref = token_of(deployed), Account.create().address, new_ref()
    get_quote(client, token, 9, merchant=merchant, ref=ref)  # opened, never paid
    assert quote_answer(client, token, 10, merchant, ref) == REF_USED
    ttl = get_settings().payment_quote_ttl_seconds
    with get_session() as s:
        held = s.exec(select(Payment).where(Payment.payment_id == ref)).one()
        held.created_at -= ttl + 30  # past its TTL, within the minute's grace: still held
        s.add(held)
        s.commit()
    assert quote_answer(client, token, 10, merchant, ref) == REF_USED
    with get_session() as s:
        held = s.exec(select(Payment).where(Payment.payment_id == ref)).one()
        held.created_at -= 31
        s.add(held)
        s.commit()
    status, answer = quote_answer(client, token, 10, merchant, ref)
    assert (status, answer["payment_id"]) == (200, ref)
    with get_session() as s:
        (row,) = s.exec(select(Payment).where(Payment.payment_id == ref)).all()
        assert row.amount == "10"


# ---------------------------------------------------------------- the webhook


class Receiver:
    """A merchant's endpoint on a free loopback port: answers the statuses queued in `answers`
    (200 once they run out), records every request; `hold` (when set) keeps a request waiting."""

    def __init__(self):
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.answers: deque[int] = deque()
        self.hold: threading.Event | None = None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                if receiver.hold is not None:
                    receiver.hold.wait(30)
                status = receiver.answers.popleft() if receiver.answers else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/{URL_TOKEN}?key={URL_TOKEN}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(monkeypatch, chain_env):
    """The merchant's endpoint, with the test anvil configured (0 confirmations: webhooks at once)."""
    r = Receiver()
    monkeypatch.setenv("MERCHANT_WEBHOOK_URL", r.url)
    monkeypatch.setenv("MERCHANT_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("MERCHANT_WEBHOOK_MERCHANTS", f"0x{'ee' * 20}, {SHOP}")
    monkeypatch.setenv("MERCHANT_WEBHOOK_RETRY_SECONDS", "10")
    get_settings.cache_clear()
    yield r
    r.close()


def counts(**some: int) -> dict[str, int]:
    """deliver_due()'s counters: these, the others 0."""
    return {"sent": 0, "retry": 0, "failed": 0, "waiting": 0, **some}


def outbox() -> list[MerchantWebhook]:
    with get_session() as s:
        return list(s.exec(select(MerchantWebhook).order_by(MerchantWebhook.id)))


def owed(db_ref: str | None = None, amount: str = "5", from_address: str = "0x" + "bb" * 20) -> str:
    """A settled payment's webhook, enqueued as the relayer's pass does it (no chain needed)."""
    row = Payment(payment_id=db_ref or new_ref(), user_id=1, chain_id=31337, token_address="0x" + "aa" * 20,
                  amount=amount, from_address=from_address, merchant_address=SHOP.lower(), status="ok",
                  tx_hash="0x" + "dd" * 32)
    with get_session() as s:
        assert merchant_webhooks.enqueue_paid(s, [row], {row.tx_hash: {"blockNumber": 9}}) == 1
        s.commit()
    return row.payment_id


def checked(request: tuple[dict[str, str], bytes]) -> dict:
    headers, body = request
    assert verify(SECRET, body, headers["x-newbl-signature"]), headers
    event = json.loads(body)
    assert headers["content-type"] == "application/json"
    assert (headers["x-newbl-event-id"], headers["x-newbl-timestamp"]) == (event["id"], str(event["timestamp"]))
    return event


def test_a_settled_payment_is_posted_signed_once(client, payer, deployed, w3, send_tx, receiver, caplog):  # noqa: F811
    caplog.set_level(logging.DEBUG)
    ref = new_ref()
    merchant = pay_ref(client, payer, deployed, send_tx, ref, 2_000_000, SHOP)  # the relayer's passes enqueue it
    (row,) = outbox()
    assert (row.status, row.attempts) == ("pending", 0)
    started = int(time.time())
    assert merchant_webhooks.deliver_due() == counts(sent=1)
    (request,) = receiver.requests
    event = checked(request)
    with get_session() as s:
        paid = s.exec(select(Payment).where(Payment.payment_id == ref)).one()
    assert started <= event["timestamp"] <= int(time.time())
    assert event == {
        "id": f"evt_31337_{ref}_{payer.address.lower()}",
        "type": "payment.paid",
        "timestamp": event["timestamp"],
        "payment": {"ref": ref, "chain_id": 31337, "tx_hash": paid.tx_hash,
                    "block_number": w3.eth.get_transaction_receipt(paid.tx_hash)["blockNumber"],
                    "token": token_of(deployed), "amount": "2000000", "payer": payer.address, "merchant": merchant},
    }
    # Sent: later passes send nothing; a second relayer settling the same payment adds nothing.
    assert merchant_webhooks.deliver_due(now=int(time.time()) + 7200) == counts()
    with get_session() as s:
        assert merchant_webhooks.enqueue_paid(s, [paid], {}) == 1
        s.commit()
    assert [(r.status, r.attempts) for r in outbox()] == [("sent", 1)]
    assert len(receiver.requests) == 1
    text = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert SECRET not in text and URL_TOKEN not in text and request[0]["x-newbl-signature"] not in text


def test_two_payers_of_one_ref_each_get_their_webhook(receiver, db):
    """The contract pays a ref once per payer: a stranger's 1 unit under an order's ref took the
    ref's one event id, and the customer's own payment of the order was never posted."""
    ref = owed(amount="1", from_address="0x" + "cc" * 20)
    owed(ref, amount="5")
    assert merchant_webhooks.deliver_due() == counts(sent=2)
    events = [checked(r) for r in receiver.requests]
    assert sorted((e["id"], e["payment"]["amount"]) for e in events) == [
        (f"evt_31337_{ref}_0x{'bb' * 20}", "5"), (f"evt_31337_{ref}_0x{'cc' * 20}", "1")]


def test_a_failing_receiver_gets_it_again_with_backoff(receiver, db, caplog):
    caplog.set_level(logging.DEBUG)
    receiver.answers.extend([500, 503])
    ref = owed()
    t0 = int(time.time())
    assert merchant_webhooks.deliver_due(now=t0) == counts(retry=1)
    (row,) = outbox()
    assert (row.status, row.attempts, row.next_attempt_at, row.last_error) == ("pending", 1, t0 + 10, "HTTP 500")
    assert merchant_webhooks.deliver_due(now=t0 + 9) == counts()  # not due yet
    assert merchant_webhooks.deliver_due(now=t0 + 10) == counts(retry=1)
    (row,) = outbox()
    assert (row.attempts, row.next_attempt_at, row.last_error) == (2, t0 + 10 + 20, "HTTP 503")  # doubled
    assert merchant_webhooks.deliver_due(now=t0 + 29) == counts()
    assert merchant_webhooks.deliver_due(now=t0 + 30) == counts(sent=1)
    (row,) = outbox()
    assert (row.status, row.attempts, row.sent_at, row.last_error) == ("sent", 3, t0 + 30, None)
    events = [checked(r) for r in receiver.requests]
    assert [e["timestamp"] for e in events] == [t0, t0 + 10, t0 + 30]  # each attempt signs its own time
    assert {e["id"] for e in events} == {f"evt_31337_{ref}_{'0x' + 'bb' * 20}"}  # one idempotency id
    assert SECRET not in caplog.text and URL_TOKEN not in caplog.text


def test_a_delivery_is_given_up_after_its_attempts(receiver, db, monkeypatch, caplog):
    monkeypatch.setenv("MERCHANT_WEBHOOK_MAX_ATTEMPTS", "2")
    get_settings.cache_clear()
    receiver.answers.extend([500, 500, 500])
    owed()
    t0 = int(time.time())
    assert merchant_webhooks.deliver_due(now=t0)["retry"] == 1
    with caplog.at_level(logging.WARNING):
        assert merchant_webhooks.deliver_due(now=t0 + 10) == counts(failed=1)
    assert [(r.status, r.attempts) for r in outbox()] == [("failed", 2)]
    assert merchant_webhooks.deliver_due(now=t0 + 10_000)["sent"] == 0 and len(receiver.requests) == 2
    assert "given up after 2 attempts: HTTP 500" in caplog.text and SECRET not in caplog.text


def test_an_unreachable_receiver_is_retried(receiver, db):
    owed()
    receiver.close()  # nothing listens there any more
    assert merchant_webhooks.deliver_due() == counts(retry=1)
    assert outbox()[0].last_error == "ConnectionRefusedError"


def test_two_senders_never_post_one_webhook_at_once_and_a_crashed_lease_runs_out(receiver, db):
    owed()
    receiver.hold = threading.Event()
    first: dict = {}
    a = threading.Thread(target=lambda: first.update(merchant_webhooks.deliver_due()))
    a.start()
    end = time.monotonic() + 20
    while not receiver.requests:  # the first sender's POST has arrived and is held there
        assert time.monotonic() < end
        time.sleep(0.01)
    assert merchant_webhooks.deliver_due() == counts()  # leased: skipped
    receiver.hold.set()
    a.join(20)
    assert first == counts(sent=1) and len(receiver.requests) == 1

    # A sender that died mid-POST: its row still leased, attempt counted, never answered.
    receiver.hold = None
    owed()
    t0 = int(time.time())
    with get_session() as s:
        row = s.exec(select(MerchantWebhook).where(MerchantWebhook.status == "pending")).one()
        row.lease_expires_at, row.attempts = t0 + merchant_webhooks.LEASE_SECONDS, 1
        s.add(row)
        s.commit()
    assert merchant_webhooks.deliver_due(now=t0 + 1)["sent"] == 0  # its lease holds
    assert merchant_webhooks.deliver_due(now=t0 + merchant_webhooks.LEASE_SECONDS)["sent"] == 1  # then it runs out
    assert len(receiver.requests) == 2 and checked(receiver.requests[1])["id"] == row.event_id


def test_a_sender_paused_past_its_lease_leaves_the_next_senders_outcome_and_lease(receiver, db, monkeypatch):
    """Sender A leases the row, then pauses (GC, a stopped VM) past LEASE_SECONDS: sender B leases it
    and delivers it, then A's own POST times out. A wrote 'failed' (its last attempt) over B's
    'sent'; and with B's POST still on its way, A's outcome cleared B's lease, so a third sender
    could POST at once."""
    monkeypatch.setenv("MERCHANT_WEBHOOK_MAX_ATTEMPTS", "2")
    get_settings.cache_clear()
    lease = merchant_webhooks.LEASE_SECONDS
    real_post = merchant_webhooks._post
    t0 = int(time.time())
    b_meanwhile: list[dict] = []

    def a_paused_then_times_out(url, secret, event_id, payload, now):
        if now == t0:  # sender A's POST
            b_meanwhile.append(merchant_webhooks.deliver_due(now=t0 + lease + 1))
            return "TimeoutError"
        return real_post(url, secret, event_id, payload, now)

    monkeypatch.setattr(merchant_webhooks, "_post", a_paused_then_times_out)
    owed()
    assert merchant_webhooks.deliver_due(now=t0) == counts()  # A: its outcome is no longer its to write
    assert b_meanwhile == [counts(sent=1)] and len(receiver.requests) == 1
    assert [(r.status, r.attempts, r.sent_at, r.last_error) for r in outbox()] == [("sent", 2, t0 + lease + 1, None)]

    # B's lease taken while A is paused, B's POST not answered yet when A's times out.
    owed()
    t0 = int(time.time()) + 10

    def b_leases_meanwhile(url, secret, event_id, payload, now):
        with get_session() as s:
            row = s.exec(select(MerchantWebhook).where(MerchantWebhook.status == "pending")).one()
            row.lease_expires_at, row.attempts = t0 + 2 * lease + 1, row.attempts + 1
            s.add(row)
            s.commit()
        return "TimeoutError"

    monkeypatch.setattr(merchant_webhooks, "_post", b_leases_meanwhile)
    assert merchant_webhooks.deliver_due(now=t0) == counts()
    (row,) = [r for r in outbox() if r.status == "pending"]
    assert (row.lease_expires_at, row.attempts, row.last_error) == (t0 + 2 * lease + 1, 2, None)  # B's lease holds
    monkeypatch.setattr(merchant_webhooks, "_post", real_post)
    assert merchant_webhooks.deliver_due(now=t0 + lease + 1) == counts()  # no third sender meanwhile


def test_nothing_is_owed_without_a_webhook_url(db):
    owed_row = Payment(payment_id=new_ref(), user_id=1, chain_id=31337, token_address="0x" + "aa" * 20, amount="1",
                       from_address="0x" + "bb" * 20, status="ok", tx_hash="0x" + "dd" * 32)
    with get_session() as s:
        assert merchant_webhooks.enqueue_paid(s, [owed_row], {}) == 0
        s.commit()
    assert outbox() == [] and merchant_webhooks.deliver_due() == counts()


def test_a_webhook_waits_until_its_payment_is_deep_enough(client, payer, deployed, w3, send_tx, receiver,  # noqa: F811
                                                          monkeypatch):
    """It is sent once the chain's Paid event is index_confirmations deep (30 here, far from what
    other work on the shared anvil could mine meanwhile), read from the chain; one the chain has no
    event for (a reorg took it) waits, its attempts unspent, and is given up a day after it was owed."""
    real = chain_svc.get_chain
    monkeypatch.setattr(chain_svc, "get_chain",
                        lambda cid, *a: dataclasses.replace(real(cid, *a), index_confirmations=30))
    ref = new_ref()
    pay_ref(client, payer, deployed, send_tx, ref, 6, SHOP)
    gone = owed()  # settled in the database, no Paid event on chain
    with get_session() as s:
        paid = s.exec(select(Payment).where(Payment.payment_id == ref)).one()
    block = w3.eth.get_transaction_receipt(paid.tx_hash)["blockNumber"]
    assert merchant_webhooks.deliver_due() == counts(waiting=2)
    assert [(r.status, r.attempts) for r in outbox()] == [("pending", 0), ("pending", 0)]
    assert merchant_webhooks.deliver_due() == counts()  # not due again yet
    w3.provider.make_request("anvil_mine", [30])
    later = int(time.time()) + merchant_webhooks.CONFIRM_RECHECK_SECONDS
    assert merchant_webhooks.deliver_due(now=later) == counts(sent=1, waiting=1)
    (request,) = receiver.requests
    assert checked(request)["payment"] == {
        "ref": ref, "chain_id": 31337, "tx_hash": paid.tx_hash, "block_number": block, "token": token_of(deployed),
        "amount": "6", "payer": payer.address, "merchant": SHOP}
    assert [(gone in r.event_id, r.status, r.attempts) for r in outbox()] == [(False, "sent", 1),
                                                                                       (True, "pending", 0)]
    # Given up a day after it was owed, not read from the chain every few seconds for ever.
    (waiting,) = [r for r in outbox() if r.status == "pending"]
    a_day_on = waiting.created_at + merchant_webhooks.CONFIRM_GIVE_UP_SECONDS
    assert merchant_webhooks.deliver_due(now=a_day_on) == counts(waiting=1)
    assert merchant_webhooks.deliver_due(now=a_day_on + 1 + merchant_webhooks.CONFIRM_RECHECK_SECONDS) == counts(
        failed=1)
    assert [(r.status, r.last_error) for r in outbox() if gone in r.event_id] == [("failed", "never confirmed")]
    assert len(receiver.requests) == 1


def test_a_pass_that_dies_after_a_re_price_loses_no_webhook(client, payer, deployed, w3, send_tx, chain, receiver,  # noqa: F811
                                                            monkeypatch):
    """One reconcile pass settles A (mined) and then re-prices B (evicted under a price rise): the
    replacement's commit, before its send, commits A's settlement too. The process dies on that
    send: A's webhook, owed only at the pass's end, was lost for good (A is settled, so no later
    pass looks at it again). Found by an audit."""
    from tests.api.test_relayer_reprice import automine_off, gas_price_raised, rpc

    token = token_of(deployed)
    approve_directly(send_tx, payer, token, deployed["payment"])
    with automine_off(w3):
        for amount in (11, 12):
            q = get_quote(client, token, amount, merchant=SHOP)
            body = pay_body(payer, q, SHOP, token, amount, int(time.time()) + 300)
            r = client.post(f"{API}/payment/execute", json=body)
            assert r.status_code == 200, r.text
            assert relayer.send_queued(chain)["sent"] == 1
        with get_session() as s:
            a, b = s.exec(select(Payment).order_by(Payment.nonce)).all()
        rpc(w3, "anvil_dropTransaction", b.tx_hash)  # B evicted
        rpc(w3, "evm_mine")  # A mined
        with gas_price_raised(w3, 5):
            real_send = relayer._send_raw

            def dies_on_the_replacement(chain_, raw):
                if raw != b.raw_tx:  # B's re-send as it was is refused for its price; then its replacement
                    raise SystemExit("killed")
                return real_send(chain_, raw)

            monkeypatch.setattr(relayer, "_send_raw", dies_on_the_replacement)
            with pytest.raises(SystemExit):
                relayer.reconcile(chain)
    with get_session() as s:
        assert s.get(Payment, a.id).settled and s.get(Payment, a.id).status == "ok"
    assert [row.event_id for row in outbox()] == [f"evt_31337_{a.payment_id}_{a.from_address}"]


def test_a_payment_to_another_address_is_not_posted(client, payer, deployed, send_tx, receiver):  # noqa: F811
    """Anyone can pay anyone with any ref through the app: the merchant hears only of its own."""
    ref = new_ref()
    pay_ref(client, payer, deployed, send_tx, ref, 3, Account.create().address)
    assert outbox() == [] and merchant_webhooks.deliver_due() == counts()
    assert receiver.requests == []


def test_the_relayer_process_sends_the_webhook(client, payer, deployed, send_tx, receiver, monkeypatch):  # noqa: F811
    token, merchant, ref = token_of(deployed), SHOP, new_ref()
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 23, merchant=merchant, ref=ref)
    r = client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 23, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    # The test's settings (DATABASE_URL, CHAINS_FILE, MERCHANT_WEBHOOK_*, ...) are in os.environ: inherited.
    proc = subprocess.Popen([sys.executable, "-m", "wallet_app.relayer"], cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        end = time.monotonic() + 30
        while not receiver.requests:
            assert time.monotonic() < end and proc.poll() is None, "no webhook from the relayer process"
            time.sleep(0.05)
        event = checked(receiver.requests[0])
        assert (event["payment"]["ref"], event["payment"]["amount"]) == (ref, "23")
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    assert SECRET not in out and URL_TOKEN not in out
