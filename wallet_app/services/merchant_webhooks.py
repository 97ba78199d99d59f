"""Signed merchant webhooks: when the relayer sees a payment's receipt settle it ok, it POSTs the
payment to MERCHANT_WEBHOOK_URL (README, "Merchants"), if it paid one of
MERCHANT_WEBHOOK_MERCHANTS: anyone may pay any address with any ref through the app.

Request: POST, `Content-Type: application/json`, body
  {"id": <event id>, "type": "payment.paid", "timestamp": <epoch s>, "payment": {ref, chain_id,
   tx_hash, block_number, token, amount, payer, merchant}}
(block_number is null in the rare case where another account's transaction made the payment:
the relayer then holds no receipt of it; GET /merchant/payments has it)
with `X-Newbl-Signature: sha256=<hex HMAC-SHA256(MERCHANT_WEBHOOK_SECRET, raw body)>`,
`X-Newbl-Event-Id` (= id) and `X-Newbl-Timestamp` (= timestamp). The timestamp is inside the
signed body and new at every attempt: a receiver refuses one too old (say 5 minutes) and so a
replayed request; the event id lets it ignore a repeat (delivery is at least once). Any 2xx is
success; anything else (or no answer in TIMEOUT_SECONDS) is retried after
MERCHANT_WEBHOOK_RETRY_SECONDS, doubling each time up to an hour, MERCHANT_WEBHOOK_MAX_ATTEMPTS
in all.

Confirmations: a webhook is sent once the chain's Paid event of the payment (same ref, payer,
merchant, token and amount) is `index_confirmations` blocks deep (the chains file; what the
indexer takes as final), read again from the chain before the POST: a block reorganised away
after the relayer's first receipt tells the merchant nothing. Until then the row waits,
CONFIRM_RECHECK_SECONDS at a time, without spending an attempt; its block_number and tx_hash are
the event's. 0 confirmations (the development chain): sent at once.

Persistence (models.MerchantWebhook, an outbox): enqueue_paid() adds the row inside the
relayer's own transaction that settles the payment, so a payment settled is a webhook owed,
whatever crashes after. deliver_due() leases a due row with one conditional UPDATE before its
POST: of two relayer processes exactly one sends it; a sender that dies mid-POST leaves a lease
that runs out after LEASE_SECONDS, and the row is sent again with the same event id. The
attempt's outcome is written only while its lease is still the row's (a sender paused past it
leaves the next sender's outcome and lease alone).
The secret and the signature are never logged.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import logging
import threading
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import or_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select
from web3.exceptions import Web3Exception

from wallet_app.core.config import get_settings, parse_addresses, url_for_logs
from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.models import MerchantWebhook, Payment, now_epoch
from wallet_app.services import chain as chains
from wallet_app.services import merchant_payments
from wallet_app.services.eth import checksum

log = logging.getLogger(__name__)

EVENT_TYPE = "payment.paid"
TIMEOUT_SECONDS = 10.0  # per connect and per read of one POST
LEASE_SECONDS = 60  # longer than a POST can take: a live sender never loses its lease
MAX_BACKOFF_SECONDS = 3600
BATCH = 20  # rows leased per pass at most
CONFIRM_RECHECK_SECONDS = 5  # a payment not yet deep enough is looked at again after this
# ...for at most this long after it was owed: one the chain never confirms (a reorg took its Paid
# event) is given up, not read from the chain every few seconds for ever.
CONFIRM_GIVE_UP_SECONDS = 24 * 3600


# ---------------------------------------------------------------- pure parts (table-tested)


def signature(secret: str, body: bytes) -> str:
    """The X-Newbl-Signature header's value."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str | None) -> bool:
    """What a merchant's receiver does (constant-time compare); the tests use it too."""
    return header is not None and hmac.compare_digest(signature(secret, body), header)


def backoff_seconds(attempts: int, base: int, cap: int = MAX_BACKOFF_SECONDS) -> int:
    """The wait after the `attempts`-th failed attempt: base, 2*base, 4*base, ... up to cap."""
    return int(min(cap, base * 2 ** max(0, attempts - 1)))


def event_body(event_id: str, payload: str, timestamp: int) -> bytes:
    """The raw body of one attempt: the stored payment with this attempt's timestamp."""
    return json.dumps(
        {"id": event_id, "type": EVENT_TYPE, "timestamp": timestamp, "payment": json.loads(payload)},
        separators=(",", ":"),
        sort_keys=True,
    ).encode()


def event_payload(row: Payment, block_number: int | None) -> dict[str, Any]:
    return {
        "ref": row.payment_id,
        "chain_id": row.chain_id,
        "tx_hash": row.tx_hash,
        "block_number": block_number,
        "token": checksum(row.token_address),
        "amount": row.amount,
        "payer": checksum(row.from_address),
        "merchant": checksum(row.merchant_address) if row.merchant_address else None,
    }


def event_id(row: Payment) -> str:
    """The payment's event id: one per chain, ref and payer, as the contract pays a ref once per
    payer. Two users' payments of one ref (another merchant's order with the same number, or a
    stranger's 1 unit) each get their webhook: with the chain and ref alone, the first one's row
    took the id and the other's webhook was dropped as its repeat."""
    return f"evt_{row.chain_id}_{row.payment_id}_{row.from_address.lower()}"


# ---------------------------------------------------------------- enqueue (the relayer's transaction)


def enqueue_paid(db: Session, rows: list[Payment], receipts: dict[str, dict]) -> int:
    """The relayer's one call (services.relayer.reconcile, before its commit): a webhook owed for
    each of these rows that is now ok and paid one of MERCHANT_WEBHOOK_MERCHANTS, in the same
    transaction. Nothing without MERCHANT_WEBHOOK_URL. A second relayer settling the same
    payment adds nothing (the event id is unique: ON CONFLICT DO NOTHING). Returns how many rows were offered."""
    settings = get_settings()
    if not settings.merchant_webhook_url:
        return 0
    merchants = parse_addresses(settings.merchant_webhook_merchants)
    values = []
    for row in rows:
        if row.status != "ok" or not row.tx_hash or (row.merchant_address or "").lower() not in merchants:
            continue
        block = receipts.get(row.tx_hash, {}).get("blockNumber")
        values.append(
            {
                "event_id": event_id(row),
                "payload": json.dumps(event_payload(row, block), separators=(",", ":"), sort_keys=True),
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now_epoch(),
                "created_at": now_epoch(),
            }
        )
    if values:
        dialect = postgresql if db.get_bind().dialect.name == "postgresql" else sqlite
        db.execute(dialect.insert(MerchantWebhook).values(values).on_conflict_do_nothing(index_elements=["event_id"]))
    return len(values)


# ---------------------------------------------------------------- delivery


def _lease(db: Session, row_id: int, now: int) -> int | None:
    """Takes the row for one attempt, if it is still due and nobody holds it (atomic). -> the
    lease's expiry, which names this attempt's lease (_finish), or None when not taken."""
    lease = now + LEASE_SECONDS
    taken = db.execute(
        update(MerchantWebhook)
        .where(
            col(MerchantWebhook.id) == row_id,
            col(MerchantWebhook.status) == "pending",
            col(MerchantWebhook.next_attempt_at) <= now,
            or_(col(MerchantWebhook.lease_expires_at).is_(None), col(MerchantWebhook.lease_expires_at) <= now),
        )
        .values(lease_expires_at=lease, attempts=MerchantWebhook.attempts + 1)
    )
    db.commit()
    return lease if getattr(taken, "rowcount", 0) == 1 else None


def _finish(db: Session, row_id: int, lease: int, **values: Any) -> bool:
    """Writes an attempt's outcome and gives its lease back, only while that lease is still the
    row's: a sender paused past LEASE_SECONDS (GC, a stopped VM) finds the row leased again, or
    sent, by another sender, whose outcome and lease are not its to overwrite."""
    done = db.execute(
        update(MerchantWebhook)
        .where(
            col(MerchantWebhook.id) == row_id,
            col(MerchantWebhook.status) == "pending",
            col(MerchantWebhook.lease_expires_at) == lease,
        )
        .values(lease_expires_at=None, **values)
    )
    db.commit()
    if getattr(done, "rowcount", 0) == 1:
        return True
    log.warning("webhook row %s: its lease ran out during the attempt; it is another sender's now", row_id)
    return False


def _post(url: str, secret: str, event_id: str, payload: str, now: int) -> str | None:
    """One attempt: None when the merchant answered 2xx, else why not (for the row and the log)."""
    body = event_body(event_id, payload, now)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "NewblWallet-Webhook/1",
        "X-Newbl-Event-Id": event_id,
        "X-Newbl-Timestamp": str(now),
        "X-Newbl-Signature": signature(secret, body),
    }
    parts = urlsplit(url)
    conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    # http.client, not httpx: httpx logs every request's full URL at INFO, and a merchant's URL may
    # carry its own token. Redirects are not followed (a POST is not re-sent elsewhere).
    conn = conn_type(parts.hostname or "", parts.port, timeout=TIMEOUT_SECONDS)
    try:
        conn.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), body, headers)
        status = conn.getresponse().status
    except (OSError, http.client.HTTPException) as e:
        return type(e).__name__
    finally:
        conn.close()
    return None if 200 <= status < 300 else f"HTTP {status}"


def confirmed_payload(payload: str) -> str | None:
    """The payload to send once its payment is deep enough on chain (block_number and tx_hash as
    the chain's Paid event says), else None: not seen yet, not deep enough, or the node did not
    answer."""
    payment = json.loads(payload)
    try:
        chain = chains.get_chain(payment["chain_id"])
        if chain.index_confirmations == 0:
            return payload
        found = merchant_payments.chain_payments(chain, payment["ref"])
    except (AppError, Web3Exception, OSError, ValueError) as e:  # the node, or a chain no longer configured
        log.info("webhook for %s waits: its chain did not answer (%s)", payment.get("ref"), type(e).__name__)
        return None
    fields = ("payer", "merchant", "token", "amount")
    for event in found:
        # confirmations counts the event's own block: final (chains.is_final, as the indexer and
        # the relayer take it) is index_confirmations blocks on top of it.
        if all(event[f] == payment[f] for f in fields) and event["confirmations"] > chain.index_confirmations:
            confirmed = {**payment, "block_number": event["block_number"], "tx_hash": event["tx_hash"]}
            return json.dumps(confirmed, separators=(",", ":"), sort_keys=True)
    return None


def deliver_due(now: int | None = None, limit: int = BATCH) -> dict[str, int]:
    """Sends the due webhooks whose payments are deep enough, once each (those another sender
    holds are skipped). Counters {sent, retry, failed, waiting} for logs and tests. `now`: epoch
    seconds (tests move time on)."""
    settings = get_settings()
    counts = dict(sent=0, retry=0, failed=0, waiting=0)
    url, secret = settings.merchant_webhook_url, settings.merchant_webhook_secret
    if not url or secret is None:
        return counts

    def clock() -> int:
        return now_epoch() if now is None else now

    at = clock()
    with get_session() as db:
        due = db.exec(
            select(MerchantWebhook.id)
            .where(MerchantWebhook.status == "pending", MerchantWebhook.next_attempt_at <= at)
            .where(or_(col(MerchantWebhook.lease_expires_at).is_(None), col(MerchantWebhook.lease_expires_at) <= at))
            .order_by(col(MerchantWebhook.next_attempt_at))
            .limit(limit)
        ).all()
        db.commit()
        for row_id in due:
            at = clock()  # each lease from the time of its own POST: earlier ones may have been slow
            if row_id is None or (lease := _lease(db, row_id, at)) is None:
                continue
            row = db.get(MerchantWebhook, row_id, populate_existing=True)
            if row is None:
                continue
            event_id, stored, attempts, created_at = row.event_id, row.payload, row.attempts, row.created_at
            db.commit()  # no transaction held open across the chain reads and the POST
            payload = confirmed_payload(stored)
            if payload is None:
                if at - created_at > CONFIRM_GIVE_UP_SECONDS:
                    if _finish(db, row_id, lease, status="failed", last_error="never confirmed"):
                        log.warning(
                            "webhook %s given up: its payment was not confirmed on the chain in a day", event_id
                        )
                        counts["failed"] += 1
                    continue
                # The lease given back, its attempt not counted.
                recheck_at = at + CONFIRM_RECHECK_SECONDS
                if _finish(db, row_id, lease, attempts=MerchantWebhook.attempts - 1, next_attempt_at=recheck_at):
                    counts["waiting"] += 1
                continue
            problem = _post(url, secret.get_secret_value(), event_id, payload, at)
            if problem is None:
                if _finish(db, row_id, lease, status="sent", sent_at=at, last_error=None, payload=payload):
                    counts["sent"] += 1
            elif attempts >= settings.merchant_webhook_max_attempts:
                if _finish(db, row_id, lease, status="failed", last_error=problem):
                    counts["failed"] += 1
                    log.warning(
                        "webhook %s to %s given up after %s attempts: %s",
                        event_id,
                        url_for_logs(url),
                        attempts,
                        problem,
                    )
            else:
                next_at = at + backoff_seconds(attempts, settings.merchant_webhook_retry_seconds)
                if _finish(db, row_id, lease, next_attempt_at=next_at, last_error=problem):
                    counts["retry"] += 1
                    log.info(
                        "webhook %s to %s failed (%s); retry at %s",
                        event_id,
                        url_for_logs(url),
                        problem,
                        next_at,
                    )
    return counts


def run(stop: threading.Event, interval: float = 1.0) -> None:
    """deliver_due() every `interval` s until `stop` is set (a thread of the relayer process: a slow
    merchant holds this thread, never the relaying)."""
    while not stop.is_set():
        try:
            deliver_due()
        except Exception:  # a database hiccup must not end the deliveries
            log.exception("webhook delivery pass failed")
        stop.wait(interval)


def start(stop: threading.Event) -> threading.Thread | None:
    """The delivery thread, when MERCHANT_WEBHOOK_URL is set."""
    if not get_settings().merchant_webhook_url:
        return None
    thread = threading.Thread(target=run, args=(stop,), name="merchant-webhooks", daemon=True)
    thread.start()
    return thread
