"""Rows nobody can use any more, deleted (the relayer process, beside its indexer: run_due).

- Sessions that expired more than a day ago (a revoked one expires like the others): a request
  with their cookie is refused the same with the row or without it (services.sessions reads only
  live ones), and a sign-out of one answers the same. Each sign-in adds one, for good otherwise.
- Payment quotes never executed, made more than a day ago: execute refuses a quote older than
  PAYMENT_QUOTE_TTL_SECONDS, a status read answers unknown_payment for a quote, and a lapsed quote
  holds its ref no more (services.payments._frees_its_id). The payment page asks for one a second
  and any link makes one: without this they outnumbered the payments.

Payments (every executed one), activity entries and webhooks are kept: users and merchants read
them. Deleted BATCH rows per statement, each in a transaction of its own (no long lock), at most
MAX_BATCHES per kind and pass; one process at a time (core.db.exclusive_turn), the others skip.
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import delete, select
from sqlalchemy.sql import ColumnElement

from wallet_app.core.config import get_settings
from wallet_app.core.db import exclusive_turn, get_session
from wallet_app.models import Payment, UserSession, now_epoch

log = logging.getLogger(__name__)

KEEP_SECONDS = 86_400  # an expired session, a lapsed quote: deleted this long after
BATCH = 5_000
MAX_BATCHES = 100  # per kind and pass: a backlog is worked off over a few passes
INTERVAL_SECONDS = 3_600.0  # run_due: a pass at most this often per process


def dead_conditions(now: int, quote_ttl: int) -> dict[str, tuple[type, ColumnElement[bool]]]:
    """What each kind's rows are dead by: kind -> (model, condition)."""
    return {
        "sessions": (UserSession, UserSession.expires_at < now - KEEP_SECONDS),  # type: ignore[dict-item]
        "quotes": (
            Payment,
            (Payment.status == "quoted") & (Payment.created_at < now - quote_ttl - KEEP_SECONDS),  # type: ignore[dict-item]
        ),
    }


def run_once(now: int | None = None) -> dict[str, int]:
    """Deletes the dead rows (see module doc); -> how many of each kind ({} when another process
    holds the turn)."""
    now = now_epoch() if now is None else now
    counts: dict[str, int] = {}
    with exclusive_turn("retention") as mine:
        if not mine:
            return counts
        for kind, (model, dead) in dead_conditions(now, get_settings().payment_quote_ttl_seconds).items():
            table = model.__table__  # type: ignore[attr-defined]
            counts[kind] = 0
            for _ in range(MAX_BATCHES):
                with get_session() as db:
                    ids = select(table.c.id).where(dead).limit(BATCH).scalar_subquery()
                    deleted = getattr(db.execute(delete(table).where(table.c.id.in_(ids))), "rowcount", 0)
                    db.commit()
                counts[kind] += deleted
                if deleted < BATCH:
                    break
    return counts


_last_run: float | None = None  # time.monotonic() of this process's last pass


def run_due() -> dict[str, int]:
    """run_once() when INTERVAL_SECONDS have passed since this process's last one (the first call
    runs it); a failure is logged and tried again at the next interval. -> its counts, or {}."""
    global _last_run
    if _last_run is not None and time.monotonic() - _last_run < INTERVAL_SECONDS:
        return {}
    _last_run = time.monotonic()
    try:
        counts = run_once()
    except Exception as e:  # the database out of reach: the indexer's loop goes on
        log.warning("retention pass failed (%s); next in %d s", type(e).__name__, int(INTERVAL_SECONDS))
        return {}
    if any(counts.values()):
        log.info("retention: deleted %s", counts)
    return counts
