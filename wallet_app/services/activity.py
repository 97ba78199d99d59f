"""The user's activity list: entries recorded for submitted transactions and payments, their
status followed from the chain's receipts, and a short English summary of each.

Shared by the REST routes (/api/v1/activities) and the Reflex handlers; failures raise AppError.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from sqlalchemy import text, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.models import OWN_TX_ENTRY, Activity, User, stored_id
from wallet_app.services import accounts, indexer, pending, tokens, txlink
from wallet_app.services import chain as chain_svc
from wallet_app.services.amounts import format_balance
from wallet_app.services.chain import ChainConfig, DecodedTx
from wallet_app.services.eth import ZERO_ADDRESS, short_address

log = logging.getLogger(__name__)

ACTIVITY_LIMIT = 100
RECEIPT_REFRESH_LIMIT = 10  # pending entries checked per listing (one RPC call each)
KNOWN_LIMIT = 1000  # the user's own newest entries whose counterparties count as known


def decode_token_call(data: str) -> tuple[str, str, int] | None:
    """('transfer'|'approve', counterparty lowercase, amount) for ERC-20 transfer/approve calldata:
    the activity entries of those two; other calls are recorded as plain calls."""
    call = chain_svc.decode_erc20_call(data)
    if call is None or call[0] not in ("transfer", "approve"):
        return None
    name, (counterparty, amount) = call
    return name, counterparty.lower(), amount


# recipient_risk's answers -> their catalogue keys (the note on Send, the warning on /sign).
RECIPIENT_NOTES = {
    "first_time": "recipient_first_time",
    "lookalike": "recipient_lookalike",
    "token_contract": "recipient_token_contract",
}


def recipient_risk(address: str, known: list[str], tokens: Iterable[str] = ()) -> str | None:
    """Recipient safety (issue 11 item 4), a pure rule: 'token_contract' for the address of one of
    `tokens` (a token address pasted as the recipient: tokens sent to a token's contract are
    mostly lost for good), None for an address of the user's history, 'lookalike' for another
    address with the same first 4 and last 4 hex digits as one of them (address poisoning), else
    'first_time'. Case-insensitive; `known` may hold None."""
    a = address.lower()
    if a in {t.lower() for t in tokens}:
        return "token_contract"
    history = {k.lower() for k in known if k}
    if a in history:
        return None
    if any(k[2:6] == a[2:6] and k[-4:] == a[-4:] for k in history):
        return "lookalike"
    return "first_time"


def known_counterparties(user: User | int) -> list[str]:
    """The addresses of the user's activity history (lowercase), newest first. Transfers received
    are not the user's choice: anyone can send (address poisoning sends from a lookalike), so they
    never make an address known; nor are they counted in the KNOWN_LIMIT newest entries read (a
    flood of dust would push the user's own recipients out, and the lookalike with them)."""
    with get_session() as db:
        u = accounts.get_user(db, user)
        found = db.exec(
            select(Activity.counterparty)
            .where(
                Activity.user_id == stored_id(u),
                Activity.type != indexer.RECEIVE,
                col(Activity.counterparty).is_not(None),
            )
            .order_by(col(Activity.created_at).desc(), col(Activity.id).desc())
            .limit(KNOWN_LIMIT)
        )
        return [c for c in found if c]


def activity_summary(row: Activity) -> str:
    """Short English text; the UI renders its own ko/en text from the structured fields."""
    amount = None
    if row.amount is not None and row.token_decimals is not None:
        balance = format_balance(int(row.amount), row.token_decimals, max_decimals=row.token_decimals)
        amount = f"{balance} {row.token_symbol or ''}".strip()
    who = short_address(row.counterparty)
    if row.type == "transfer" and amount:
        text = f"Sent {amount} to {who}"
    elif row.type == "approve" and amount:
        text = f"Approved {amount} for {who}"
    elif row.type == "payment" and amount:
        text = f"Paid {amount} to {who}"
    elif row.type == "cancel":
        text = f"Cancel of {short_address(_replaces_tx(row))}"
    elif row.type == "receive" and amount:
        text = f"Received {amount} from {who}"
    elif who:
        text = f"{row.type.capitalize()} with {who}"
    else:
        text = row.type.capitalize()
    if row.status == "submitted":
        text += " (pending)"
    elif row.status in ("failed", "replaced", "cancelled", "dropped"):
        text += f" ({row.status})"
    return text


# The longest call data an entry keeps: what a /sign link can carry (services.txlink), so every
# transaction the app itself signs can be sped up or cancelled.
KEPT_CALLDATA_CHARS = txlink.MAX_LINK_CHARS


def record_submitted(
    user: User, chain: ChainConfig, tx: DecodedTx, tx_hash: str, replaces: Activity | None = None
) -> int | None:
    """The entry of a transaction the user signed, recorded (pending) before it is broadcast (a
    token call, a native transfer, a call, or a cancel of the pending entry `replaces`): its id,
    None when the same transaction has its entry already. Its fields are kept (services.pending
    rebuilds a speed-up or a cancel from them), its call data only up to KEPT_CALLDATA_CHARS: every
    Activity listing reads them, and a client other than ours can submit 150 kB calls (such an
    entry offers no speed-up or cancel)."""
    to = tx.to.lower() if tx.to else None
    call = decode_token_call(tx.data) if to else None
    fields: dict[str, Any] = {"type": "call", "counterparty": to}
    if replaces is not None and pending.is_cancel(tx):
        fields = {"type": "cancel", "counterparty": replaces.counterparty}
    elif call and to:
        kind, counterparty, amount = call
        try:
            info = tokens.token_info(user, chain, to)
        except AppError:  # the node does not answer: record the entry without symbol
            info = None
        fields = {
            "type": kind,
            "token_address": to,
            "token_symbol": info and info.token_symbol,
            "token_decimals": info and info.token_decimals,
            "amount": str(amount),
            "counterparty": counterparty,
        }
    elif to and tx.data in ("0x", "") and tx.value > 0:
        fields = {
            "type": "transfer",
            "token_address": ZERO_ADDRESS,
            "token_symbol": chain.native_symbol,
            "token_decimals": chain.native_decimals,
            "amount": str(tx.value),
            "counterparty": to,
        }
    try:
        return record_activity(
            stored_id(user),
            chain_id=chain.chain_id,
            tx_hash=tx_hash,
            nonce=tx.nonce,
            replaces_id=stored_id(replaces) if replaces is not None else None,
            data={
                "to": to,
                "value": str(tx.value),
                "selector": tx.data[:10],
                "from": tx.sender.lower(),
                **({"data": tx.data} if len(tx.data) <= KEPT_CALLDATA_CHARS else {}),
                "gas_limit": str(tx.gas_limit),
                "gas_price": str(tx.gas_price),
                "replaces_tx": replaces.tx_hash if replaces is not None else None,
            },
            **fields,
        )
    except IntegrityError:  # uq_activities_own_tx: the same signed transaction, submitted again
        log.info("activity of %s recorded already", tx_hash)
        return None


def sent_again(user: User, chain: ChainConfig, tx_hash: str) -> None:
    """The node took a transaction submitted before: its entry, if the status refresh found it
    dropped (services.pending), is pending again."""
    with get_session() as db:
        db.execute(
            update(Activity)
            .where(
                col(Activity.user_id) == stored_id(user),
                col(Activity.chain_id) == chain.chain_id,
                col(Activity.tx_hash) == tx_hash,
                col(Activity.status) == pending.DROPPED,
                text(OWN_TX_ENTRY),
            )
            .values(status=pending.PENDING)
        )
        db.commit()


def record_activity(
    user_id: int,
    type: str,
    *,
    chain_id: int | None = None,
    tx_hash: str | None = None,
    token_address: str | None = None,
    token_symbol: str | None = None,
    token_decimals: int | None = None,
    amount: int | str | None = None,
    counterparty: str | None = None,
    status: str = "submitted",
    data: dict | None = None,
    nonce: int | None = None,
    replaces_id: int | None = None,
    db: Session | None = None,
) -> int:
    """Adds an activity entry (also for other flows, e.g. payments); returns its id. With `db`,
    inside that transaction (the caller commits); else in its own."""
    fields: dict[str, Any] = dict(
        user_id=user_id,
        type=type,
        chain_id=chain_id,
        tx_hash=tx_hash,
        token_address=token_address.lower() if token_address else None,
        token_symbol=token_symbol,
        token_decimals=token_decimals,
        amount=str(amount) if amount is not None else None,
        counterparty=counterparty.lower() if counterparty else None,
        status=status,
        data=json.dumps(data, separators=(",", ":")) if data is not None else None,
        nonce=nonce,
        replaces_id=replaces_id,
    )
    if db is not None:
        return crud.add_activity(db, **fields)
    with get_session() as own:
        activity_id = crud.add_activity(own, **fields)
        own.commit()
        return activity_id


def delete_entry(activity_id: int) -> None:
    with get_session() as db:
        crud.delete_activity(db, activity_id)
        db.commit()


def get_entry(activity_id: int) -> Activity | None:
    with get_session() as db:
        return crud.get_activity(db, activity_id)


def set_activity_status(activity_id: int, status: str) -> None:
    with get_session() as db:
        row = crud.get_activity(db, activity_id)
        if row is not None and row.status != status:
            row.status = status
            db.add(row)
            db.commit()


def _replaces_tx(row: Activity) -> str | None:
    try:
        return json.loads(row.data or "").get("replaces_tx")
    except (ValueError, AttributeError):
        return None


def replaceable(rows: list[Activity]) -> set[int]:
    """The ids of pending (or dropped: pending.UNRESOLVED) entries that offer Speed up and Cancel:
    the user's own signed ones, the newest of their nonce group (an older one is already being
    replaced)."""
    newest: dict[tuple, Activity] = {}
    for r in rows:
        if r.status not in pending.UNRESOLVED or pending.stored_fields(r) is None:
            continue
        key = (r.chain_id, r.nonce)
        if key not in newest or stored_id(r) > stored_id(newest[key]):
            newest[key] = r
    superseded = {r.replaces_id for r in rows if r.replaces_id is not None}
    return {stored_id(r) for r in newest.values() if stored_id(r) not in superseded}


def activities(user: User | int, refresh: bool = True) -> list[dict]:
    """The user's entries, newest first: {id, type, summary, chain_id, tx_hash, token_address,
    token_symbol, token_decimals, amount, counterparty, status, created_at, replaces_tx,
    replaceable}. status: submitted (pending), ok, failed, replaced, cancelled, dropped."""
    with get_session() as db:
        u = accounts.get_user(db, user)
        rows = crud.list_activities(db, stored_id(u), ACTIVITY_LIMIT)
    if refresh and any(r.status in pending.UNRESOLVED and r.tx_hash for r in rows):
        try:
            # The receipts are read from the chain node: rate-limited per user (the entries are
            # listed all the same, as last stored).
            accounts.hit("activity_refresh", u)
            pending.refresh(rows, RECEIPT_REFRESH_LIMIT)
        except AppError as e:
            if e.code != "rate_limited":
                log.warning("activity refresh skipped: %s", e)
    can_replace = replaceable(rows)
    return [
        {
            "id": r.id,
            "type": r.type,
            "summary": activity_summary(r),
            "chain_id": r.chain_id,
            "tx_hash": r.tx_hash,
            "token_address": r.token_address,
            "token_symbol": r.token_symbol,
            "token_decimals": r.token_decimals,
            "amount": r.amount,
            "counterparty": r.counterparty,
            "status": r.status,
            "created_at": r.created_at,
            "replaces_tx": _replaces_tx(r),
            "replaceable": stored_id(r) in can_replace,
        }
        for r in rows
    ]
