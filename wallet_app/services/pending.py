"""Pending sends: their status from the chain, and speeding them up or cancelling them (issue 14 item 4).

The user's own transactions are signed in the browser and submitted through transfers.submit_signed;
each entry stores its nonce and its fields. A pending one can be replaced by a transaction with the
same nonce and a higher gas price: a speed-up (the same call) or a cancel (0 of the native coin to
the sender itself). The entries of one (chain, sender, nonce) are a group; the chain mines at most
one of them, so once one has a receipt the others are 'replaced' (or 'cancelled' when the winner is
a cancel) and never counted. A group the node never got (or dropped) is 'dropped' (DROP_AFTER_SECONDS).

Pure functions first (table-tested in tests/unit/services/test_pending.py), then the reads.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from eth_typing import HexStr
from sqlmodel import col, select

from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.models import UNRESOLVED, Activity, User, now_epoch, stored_id
from wallet_app.services import accounts, tokens
from wallet_app.services import chain as chain_svc
from wallet_app.services.amounts import format_balance
from wallet_app.services.chain import ChainConfig, DecodedTx
from wallet_app.services.eth import checksum

log = logging.getLogger(__name__)

# Nodes accept a replacement only at least this much above the old price (geth's txpool.pricebump;
# for EIP-1559 both the fee cap and the tip).
BUMP_PERCENT = 10
CANCEL_GAS = 21_000
PENDING = "submitted"
# A signed entry of a group the node holds no member of, with its nonce unused, this long after the
# newest was recorded: its broadcast never reached the node (no answer; the worker stopped between
# the entry and the broadcast) or the node dropped it from its pool. Shown as such, not pending for ever.
DROPPED = "dropped"
DROP_AFTER_SECONDS = 600
KINDS = ("speedup", "cancel")
# An activity id as a link or a client sends it: ASCII digits that fit the database's integer
# (str.isdigit() also takes "²", which int() refuses, and 30 digits overflow SQLite's INTEGER).
_ACTIVITY_ID = re.compile(r"[1-9][0-9]{0,17}")


# ---------------------------------------------------------------- pure rules


def bump(price: int) -> int:
    """The lowest price a node accepts in place of `price` (+10%, rounded up)."""
    return -(-price * (100 + BUMP_PERCENT) // 100)


def bump_fees(fees: dict[str, int]) -> dict[str, int]:
    """The lowest fees replacing `fees`: legacy {gas_price} or EIP-1559 {max_fee_per_gas,
    max_priority_fee_per_gas}; every field is bumped, a tip never above the fee cap."""
    out = {k: bump(v) for k, v in fees.items()}
    if "max_fee_per_gas" in out and "max_priority_fee_per_gas" in out:
        out["max_fee_per_gas"] = max(out["max_fee_per_gas"], out["max_priority_fee_per_gas"])
    return out


def replacement_gas_price(group_prices: Iterable[int], node_gas_price: int) -> int:
    """A legacy replacement's price: above every price already sent with this nonce, and at least
    the node's current price (a stuck send is usually stuck because the price moved)."""
    return max(bump(max(group_prices)), node_gas_price)


def receipt_status(receipt: Any) -> str:
    """'ok' | 'failed' of a mined transaction's receipt."""
    return "ok" if receipt["status"] == 1 else "failed"


@dataclass(frozen=True)
class Member:
    id: int
    type: str
    status: str


def resolve_group(members: list[Member], mined: dict[int, str], nonce_used: bool) -> dict[int, str]:
    """The new statuses of a nonce group ({id: status}, changed ones only). `mined`: the members
    with a receipt ({id: 'ok'|'failed'}); `nonce_used`: the chain's count is past the nonce.
    At most one member is mined; the others lose to it. A nonce taken by a transaction
    outside the group (another device) leaves every member 'replaced'."""
    out: dict[int, str] = {}
    winner = next((m for m in members if m.id in mined), None)
    if winner is None and not nonce_used:
        return out
    for m in members:
        if winner is not None and m.id == winner.id:
            status = mined[m.id]
        elif winner is not None and winner.type == "cancel":
            status = "cancelled"
        else:
            status = "replaced"
        if m.status != status:
            out[m.id] = status
    return out


def is_cancel(tx: DecodedTx) -> bool:
    """0 of the native coin to the sender itself: the shape of a cancel."""
    return (tx.to or "").lower() == tx.sender.lower() and tx.value == 0 and tx.data in ("0x", "")


def replacement_tx(kind: str, fields: dict[str, Any], sender: str, gas_price: int) -> dict[str, str]:
    """The unsigned legacy replacement of a stored entry's fields ({chain_id, to, data, value,
    nonce, gas_limit}): the same call (speedup) or 0 to the sender (cancel), at `gas_price`."""
    if kind == "cancel":
        to, data, value, gas_limit = sender, "0x", "0", str(CANCEL_GAS)
    else:
        to, data, value, gas_limit = fields["to"], fields["data"], fields["value"], fields["gas_limit"]
    return {
        "chain_id": str(fields["chain_id"]),
        "to": checksum(to),
        "data": data,
        "value": str(value),
        "nonce": str(fields["nonce"]),
        "gas_limit": str(gas_limit),
        "gas_price": str(gas_price),
    }


def stored_fields(row: Activity) -> dict[str, Any] | None:
    """What record_submitted kept of a signed transaction (None for entries without it:
    payments, older entries), with the row's chain and nonce."""
    try:
        data = json.loads(row.data or "")
        out = {k: data[k] for k in ("from", "to", "data", "value", "gas_limit", "gas_price")}
    except (ValueError, KeyError, TypeError):
        return None
    if row.nonce is None or row.chain_id is None:
        return None
    return {**out, "chain_id": row.chain_id, "nonce": row.nonce}


# ---------------------------------------------------------------- reads


def tx_status(chain: ChainConfig, tx_hash: str) -> str:
    """'pending' | 'ok' | 'failed' of a sent transaction, from its receipt ('pending': none yet, its
    block not the chain's index_confirmations deep yet, or the node does not answer). The one rule
    for a send's status (Activity, the indexer): a status is final, so it is not read from a block
    a reorganisation may still replace (the send's entry once said ok for good while the
    transaction was on no chain at all)."""
    try:
        w3 = chain_svc.web3_for(chain)
        receipt = w3.eth.get_transaction_receipt(HexStr(tx_hash))
        if not chain_svc.final_receipts(w3, chain, {tx_hash: dict(receipt)}):
            return "pending"
    except Exception:  # TransactionNotFound (not mined) or the node is down: still pending
        return "pending"
    return receipt_status(receipt)


def _nonce_used(chain: ChainConfig, sender: str, nonce: int) -> bool:
    return chain_svc.transaction_count(chain, sender, "latest") > nonce


def _known_to_node(chain: ChainConfig, tx_hash: str) -> bool:
    """chain.transaction_known; True when the node does not answer (nothing is decided on a silent node)."""
    try:
        return chain_svc.transaction_known(chain_svc.web3_for(chain), tx_hash)
    except Exception:
        return True


def _dropped(chain: ChainConfig, group: list[Activity]) -> bool:
    """No member of a pending group (nonce unused, none mined) is the node's, the newest recorded
    more than DROP_AFTER_SECONDS ago (a broadcast may still be on its way before)."""
    if now_epoch() - max(r.created_at for r in group) <= DROP_AFTER_SECONDS:
        return False
    return not any(_known_to_node(chain, r.tx_hash) for r in group if r.tx_hash)


def _group(db: Any, row: Activity) -> list[Activity]:
    rows = db.exec(
        select(Activity).where(
            Activity.user_id == row.user_id, Activity.chain_id == row.chain_id, Activity.nonce == row.nonce
        )
    ).all()
    sender = (stored_fields(row) or {}).get("from", "").lower()
    return [r for r in rows if (stored_fields(r) or {}).get("from", "").lower() == sender]


def refresh_group(chain: ChainConfig, row: Activity) -> None:
    """Reads the sender's nonce, then the receipts of a pending entry's group, and stores the
    resolved statuses. No database transaction stays open over the RPC calls; two workers
    resolving the same group write the same statuses.

    The nonce comes first: read after the receipts, a member mined in between would leave the
    nonce used and no receipt seen, and the whole group, the user's mined send among it, would be
    marked replaced for good. A used nonce with no receipt counts as taken from outside the group
    only when the node knows none of the members (a node may serve the new nonce before the
    receipt: the next look decides)."""
    fields = stored_fields(row)
    with get_session() as db:
        fresh = db.get(Activity, stored_id(row))
        if fresh is None:
            return
        group = _group(db, fresh) if fields else [fresh]
    used = False
    if fields is not None and row.nonce is not None:
        try:
            used = _nonce_used(chain, fields["from"], row.nonce)
        except AppError:  # the node does not answer: decide on the next look
            used = False
    mined: dict[int, str] = {}
    for r in group:
        if r.status in ("ok", "failed"):
            mined[stored_id(r)] = r.status
        elif r.tx_hash:
            s = tx_status(chain, r.tx_hash)
            if s != "pending":
                mined[stored_id(r)] = s
    if used and not mined and any(_known_to_node(chain, r.tx_hash) for r in group if r.tx_hash):
        used = False
    if fields is not None and not used and not mined and _dropped(chain, group):
        changes = {stored_id(r): DROPPED for r in group if r.status == PENDING}
    else:
        changes = resolve_group([Member(stored_id(r), r.type, r.status) for r in group], mined, used)
        if not changes and not used and not mined:  # the node holds a member again (or one is new)
            changes = {stored_id(r): PENDING for r in group if r.status == DROPPED}
    if changes:
        with get_session() as db:
            for activity_id, status in changes.items():
                target = db.get(Activity, activity_id)
                if target is not None:
                    target.status = status
                    db.add(target)
            db.commit()
    row.status = changes.get(stored_id(row), row.status)


def nonce_held(user: User, tx: DecodedTx) -> bool:
    """Whether another pending send of the user holds `tx`'s nonce: a second tab that built a send
    before the first was sent gets the same nonce, and sent without `replaces` it would replace that
    one unseen, both tabs told "submitted" (an audit). Not a dropped one: the node holds none of it,
    and the next send rightly takes its nonce (the Send page builds on the node's count)."""
    with get_session() as db:
        rows = db.exec(
            select(Activity).where(
                Activity.user_id == stored_id(user),
                Activity.chain_id == tx.chain_id,
                Activity.nonce == tx.nonce,
                Activity.status == PENDING,
            )
        ).all()
    return any(
        r.tx_hash != tx.tx_hash and (stored_fields(r) or {}).get("from", "").lower() == tx.sender.lower() for r in rows
    )


def refresh(rows: list[Activity], limit: int) -> None:
    """Resolves the pending entries among `rows` (at most `limit` groups; a few RPC calls each)."""
    pending = [r for r in rows if r.status in UNRESOLVED and r.tx_hash and r.chain_id][:limit]
    chains = {c.chain_id: c for c in chain_svc.get_chains()} if pending else {}
    seen: set[tuple] = set()
    for row in pending:
        key = (row.chain_id, row.nonce) if row.nonce is not None else ("id", row.id)
        c = chains.get(row.chain_id or 0)
        if c is None or key in seen:
            continue
        seen.add(key)
        refresh_group(c, row)
    # entries of a group resolved through another row of the list
    by_id = {r.id: r for r in rows}
    if seen:
        with get_session() as db:
            for r in db.exec(select(Activity).where(col(Activity.id).in_(list(by_id)))).all():
                by_id[r.id].status = r.status


# ---------------------------------------------------------------- speed up and cancel


@dataclass(frozen=True)
class Pending:
    row: Activity
    fields: dict[str, Any]
    chain: ChainConfig
    group: list[Activity]


def parse_activity_id(value: Any) -> int | None:
    """`value` as an activity id (an int, or its decimal digits), else None."""
    if isinstance(value, bool) or not isinstance(value, int | str) or not _ACTIVITY_ID.fullmatch(str(value)):
        return None
    return int(value)


def _pending_entry(user: User, activity_id: Any) -> Pending:
    """The user's pending entry `activity_id`, resolved against the chain first: one that has
    been mined meanwhile is refused (already_mined), one whose nonce went to another
    transaction too (nonce_used)."""
    entry_id = parse_activity_id(activity_id)
    if entry_id is None:
        raise AppError("unknown_activity", "activity id must be a number")
    with get_session() as db:
        row = db.get(Activity, entry_id)
        if row is None or row.user_id != stored_id(user):
            raise AppError("unknown_activity", "no such activity of this user")
        db.expunge(row)
    fields = stored_fields(row)
    if fields is None:
        raise AppError("not_replaceable", "this entry is not a transaction the user signed")
    if fields["from"].lower() != (user.address or "").lower():
        raise AppError("sender_mismatch", "the entry was sent from another address")
    chain = tokens.get_chain(row.chain_id)
    if row.status in UNRESOLVED:
        refresh_group(chain, row)
    if row.status in ("ok", "failed"):
        raise AppError("already_mined", "the transaction is already mined")
    if row.status not in UNRESOLVED:
        raise AppError("nonce_used", "another transaction already took this nonce")
    with get_session() as db:
        group = _group(db, row)
        for r in group:
            db.expunge(r)
    if any(r.status in ("ok", "failed") for r in group) or _mined_not_final(chain, group):
        raise AppError("already_mined", "a transaction with this nonce is already mined")
    return Pending(row, fields, chain, group)


def _mined_not_final(chain: ChainConfig, group: list[Activity]) -> bool:
    """Whether a member of a pending group is mined in a block not final yet (tx_status: pending
    until it is): its nonce is used, and a replacement could only be refused by the node. False
    when the node does not answer (the node refuses the replacement then, if it is mined)."""
    hashes = [r.tx_hash for r in group if r.tx_hash]
    if chain.index_confirmations == 0 or not hashes:
        return False
    try:
        return bool(chain_svc.receipts(chain_svc.web3_for(chain), hashes))
    except Exception:  # the node is down or refuses the batch
        return False


def _group_prices(p: Pending) -> list[int]:
    prices = []
    for r in p.group:
        f = stored_fields(r)
        if f is not None:
            prices.append(int(f["gas_price"]))
    return prices or [int(p.fields["gas_price"])]


def build_replacement(user: User | int, activity_id: Any, kind: Any) -> dict[str, str]:
    """The unsigned speed-up or cancel of the user's pending entry (same nonce, a price above
    every one sent with it and at least the node's), for the browser to sign on /sign."""
    if kind not in KINDS:
        raise AppError("invalid_request", "kind must be speedup or cancel")
    u = accounts.load_user(user)
    p = _pending_entry(u, activity_id)
    price = replacement_gas_price(_group_prices(p), chain_svc.gas_price(p.chain))
    return replacement_tx(kind, p.fields, p.fields["from"], price)


@dataclass(frozen=True)
class Context:
    """What /sign says of a replacement: its kind, the replaced tx and fee."""

    kind: str
    old_tx_hash: str
    old_fee: str  # gas x price (an OP-stack chain's L1 data fee aside: shown_old_fee)
    nonce: int
    old_fields: dict[str, Any] = field(default_factory=dict)  # the replaced transaction's (stored_fields)


def fee_text(chain: ChainConfig, gas_limit: int, gas_price: int, l1_fee: int = 0) -> str:
    """A fee in the native coin at full precision: a replacement's +10% must show next to the old fee.
    `l1_fee`: an OP-stack chain's L1 data fee on top (services.chain.l1_fee)."""
    native = chain.native_token()
    units = gas_limit * gas_price + l1_fee
    return f"{format_balance(units, native.token_decimals, max_decimals=native.token_decimals)} {native.token_symbol}"


def check_replacement(user: User, tx: DecodedTx, activity_id: Any) -> Context:
    """A signed (or, for /sign, unsigned and decoded) transaction may replace the user's entry
    `activity_id`: same chain, sender and nonce, the same call or a cancel, and a price a node
    accepts. Raises already_mined / nonce_used / replacement_mismatch / replacement_underpriced."""
    p = _pending_entry(user, activity_id)
    f = p.fields
    if tx.chain_id != p.chain.chain_id or tx.nonce != f["nonce"] or tx.sender.lower() != f["from"].lower():
        raise AppError("replacement_mismatch", "not the same chain, sender and nonce")
    if is_cancel(tx):
        kind = "cancel"
    elif (
        (tx.to or "").lower() == f["to"].lower()
        and tx.data.lower() == f["data"].lower()
        and tx.value == int(f["value"])
        and tx.gas_limit == int(f["gas_limit"])
    ):
        kind = "speedup"
    else:
        raise AppError("replacement_mismatch", "neither the same call nor a cancel")
    if tx.gas_price < bump(max(_group_prices(p))):
        raise AppError("replacement_underpriced", "the gas price must be at least 10% above the pending one")
    old = p.row
    return Context(kind, old.tx_hash or "", fee_text(p.chain, int(f["gas_limit"]), int(f["gas_price"])), f["nonce"], f)


def shown_old_fee(chain: ChainConfig, context: Context) -> str:
    """The replaced transaction's fee as /sign shows it next to the replacement's (pending.fee_text
    of both): on an OP-stack chain with its L1 data fee (services.chain.l1_fee) too, as the
    replacement's has, else the +10% looked like many times the fee there. Reads the chain's oracle
    (a thread's); AppError rpc_unavailable when it does not answer."""
    f = context.old_fields
    if chain.l1_fee_oracle is None or not f:
        return context.old_fee
    return fee_text(chain, int(f["gas_limit"]), int(f["gas_price"]), chain_svc.l1_fee(chain, f))


def unsigned(tx: dict[str, str], sender: str) -> DecodedTx:
    """A /sign link's transaction as check_replacement reads it (before signing)."""
    return DecodedTx(
        sender=sender,
        chain_id=int(tx["chain_id"]),
        nonce=int(tx["nonce"]),
        gas_price=int(tx["gas_price"]),
        gas_limit=int(tx["gas_limit"]),
        to=tx["to"],
        value=int(tx["value"]),
        data=tx["data"],
        tx_hash="",
    )


def node_refusal(error: AppError) -> AppError:
    """A node's refusal of a replacement in words the user can act on."""
    text = error.message.lower()
    if "nonce too low" in text or "nonce has already been used" in text:
        return AppError("nonce_used", error.message)
    if "underpriced" in text:
        return AppError("replacement_underpriced", error.message)
    return error
