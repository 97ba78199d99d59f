"""core.db.exclusive_turn: of two holders of one name, the second is told no at once (never
waits), on the database under test (SQLite file: a file lock; PostgreSQL: an advisory lock on a
connection of its own); another name is free; the turn is free again when its block ends, also
when the block raised. core.db.lock_until_commit: a second transaction taking the same lock (and
writing, as its callers do) waits until the first has committed."""

import threading

import pytest
from sqlalchemy import event, text

from tests.waits import wait_until
from wallet_app.core.db import exclusive_turn, get_engine, get_session, lock_until_commit

NO_ROW_WRITE = text("UPDATE users SET id = id WHERE id = -1")  # SQLite: takes the write lock all the same


def test_one_holder_at_a_time(db):
    with exclusive_turn("pass:a") as first:
        assert first is True
        with exclusive_turn("pass:a") as second, exclusive_turn("pass:b") as other:
            assert (second, other) == (False, True)
        # From another thread too (the relayer's passes run in threads).
        seen: list[bool] = []

        def try_it():
            with exclusive_turn("pass:a") as mine:
                seen.append(mine)

        thread = threading.Thread(target=try_it)
        thread.start()
        thread.join(10)
        assert seen == [False]
    with exclusive_turn("pass:a") as again:
        assert again is True


def test_the_turn_ends_with_a_block_that_raised(db):
    with pytest.raises(RuntimeError), exclusive_turn("pass:c") as mine:
        assert mine is True
        raise RuntimeError("the pass failed")
    with exclusive_turn("pass:c") as again:
        assert again is True


def test_lock_until_commit_holds_the_next_writer_until_the_first_commits(db):
    engine = get_engine()
    order: list[str] = []
    writing = threading.Event()

    def second() -> None:
        with get_session() as session:
            connection = session.connection()
            event.listen(connection, "before_cursor_execute", lambda *_: writing.set())
            lock_until_commit(session, "quota:1")
            session.execute(NO_ROW_WRITE)
            order.append("second wrote")
            session.commit()

    def second_waits() -> bool:
        if engine.dialect.name != "postgresql":  # SQLite: the write waits for the database's write lock
            return writing.is_set()
        with engine.connect() as c:
            waiting = text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            return bool(c.execute(waiting).scalar())

    with get_session() as first:
        lock_until_commit(first, "quota:1")
        first.execute(NO_ROW_WRITE)
        thread = threading.Thread(target=second)
        thread.start()
        wait_until(second_waits, 10, "the second transaction never came to the lock")
        order.append("first commits")
        first.commit()
    thread.join(10)
    assert order == ["first commits", "second wrote"]
