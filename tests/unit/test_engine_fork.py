"""core.db after a fork: granian forks its workers from a process that already used the database
(the app's import migrates it); a worker must open its own connections, never share its parent's."""

import os

from sqlalchemy import text

from tests.conftest import ON_PG
from wallet_app.core.db import get_engine

IDENTITY = "SELECT pg_backend_pid()" if ON_PG else "SELECT 1"


def _connection() -> tuple[object, int]:
    """(the pooled driver connection, its server process or 1): checked out, then back to the pool."""
    with get_engine().connect() as conn:
        return conn.connection.driver_connection, conn.execute(text(IDENTITY)).scalar_one()


def test_a_forked_worker_opens_its_own_connections(db):
    parent = _connection()  # now pooled; held here, so the child's copy of it cannot be freed
    assert _connection() == parent  # the pool hands it out again
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: report its connection, then leave without running anything else
        try:
            child_driver, child_backend = _connection()
            os.write(write, f"{int(child_driver is parent[0])} {child_backend}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read()
    assert os.waitpid(pid, 0)[1] == 0
    same_driver, child_backend = map(int, child.split())
    # Compared by identity while the parent's object is alive in the child: an id alone could be
    # reused by a new connection once the dropped pool's objects are freed (seen once in CI).
    assert same_driver == 0
    if ON_PG:
        assert child_backend != parent[1]
    assert _connection() == parent  # the parent's connection still works, still pooled


def test_an_in_memory_sqlite_database_gets_an_engine():
    """File databases get a sized pool; SQLite in memory (one connection per thread) takes no size."""
    from wallet_app.core.db import _engine_for

    for url in ("sqlite://", "sqlite:///:memory:"):
        with _engine_for(url).connect() as conn:
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
