"""The user's activity list: entries recorded for submitted transactions and payments, their
status followed from the chain's receipts, and a short English summary of each.

Shared by the REST routes (/api/v1/activities) and the Reflex handlers; failures raise AppError.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from sqlmodel import Session

from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.models import Activity, User, stored_id
from wallet_app.services import accounts, indexer, tokens
from wallet_app.services import chain as chain_svc
from wallet_app.services.amounts import format_balance
from wallet_app.services.chain import ChainConfig, DecodedTx
from wallet_app.services.eth import ZERO_ADDRESS, short_address

log = logging.getLogger(__name__)

ACTIVITY_LIMIT = 100
RECEIPT_REFRESH_LIMIT = 10  # pending entries checked per listing (one RPC call each)


def decode_token_call(data: str) -> tuple[str, str, int] | None:
    """('transfer'|'approve', counterparty lowercase, amount) for ERC-20 transfer/approve calldata:
    the activity entries of those two; other calls are recorded as plain calls."""
    call = chain_svc.decode_erc20_call(data)
    if call is None or call[0] not in ("transfer", "approve"):
        return None
    name, (counterparty, amount) = call
    return name, counterparty.lower(), amount


# recipient_risk's answers -> their catalogue keys (the note on Send, the warning on /sign).
RECIPIENT_NOTES = {"first_time": "recipient_first_time", "lookalike": "recipient_lookalike"}


def recipient_risk(address: str, known: list[str]) -> str | None:
    """Recipient safety (issue 11 item 4), a pure rule: None for an address of the user's history,
    'lookalike' for another address with the same first 4 and last 4 hex digits as one of them
    (address poisoning), else 'first_time'. Case-insensitive; `known` may hold None."""
    a = address.lower()
    history = {k.lower() for k in known if k}
    if a in history:
        return None
    if any(k[2:6] == a[2:6] and k[-4:] == a[-4:] for k in history):
        return "lookalike"
    return "first_time"


def known_counterparties(user: User | int) -> list[str]:
    """The addresses of the user's activity history (lowercase), newest first. Transfers received
    are not the user's choice: anyone can send (address poisoning sends from a lookalike), so they
    never make an address known."""
    with get_session() as db:
        u = accounts.get_user(db, user)
        rows = crud.list_activities(db, stored_id(u), ACTIVITY_LIMIT)
    return [r.counterparty for r in rows if r.counterparty and r.type != indexer.RECEIVE]


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
    elif row.type == "receive" and amount:
        text = f"Received {amount} from {who}"
    elif who:
        text = f"{row.type.capitalize()} with {who}"
    else:
        text = row.type.capitalize()
    if row.status == "submitted":
        text += " (pending)"
    elif row.status == "failed":
        text += " (failed)"
    return text


def record_submitted(user: User, chain: ChainConfig, tx: DecodedTx, tx_hash: str) -> None:
    """The entry of a transaction the user signed and submitted (a token call, a native transfer or a call)."""
    to = tx.to.lower() if tx.to else None
    call = decode_token_call(tx.data) if to else None
    fields: dict[str, Any] = {"type": "call", "counterparty": to}
    if call and to:
        kind, counterparty, amount = call
        try:
            info = tokens.token_info(user, chain, to)
        except AppError:  # the node went away after the broadcast: record the entry without symbol
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
    record_activity(
        stored_id(user),
        chain_id=chain.chain_id,
        tx_hash=tx_hash,
        data={"to": to, "value": str(tx.value), "selector": tx.data[:10]},
        **fields,
    )


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
    )
    if db is not None:
        return stored_id(crud.add_activity(db, **fields))
    with get_session() as own:
        row = crud.add_activity(own, **fields)
        own.commit()
        return stored_id(row)


def set_activity_status(activity_id: int, status: str) -> None:
    with get_session() as db:
        row = crud.get_activity(db, activity_id)
        if row is not None and row.status != status:
            row.status = status
            db.add(row)
            db.commit()


def _refresh_pending(rows: list[Activity]) -> None:
    """Marks submitted transactions ok/failed from their receipts (one JSON-RPC batch per chain,
    bounded); the indexer does the same in the background, this makes a fresh listing current."""
    pending = [r for r in rows if r.status == "submitted" and r.tx_hash and r.chain_id][:RECEIPT_REFRESH_LIMIT]
    chains = {c.chain_id: c for c in chain_svc.get_chains()} if pending else {}
    for chain_id in {r.chain_id for r in pending}:
        c = chains.get(chain_id or 0)
        if c is None:
            continue
        mine = [r for r in pending if r.chain_id == chain_id]
        try:
            found = chain_svc.receipts(chain_svc.web3_for(c), [r.tx_hash or "" for r in mine])
        except Exception:  # the node is down or refused the batch: keep waiting
            continue
        for row in mine:
            status = indexer.status_from_receipt(found.get(row.tx_hash or ""))
            if status is not None:
                row.status = status
                set_activity_status(stored_id(row), status)


def activities(user: User | int, refresh: bool = True) -> list[dict]:
    """The user's entries, newest first: {id, type, summary, chain_id, tx_hash, token_address,
    token_symbol, token_decimals, amount, counterparty, status, created_at}."""
    with get_session() as db:
        u = accounts.get_user(db, user)
        rows = crud.list_activities(db, stored_id(u), ACTIVITY_LIMIT)
    if refresh:
        try:
            _refresh_pending(rows)
        except AppError as e:
            log.warning("activity refresh skipped: %s", e)
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
        }
        for r in rows
    ]
