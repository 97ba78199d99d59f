"""core.db on PostgreSQL: a pooled connection is pinged before use only after it sat idle
PING_AFTER_IDLE_SECONDS (a burst reuses connections without the extra round trip); a dead one
found by that ping is replaced without the caller seeing an error, and one that died right after
its last use fails one statement and renews the pool."""

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from tests.conftest import needs_pg
from tests.waits import wait_until
from wallet_app.core import db as db_module

pytestmark = needs_pg


@pytest.fixture
def pings(db, monkeypatch):
    """The pings the engine sends, counted."""
    sent: list[object] = []
    do_ping = db.dialect.do_ping

    def counted(dbapi_conn):
        sent.append(dbapi_conn)
        return do_ping(dbapi_conn)

    monkeypatch.setattr(db.dialect, "do_ping", counted)
    return sent


def _backend(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(text("SELECT pg_backend_pid()")).scalar_one()


def _age_pool(engine, seconds: float) -> None:
    """As if every pooled connection had been checked in `seconds` ago."""
    for record in list(engine.pool._pool.queue):
        record.info["used_at"] -= seconds


def test_a_connection_used_a_moment_ago_is_not_pinged(db, pings):
    first = _backend(db)  # a new connection: not pinged either
    assert [_backend(db) for _ in range(5)] == [first] * 5
    assert pings == []


def test_a_connection_idle_past_the_limit_is_pinged_first(db, pings):
    first = _backend(db)
    _age_pool(db, db_module.PING_AFTER_IDLE_SECONDS)
    assert _backend(db) == first
    assert len(pings) == 1
    assert _backend(db) == first  # used just now: no second ping
    assert len(pings) == 1


def _end_from_outside(engine, pid: int) -> None:
    """Ends a server process of the pool's as a restart or failover ends it."""
    url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        count = "SELECT count(*) FROM pg_stat_activity WHERE pid = %s"
        wait_until(lambda: other.execute(count, (pid,)).fetchone() == (0,), 10, "the backend did not end")


def test_an_idle_connection_the_server_ended_is_replaced_unseen(db, pings):
    dead = _backend(db)  # idle in the pool now
    _end_from_outside(db, dead)
    _age_pool(db, db_module.PING_AFTER_IDLE_SECONDS)
    assert _backend(db) != dead  # no error: the failed ping replaced it
    assert len(pings) == 1


def test_one_ended_right_after_use_fails_one_statement_and_the_pool_is_replaced(db, pings):
    """The trade of not pinging: that one statement fails (an OperationalError: the API's 503
    database_unavailable), and the pool is renewed, so the next checkout works."""
    first, second = db.connect(), db.connect()
    dead, other = (c.execute(text("SELECT pg_backend_pid()")).scalar_one() for c in (first, second))
    second.commit()
    first.close()  # idle in the pool, used a moment ago; `second` stays out of it
    _end_from_outside(db, dead)
    with pytest.raises(OperationalError), db.connect() as conn:
        conn.execute(text("SELECT 1"))
    second.close()
    assert _backend(db) not in (dead, other)  # the live one made before the failure is replaced too
    assert pings == []
