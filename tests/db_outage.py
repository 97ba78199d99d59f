"""The database out of reach for a while, for the tests of what the app does then (tests/api,
tests/e2e): on PostgreSQL as while the server restarts or fails over (the run's private server
refuses connections to the database and ends the open ones); on SQLite another process holds
the write lock (the app's writes wait its busy timeout, 5 s, then fail; reads go on in WAL)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from sqlalchemy.engine import make_url


@contextlib.contextmanager
def database_out_of_reach(database_url: str) -> Iterator[None]:
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        holder = sqlite3.connect(str(url.database), isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            yield
        finally:
            holder.close()  # rolls back: the lock is released
        return
    from tools.pgserver import shared_temp_server

    server = shared_temp_server()
    server.refuse_connections(str(url.database))
    try:
        yield
    finally:
        server.refuse_connections(str(url.database), refuse=False)
