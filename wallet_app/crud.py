"""Row-level reads and writes. Callers own the Session and the commit."""

from typing import Any

from sqlalchemy import Float, Row, bindparam, cast, delete, func, insert, text, update
from sqlmodel import Session, col, select

from wallet_app.models import (
    OWN_ENTRY,
    RECEIVED_ENTRY,
    UNRESOLVED,
    UNSETTLED_SENT,
    Activity,
    Payment,
    User,
    UserSession,
    UserToken,
    now_epoch,
)


def get_user(db: Session, user_id: int) -> User | None:
    return db.get(User, user_id)


def get_user_by_sub(db: Session, google_sub: str) -> User | None:
    return db.exec(select(User).where(User.google_sub == google_sub)).first()


def add_user(db: Session, google_sub: str, email: str, locale: str) -> User:
    user = User(google_sub=google_sub, email=email, locale=locale)
    db.add(user)
    db.flush()
    return user


def add_session(db: Session, user_id: int, token_hash: str, expires_at: int) -> UserSession:
    row = UserSession(user_id=user_id, token_hash=token_hash, expires_at=expires_at)
    db.add(row)
    db.flush()
    return row


def get_session_by_hash(db: Session, token_hash: str) -> UserSession | None:
    return db.exec(select(UserSession).where(UserSession.token_hash == token_hash)).first()


def active_user_for_hash(db: Session, token_hash: str, now: int) -> User | None:
    """The user of a session that is neither revoked nor expired."""
    stmt = (
        select(User)
        .join(UserSession, col(UserSession.user_id) == col(User.id))
        .where(
            UserSession.token_hash == token_hash,
            UserSession.revoked == False,  # noqa: E712 (SQL expression)
            UserSession.expires_at > now,
        )
    )
    return db.exec(stmt).first()


def active_session_users(db: Session, token_hashes: list[str], now: int) -> dict[str, tuple[User, int]]:
    """The live sessions (not revoked, not expired) among these: token hash -> (user, expires_at)."""
    stmt = (
        select(UserSession.token_hash, User, UserSession.expires_at)
        .join(UserSession, col(UserSession.user_id) == col(User.id))
        .where(
            col(UserSession.token_hash).in_(token_hashes),
            UserSession.revoked == False,  # noqa: E712 (SQL expression)
            UserSession.expires_at > now,
        )
    )
    return {token_hash: (user, expires_at) for token_hash, user, expires_at in db.exec(stmt)}


# ---------------------------------------------------------------- tokens


def list_user_tokens(db: Session, user_id: int) -> list[UserToken]:
    return list(db.exec(select(UserToken).where(UserToken.user_id == user_id).order_by(col(UserToken.id))))


def get_user_token(db: Session, user_id: int, chain_id: int, token_address: str) -> UserToken | None:
    """`token_address` lowercase, as stored."""
    return db.exec(
        select(UserToken).where(
            UserToken.user_id == user_id, UserToken.chain_id == chain_id, UserToken.token_address == token_address
        )
    ).first()


def add_user_token(
    db: Session, user_id: int, chain_id: int, token_address: str, symbol: str, name: str, decimals: int
) -> UserToken:
    row = UserToken(
        user_id=user_id,
        chain_id=chain_id,
        token_address=token_address.lower(),
        symbol=symbol[:64],
        name=name[:128],
        decimals=decimals,
    )
    db.add(row)
    db.flush()
    return row


# ---------------------------------------------------------------- activities


# Built once, run with their parameters: building an INSERT or UPDATE cost more than running it.
_INSERT_ACTIVITY = insert(Activity.__table__)  # type: ignore[attr-defined]


def add_activity(db: Session, **fields: Any) -> int:
    """The new entry's id. One INSERT on the session's connection, no ORM object: the unit of
    work's flush cost an execute's write (services.payments) more than the statement."""
    inserted = db.connection().execute(_INSERT_ACTIVITY, fields).inserted_primary_key
    assert inserted is not None  # a single-row INSERT always has one
    return int(inserted[0])


def delete_activity(db: Session, activity_id: int) -> None:
    db.execute(delete(Activity).where(col(Activity.id) == activity_id))


def get_activity(db: Session, activity_id: int) -> Activity | None:
    return db.get(Activity, activity_id)


def list_activities(db: Session, user_id: int, limit: int) -> list[Activity]:
    """Newest first: the user's own newest `limit` entries (sends, payments, approvals: all but the
    transfers received), their pending ones (`limit` at most) however old, and the newest `limit`
    transfers received. Read apart: anyone can send the user transfers (dust, address poisoning),
    and a flood of them pushed the user's own sends, and a pending one's Speed up, off the list.
    The type conditions are the partial indexes' own words (models.OWN_ENTRY, RECEIVED_ENTRY)."""
    newest = (col(Activity.created_at).desc(), col(Activity.id).desc())
    mine = select(Activity).where(Activity.user_id == user_id)
    queries = [
        mine.where(text(OWN_ENTRY)),
        mine.where(text(OWN_ENTRY), col(Activity.status).in_(UNRESOLVED)),
        mine.where(text(RECEIVED_ENTRY)),
    ]
    rows = {r.id: r for query in queries for r in db.exec(query.order_by(*newest).limit(limit))}
    return sorted(rows.values(), key=lambda r: (r.created_at, r.id), reverse=True)


# ---------------------------------------------------------------- payments


def get_payment(db: Session, user_id: int, payment_id: str) -> Payment | None:
    """By the user's public payment id (0x + 64 lowercase hex): a merchant link's ref is the payment
    id of each user who pays it (uq_payments_user_payment_id). The newest: one that failed for good
    may have been followed by another of the same id (the order paid again)."""
    return db.exec(
        select(Payment)
        .where(Payment.user_id == user_id, Payment.payment_id == payment_id)
        .order_by(col(Payment.id).desc())
    ).first()


_PAYMENTS = Payment.__table__  # type: ignore[attr-defined]
_PAYMENT_BY_ID = (
    select(_PAYMENTS)
    .where(_PAYMENTS.c.user_id == bindparam("user_id"), _PAYMENTS.c.payment_id == bindparam("payment_id"))
    .order_by(_PAYMENTS.c.id.desc())
    .limit(1)
)


def payment_columns(db: Session, user_id: int, payment_id: str) -> Row[Any] | None:
    """get_payment's row as plain columns (same attribute names), for reads that change nothing:
    building the ORM object cost a status read most of its time."""
    return db.connection().execute(_PAYMENT_BY_ID, {"user_id": user_id, "payment_id": payment_id}).first()


def final_payments(db: Session, keys: list[tuple[int, str]]) -> dict[tuple[int, str], tuple[str, str | None]]:
    """Those of these payments (user id, payment id) that are ok or failed: -> (status, reason)
    (the status waiters' one query). Each key's newest row (get_payment's): the payment a user's
    earlier failure of the same id was followed by is not answered with that failure."""
    wanted = set(keys)
    found = db.exec(
        select(Payment.user_id, Payment.payment_id, Payment.status, Payment.reason)
        .where(col(Payment.payment_id).in_({pid for _, pid in wanted}))
        .order_by(col(Payment.id))
    )
    newest = {(uid, pid): (status, reason) for uid, pid, status, reason in found if (uid, pid) in wanted}
    return {key: answer for key, answer in newest.items() if answer[0] in ("ok", "failed")}


_ORDER_PAID_BY_OTHERS = (
    select(_PAYMENTS.c.id)
    .where(
        _PAYMENTS.c.payment_id == bindparam("payment_id"),
        _PAYMENTS.c.user_id != bindparam("user_id"),
        _PAYMENTS.c.chain_id == bindparam("chain_id"),
        _PAYMENTS.c.merchant_address == bindparam("merchant_address"),
        _PAYMENTS.c.token_address == bindparam("token_address"),
        _PAYMENTS.c.amount == bindparam("amount"),
        _PAYMENTS.c.status.in_(("pending", "ok")),
    )
    .limit(1)
)


def order_paid_by_others(
    db: Session, user_id: int, payment_id: str, chain_id: int, merchant_address: str, token_address: str, amount: str
) -> bool:
    """Whether another user has paid (or is paying: executed, not failed) this ref to this merchant,
    in this token and amount: the order a merchant link names is paid, and paying it again would
    move the money twice. A quote, a failed payment or another order under the same ref (another
    merchant, token or amount: anyone can pay 1 unit with any ref) is none. On the session's
    connection, a statement built once: every execute asks it (through the ORM it cost a tenth of
    an execute's CPU)."""
    params = {
        "user_id": user_id,
        "payment_id": payment_id,
        "chain_id": chain_id,
        "merchant_address": merchant_address,
        "token_address": token_address,
        "amount": amount,
    }
    return db.connection().execute(_ORDER_PAID_BY_OTHERS, params).first() is not None


def recent_payment(
    db: Session,
    user_id: int,
    chain_id: int,
    merchant_address: str,
    token_address: str,
    amount: str,
    claimed_after: int,
    created_after: int,
) -> tuple[str, int] | None:
    """(payment_id, claimed_at) of the user's newest payment of exactly this (executed after
    `claimed_after`, not failed), or None. `created_after`: no quote executed after `claimed_after`
    was made before it (a quote may be executed until its TTL, so up to that long before)."""
    found = db.exec(
        select(Payment.payment_id, Payment.claimed_at)
        .where(
            Payment.user_id == user_id,
            Payment.created_at >= created_after,  # ix_payments_user_created
            col(Payment.claimed_at) >= claimed_after,
            Payment.chain_id == chain_id,
            Payment.merchant_address == merchant_address,
            Payment.token_address == token_address,
            Payment.amount == amount,
            col(Payment.status).in_(("pending", "ok")),
        )
        .order_by(col(Payment.claimed_at).desc())
        .limit(1)
    ).first()
    return (found[0], int(found[1] or 0)) if found is not None else None


def relayed_tx_hashes(db: Session, chain_id: int, payment_id: str, limit: int) -> list[str]:
    """The relayed transactions our database holds for this ref on this chain (any payer's), newest first."""
    found = db.exec(
        select(Payment.tx_hash)
        .where(Payment.payment_id == payment_id, Payment.chain_id == chain_id, col(Payment.tx_hash).is_not(None))
        .order_by(col(Payment.id).desc())
        .limit(limit)
    )
    return [h for h in found if h]


def find_open_quote(
    db: Session,
    user_id: int,
    chain_id: int,
    token_address: str,
    amount: str,
    from_address: str,
    merchant_address: str | None,
    created_after: int,
) -> Payment | None:
    """The newest unused quote for exactly this request made after `created_after`."""
    return db.exec(
        select(Payment)
        .where(
            Payment.user_id == user_id,
            Payment.status == "quoted",
            Payment.chain_id == chain_id,
            Payment.token_address == token_address,
            Payment.amount == amount,
            Payment.from_address == from_address,
            Payment.merchant_address == merchant_address,
            Payment.created_at >= created_after,
        )
        .order_by(col(Payment.id).desc())
    ).first()


def add_quote(
    db: Session,
    payment_id: str,
    user_id: int,
    chain_id: int,
    token_address: str,
    amount: str,
    from_address: str,
    merchant_address: str | None,
) -> Payment:
    row = Payment(
        payment_id=payment_id,
        user_id=user_id,
        chain_id=chain_id,
        token_address=token_address,
        amount=amount,
        from_address=from_address,
        merchant_address=merchant_address,
    )
    db.add(row)
    db.flush()
    return row


def drop_unused_quote(db: Session, user_id: int, payment_id: str, created_before: int) -> None:
    """Deletes the user's quote if it was never executed and was made before `created_before`."""
    db.execute(
        delete(Payment).where(
            col(Payment.user_id) == user_id,
            col(Payment.payment_id) == payment_id,
            col(Payment.status) == "quoted",
            col(Payment.created_at) < created_before,
        )
    )


def quote_times(db: Session, user_id: int, created_after: int, open_only: bool = False) -> list[int]:
    """created_at of the user's quotes made after `created_after`, oldest first (open_only: those
    not executed yet). The quotas count them and tell when the oldest leaves the window."""
    query = select(Payment.created_at).where(Payment.user_id == user_id, Payment.created_at >= created_after)
    if open_only:
        query = query.where(Payment.status == "quoted")
    return list(db.exec(query.order_by(col(Payment.created_at))))


_CLAIM_TIMES = (
    select(_PAYMENTS.c.claimed_at)
    .where(
        _PAYMENTS.c.user_id == bindparam("user_id"),
        _PAYMENTS.c.created_at >= bindparam("created_after"),  # ix_payments_user_created
        _PAYMENTS.c.claimed_at >= bindparam("claimed_after"),
    )
    .order_by(_PAYMENTS.c.claimed_at)
)


def claim_times(db: Session, user_id: int, claimed_after: int, created_after: int) -> list[int]:
    """claimed_at of the user's payments executed (quotes claimed) after `claimed_after`, oldest
    first. `created_after`: no quote claimed after `claimed_after` was made before it (a quote is
    executed up to its TTL after it was made). Without it the read went through all the user's
    payments ever made, or all the chain's claim times (ix_payments_chain_spend), in every execute,
    once under the chain's budget lock."""
    params = {"user_id": user_id, "claimed_after": claimed_after, "created_after": created_after}
    return [t for t in db.connection().execute(_CLAIM_TIMES, params).scalars() if t is not None]


_CLAIM_QUOTE = (
    update(_PAYMENTS)
    .where(
        _PAYMENTS.c.id == bindparam("row_id"),
        _PAYMENTS.c.status == "quoted",
    )
    .values(
        status="pending",
        merchant_address=bindparam("new_merchant"),
        deadline=bindparam("new_deadline"),
        signature=bindparam("new_signature"),
        permit=bindparam("new_permit"),
        activity_id=bindparam("new_activity"),
        claimed_at=bindparam("now"),
        updated_at=bindparam("now"),
        gas_cost_wei=bindparam("new_gas_cost"),
    )
)


def claim_quote(
    db: Session,
    row_id: int,
    merchant_address: str,
    deadline: int,
    signature: str,
    activity_id: int | None = None,
    permit: str | None = None,
    gas_cost_wei: int | None = None,
) -> bool:
    """quoted -> pending in one UPDATE: of two concurrent claims exactly one gets True. On the
    session's connection: no Payment of a session is updated in memory (a claim loads the row only
    after losing it), and the ORM's search for one cost the write."""
    params = {
        "row_id": row_id,
        "new_merchant": merchant_address,
        "new_deadline": deadline,
        "new_signature": signature,
        "new_permit": permit,
        "new_activity": activity_id,
        "new_gas_cost": gas_cost_wei,
        "now": now_epoch(),
    }
    return db.connection().execute(_CLAIM_QUOTE, params).rowcount == 1


# Summed as a float: SQLite's integer sum() fails past 2^63 wei, and a float is exact up to 2^53
# wei (0.009 ETH) and within 1e-15 of the sum above, plenty for a budget.
_RELAYER_SPEND = select(func.coalesce(func.sum(cast(_PAYMENTS.c.gas_cost_wei, Float)), 0)).where(
    _PAYMENTS.c.chain_id == bindparam("chain_id"), _PAYMENTS.c.claimed_at >= bindparam("claimed_after")
)


def relayer_spend(db: Session, chain_id: int, claimed_after: int, user_id: int | None = None) -> int:
    """Wei the relayer's transactions for this chain's payments executed after `claimed_after`
    cost (Payment.gas_cost_wei), one user's alone with `user_id`: one aggregate over
    ix_payments_chain_spend (the hour's rows of the chain)."""
    params = {"chain_id": chain_id, "claimed_after": claimed_after}
    query = _RELAYER_SPEND
    if user_id is not None:
        query, params["user_id"] = query.where(_PAYMENTS.c.user_id == bindparam("user_id")), user_id
    return int(db.connection().execute(query, params).scalar_one())


def max_relayer_nonce(db: Session, chain_id: int, relayer_address: str) -> int | None:
    return db.exec(
        select(func.max(Payment.nonce)).where(Payment.chain_id == chain_id, Payment.relayer_address == relayer_address)
    ).one()


_PAYMENTS_UNMINED = (
    select(func.count())
    .select_from(_PAYMENTS)
    .where(
        _PAYMENTS.c.chain_id == bindparam("chain_id"),
        _PAYMENTS.c.status == "pending",
        _PAYMENTS.c.settled == False,  # noqa: E712 (SQL expression)
    )
)


def payments_unmined(db: Session, chain_id: int) -> int:
    """Executed payments of the chain not yet mined (pending: queued, or sent and waiting). A
    statement built once, on the session's connection (every execute asks it)."""
    return int(db.connection().execute(_PAYMENTS_UNMINED, {"chain_id": chain_id}).scalar_one())


def queued_payments(db: Session, chain_id: int, limit: int) -> list[Payment]:
    """Executed payments waiting for the relayer (pending, no nonce yet), oldest claim first."""
    return list(
        db.exec(
            select(Payment)
            .where(
                Payment.chain_id == chain_id,
                Payment.status == "pending",
                col(Payment.nonce).is_(None),
                Payment.settled == False,  # noqa: E712 (SQL expression)
            )
            .order_by(col(Payment.claimed_at), col(Payment.id))
            .limit(limit)
        )
    )


def payments_in_flight(db: Session, chain_id: int, payers: set[str]) -> list[tuple[str, str, str]]:
    """(payer, token, amount) of these payers' payments that are sent and not yet final: what
    their allowance and balance still owe to transactions on their way."""
    rows = db.exec(
        select(Payment.from_address, Payment.token_address, Payment.amount).where(
            Payment.chain_id == chain_id,
            Payment.status == "pending",
            col(Payment.nonce).is_not(None),
            col(Payment.from_address).in_(sorted(payers)),
        )
    )
    return [(payer, token, amount) for payer, token, amount in rows]


def unsettled_payments(db: Session, chain_id: int) -> list[Payment]:
    """The relayed payments whose nonce is not yet known to be consumed on chain, by relayer and
    nonce (a relayer key replaced since may have sent some). The condition is the partial index's
    own words (models.UNSETTLED_SENT, ix_payments_unsettled): SQLite uses it only then."""
    return list(
        db.exec(
            select(Payment)
            .where(Payment.chain_id == chain_id, text(UNSETTLED_SENT))
            .order_by(col(Payment.relayer_address), col(Payment.nonce))
        )
    )
