"""services.retention on the test database (SQLite; PostgreSQL with TEST_DATABASE=pg): the dead rows
go (sessions long expired, quotes never executed made long ago), everything a user or merchant
still reads stays."""

import threading

from sqlmodel import select

from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.models import Payment, UserSession, now_epoch, stored_id
from wallet_app.relayer import run_indexer
from wallet_app.services import indexer, retention, sessions

NOW = 1_900_000_000
DAY = 86_400
TTL = 900  # PAYMENT_QUOTE_TTL_SECONDS' default


def _user(s, sub: str = "sub-1") -> int:
    return stored_id(crud.add_user(s, sub, "a@example.com", "en"))


def _payment(s, user_id: int, n: int, status: str, created_at: int) -> None:
    row = crud.add_quote(s, f"0x{n:064x}", user_id, 31337, "0xtoken", "5", "0xfrom", None)
    row.status, row.created_at = status, created_at
    if status != "quoted":
        row.settled, row.claimed_at = True, created_at + 10


def _left(model, column) -> list:
    with get_session() as s:
        return sorted(s.exec(select(column)).all())


def test_sessions_expired_over_a_day_ago_and_lapsed_quotes_go_and_the_rest_stays(db):
    with get_session() as s:
        uid = _user(s)
        for token, expires_at in (("old", NOW - DAY - 1), ("recent", NOW - DAY + 60), ("live", NOW + DAY)):
            crud.add_session(s, uid, token, expires_at)
        _payment(s, uid, 1, "quoted", NOW - TTL - DAY - 1)  # lapsed a day ago: dead
        _payment(s, uid, 2, "quoted", NOW - TTL - DAY + 60)  # lapsed, not yet a day ago
        _payment(s, uid, 3, "quoted", NOW - 10)  # open
        for n, status in ((4, "ok"), (5, "failed"), (6, "pending")):
            _payment(s, uid, n, status, NOW - 400 * DAY)  # executed: kept, however old
        s.commit()
    assert retention.run_once(NOW) == {"sessions": 1, "quotes": 1}
    assert _left(UserSession, UserSession.token_hash) == ["live", "recent"]
    assert _left(Payment, Payment.payment_id) == [f"0x{n:064x}" for n in (2, 3, 4, 5, 6)]
    assert retention.run_once(NOW) == {"sessions": 0, "quotes": 0}


def test_a_deleted_session_is_refused_as_an_expired_one_was(db):
    raw, now = sessions.create_session(_new_user()), now_epoch()
    with get_session() as s:
        row = crud.get_session_by_hash(s, sessions.hash_token(raw))
        row.expires_at = now - DAY - 1
        s.commit()
    assert sessions.lookup_user(raw) is None
    assert retention.run_once(now) == {"sessions": 1, "quotes": 0}
    assert sessions.lookup_user(raw) is None
    assert sessions.revoke_session(raw) is False  # a sign-out of it: 200 all the same (api/auth)


def _new_user() -> int:
    with get_session() as s:
        uid = _user(s, "sub-2")
        s.commit()
        return uid


def test_a_backlog_goes_in_batches(db, monkeypatch):
    monkeypatch.setattr(retention, "BATCH", 2)
    monkeypatch.setattr(retention, "MAX_BATCHES", 2)
    with get_session() as s:
        uid = _user(s)
        for n in range(5):
            crud.add_session(s, uid, f"t{n}", NOW - 2 * DAY)
        s.commit()
    assert retention.run_once(NOW) == {"sessions": 4, "quotes": 0}  # two batches of two this pass
    assert retention.run_once(NOW) == {"sessions": 1, "quotes": 0}  # the rest at the next


def test_the_indexers_thread_runs_it_once_an_interval(db, monkeypatch):
    passes: list[int] = []
    stop = threading.Event()
    monkeypatch.setattr(retention, "_last_run", None)
    monkeypatch.setattr(retention, "run_once", lambda: passes.append(1) or {})

    def indexer_pass(owner):
        indexer_pass.calls += 1
        if indexer_pass.calls == 3:
            stop.set()
        return {}

    indexer_pass.calls = 0
    monkeypatch.setattr(indexer, "run_once", indexer_pass)
    monkeypatch.setattr(indexer, "release_lease", lambda chain_id, owner: None)
    run_indexer(stop, interval=0)
    assert indexer_pass.calls == 3 and passes == [1]  # at the first pass, then not before the hour
