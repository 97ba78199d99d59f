"""The hot paths' queries use their indexes (SQLite; PostgreSQL with TEST_DATABASE=pg): each read is
called as the app calls it, its statements caught, and the database's plan of each must name the
index. bench/growth.py shows what each one costs on a year of data without it.

On PostgreSQL sequential scans are disabled for the plan: the tables here are small, and the plan
must show that the index can answer the query (its columns and, for a partial index, its
condition match), not what the planner picks for three rows."""

from collections.abc import Callable
from types import SimpleNamespace

from sqlalchemy import event, text

from tests.conftest import ON_PG
from wallet_app import crud
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_engine, get_session
from wallet_app.models import UNSETTLED_SENT, Activity
from wallet_app.services import indexer, payments, pending


def plans(call: Callable[[], object]) -> list[str]:
    """The plan of every SELECT `call` sends, one text each."""
    engine = get_engine()
    caught: list[tuple[str, object]] = []

    def catch(_conn, _cursor, statement, parameters, _context, _many) -> None:
        caught.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", catch)
    try:
        call()
    finally:
        event.remove(engine, "before_cursor_execute", catch)
    found = []
    for statement, parameters in caught:
        if not statement.lstrip().upper().startswith("SELECT"):
            continue
        with engine.connect() as conn:
            cursor = conn.connection.driver_connection.cursor()
            if ON_PG:
                cursor.execute("SET LOCAL enable_seqscan = off")
                cursor.execute("EXPLAIN " + statement, parameters)
            else:
                cursor.execute("EXPLAIN QUERY PLAN " + statement, parameters)
            found.append("\n".join(str(row[-1]) for row in cursor.fetchall()))
            conn.rollback()
    return found


def test_the_relayers_follow_loop_reads_the_unsettled_payments_by_their_index(db):
    with get_session() as s:
        [plan] = plans(lambda: crud.unsettled_payments(s, 31337))
    assert "ix_payments_unsettled" in plan
    assert "Sort" not in plan and "TEMP B-TREE" not in plan  # in the index's order


def test_the_unsettled_index_holds_only_the_payments_followed(db):
    with get_session() as s:
        user = crud.add_user(s, "sub-1", "a@example.com", "en")
        for n, settled in ((1, True), (2, False), (None, False)):
            row = crud.add_quote(s, f"0x{n or 0:064x}", user.id, 31337, "0xtoken", "5", "0xfrom", None)
            row.relayer_address, row.nonce, row.settled = "0xrelayer", n, settled
        s.commit()
        assert [r.nonce for r in crud.unsettled_payments(s, 31337)] == [2]
        assert crud.unsettled_payments(s, 1) == []
    with get_engine().connect() as conn:
        if not ON_PG:
            count = "SELECT count(*) FROM payments INDEXED BY ix_payments_unsettled WHERE " + UNSETTLED_SENT
            assert conn.execute(text(count)).scalar_one() == 1


def test_an_executes_quota_reads_only_the_users_last_hour_of_quotes(db):
    """Not all the user's payments ever made, nor the chain's claim times (ix_payments_chain_spend):
    a range of ix_payments_user_created, by user and creation time."""
    with get_session() as s:
        [plan] = plans(lambda: payments._executed_in_the_hour(s, 1, 100_000))
    assert "ix_payments_user_created" in plan
    assert ("created_at >= " if ON_PG else "created_at>?") in plan


def test_an_executes_quota_counts_a_payment_claimed_late_in_its_quotes_life(db):
    now = 100_000
    ttl = get_settings().payment_quote_ttl_seconds
    with get_session() as s:
        user = crud.add_user(s, "sub-1", "a@example.com", "en")
        for made, claimed in ((now - 3600 - ttl - 30, now - 3590), (now - 7200, now - 3700), (now - 10, None)):
            row = crud.add_quote(s, f"0x{made:064x}", user.id, 31337, "0xtoken", "5", "0xfrom", None)
            row.created_at, row.claimed_at = made, claimed
        s.commit()
        assert payments._executed_in_the_hour(s, user.id, now) == [now - 3590]


def test_a_nonce_group_is_read_by_its_index(db):
    """Not through all the user's entries (ix_activities_user_id): transfers received pile up."""
    row = Activity(id=1, user_id=1, type="transfer", chain_id=31337, nonce=7, data="{}")
    with get_session() as s:
        [plan] = plans(lambda: pending._group(s, row))
    assert "ix_activities_nonce_group" in plan
    tx = SimpleNamespace(chain_id=31337, nonce=7, tx_hash="0x01", sender="0x02")
    user = SimpleNamespace(id=1)
    [plan] = plans(lambda: pending.nonce_held(user, tx))
    # It asks for pending entries too: the index of the followed ones answers it as well.
    assert "ix_activities_nonce_group" in plan or "ix_activities_unresolved" in plan


def test_the_indexers_status_pass_reads_the_followed_entries_by_their_index(db, monkeypatch):
    """Newest first, from where the last pass stopped: a walk of the followed entries alone, not of
    every newer entry (the primary key backwards)."""
    chain = SimpleNamespace(chain_id=31337)
    for below in (None, 1000):
        monkeypatch.setitem(indexer._status_below, 31337, below)
        [plan] = plans(lambda: indexer.refresh_outgoing(chain))
        assert "ix_activities_unresolved" in plan
        assert "Sort" not in plan and "TEMP B-TREE" not in plan
