"""core.db.CommitWatch, and the relayer's queue check without Redis that it spares: on a SQLite
file nothing is queried until another connection (here: another session, as a web worker's
would be) has committed; elsewhere the check always queries."""

import sqlite3
from types import SimpleNamespace

from sqlalchemy import event

from wallet_app import crud
from wallet_app.core.config import get_settings
from wallet_app.core.db import CommitWatch, get_engine, get_session
from wallet_app.models import stored_id
from wallet_app.relayer import _anything_queued, _commits
from wallet_app.services import chain as chains


def test_a_sqlite_file_reports_each_commit_of_another_connection_once(tmp_path, monkeypatch):
    path = tmp_path / "watched.db"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    get_settings.cache_clear()
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE t (x INTEGER)")
    writer.commit()
    watch = CommitWatch()
    try:
        assert watch.maybe_committed() is True  # the first look: it cannot know
        assert watch.maybe_committed() is False
        writer.execute("INSERT INTO t VALUES (1)")
        assert watch.maybe_committed() is False  # not committed yet
        writer.commit()
        assert watch.maybe_committed() is True
        assert watch.maybe_committed() is False
        writer.execute("SELECT count(*) FROM t").fetchone()  # a read is no commit
        assert watch.maybe_committed() is False
    finally:
        watch.close()
        writer.close()
        get_settings.cache_clear()


def test_it_cannot_tell_without_a_sqlite_file(tmp_path, monkeypatch):
    watch = CommitWatch()
    for url in ("sqlite://", "postgresql+psycopg://u@127.0.0.1:1/x", f"sqlite:///{tmp_path / 'gone' / 'x.db'}"):
        monkeypatch.setenv("DATABASE_URL", url)
        get_settings.cache_clear()
        assert [watch.maybe_committed(), watch.maybe_committed()] == [True, True], url
    get_settings.cache_clear()


def test_the_relayers_queue_check_queries_only_after_a_commit(db, monkeypatch):
    # The chains file's one chain with a payment contract: the check reads only the database.
    monkeypatch.setattr(chains, "get_chains", lambda: [SimpleNamespace(chain_id=31337, payment_contract="0xp")])
    statements: list[str] = []
    event.listen(db, "before_cursor_execute", lambda *args: statements.append(args[2]))
    on_sqlite = db.dialect.name == "sqlite"
    with db.connect():  # the pool's first connection turns the fixture's copied file to WAL: a change
        pass
    _commits.close()
    assert _anything_queued() is False  # the first look queries
    statements.clear()
    assert _anything_queued() is False
    assert len(statements) == (0 if on_sqlite else 1)

    with get_session() as s:  # a web worker's execute queues a payment
        user = crud.add_user(s, "sub-q", "q@example.com", "en")
        row = crud.add_quote(s, "0x" + "7b" * 32, stored_id(user), 31337, "0xt", "5", "0xf", None)
        assert crud.claim_quote(s, stored_id(row), "0xm", 100, "0xsig")
        s.commit()
    assert get_engine() is db
    assert _anything_queued() is True
    _commits.close()
