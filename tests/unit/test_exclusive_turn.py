"""core.db.exclusive_turn: of two holders of one name, the second is told no at once (never
waits), on the database under test (SQLite file: a file lock; PostgreSQL: an advisory lock on a
connection of its own); another name is free; the turn is free again when its block ends, also
when the block raised."""

import threading

import pytest

from wallet_app.core.db import exclusive_turn


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
