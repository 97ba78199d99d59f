"""Engine, sessions and schema upgrades. The schema comes only from Alembic migrations."""

import fcntl
import hashlib
import itertools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import psycopg
from sqlalchemy import Connection, Engine, TextClause, event, exc, text
from sqlalchemy.engine import make_url
from sqlmodel import Session, create_engine

from wallet_app.core.config import REPO_ROOT, get_settings

log = logging.getLogger(__name__)

_engines: list[Engine] = []
SQLITE_POOL_SIZE = 40  # anyio's default thread limiter: the sync routes' threads at once
# PostgreSQL, per process: at most 30 connections each (README: max_connections).
SERVER_POOL_SIZE, SERVER_POOL_OVERFLOW = 20, 10
# PostgreSQL, per connection: a server that does not answer a connect, a statement waiting on a
# lock (an operator's open transaction, a stuck migration) or one running far too long fails
# (503 database_unavailable) instead of holding a worker's thread without end. Migrations are
# exempt (upgrade_schema).
PG_CONNECT_TIMEOUT_SECONDS = 5  # unless DATABASE_URL sets connect_timeout
PG_LOCK_TIMEOUT_MS = 10_000
PG_STATEMENT_TIMEOUT_MS = 30_000
# A pooled PostgreSQL connection idle this long is pinged before use (a restart or failover
# leaves dead ones in the pool). One used more recently is not: under load a ping before every
# checkout was one more round trip to the server per session (a status read: two instead of
# one). A connection the server dropped in that second fails its statement instead (503
# database_unavailable, as any statement the restart cut off), which replaces the whole pool, as
# a failed ping does.
PING_AFTER_IDLE_SECONDS = 1.0
# No answer at all (the server frozen: a paused VM, a disk that stopped answering; a failover whose
# old primary went silent): the server's own timeouts cannot fire, and a request waited for its
# answer without end (make run-scale, PostgreSQL stopped with SIGSTOP: over a minute, until it
# resumed). Each wait for the server's answer gives up after this long on our side, past the
# statement timeout; the connection is closed (the pool replaces it) and the request answers 503.
PG_ANSWER_TIMEOUT_SECONDS = PG_STATEMENT_TIMEOUT_MS / 1000 + 5


class _AnswerBounded(psycopg.Connection):
    """A psycopg connection whose every wait for the server gives up after `answer_timeout` s
    (None: waits as long as it takes, for migrations), closing itself: SQLAlchemy then takes it
    for a disconnect and replaces it."""

    answer_timeout: float | None = PG_ANSWER_TIMEOUT_SECONDS

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        try:
            return super().wait(gen, interval, self.answer_timeout if timeout is None else timeout)
        except psycopg.OperationalError as e:
            if type(e).__name__ != "_WaitTimeout":  # psycopg's own name for its wait's timeout
                raise
            self.close()
            raise psycopg.OperationalError(f"no answer from the server in {self.answer_timeout} s") from e


def _forget_pools_in_child() -> None:
    """A forked process (granian forks its workers from a process that already imported the app,
    which migrated the database) must not use its parent's pooled connections: two processes on
    one socket corrupt each other's transactions. Dropped without closing: they stay the parent's."""
    for engine in _engines:
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_forget_pools_in_child)


@lru_cache
def _engine_for(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        # Kept: SERVER_POOL_SIZE (a new PostgreSQL connection is a new server process: a burst
        # past the default 5 opened and closed them by the dozen).
        connect_args = {} if "connect_timeout" in parsed.query else {"connect_timeout": PG_CONNECT_TIMEOUT_SECONDS}
        engine = create_engine(
            url,
            pool_size=SERVER_POOL_SIZE,
            max_overflow=SERVER_POOL_OVERFLOW,
            connect_args=connect_args,
        )
        _engines.append(engine)

        @event.listens_for(engine, "connect")
        def _timeouts(dbapi_conn, _record):
            autocommit, dbapi_conn.autocommit = dbapi_conn.autocommit, True  # SET outside a transaction: it stays
            dbapi_conn.execute(
                f"SET lock_timeout = {int(PG_LOCK_TIMEOUT_MS)}; SET statement_timeout = {int(PG_STATEMENT_TIMEOUT_MS)}"
            )
            dbapi_conn.autocommit = autocommit

        @event.listens_for(engine, "do_connect")
        def _bounded(_dialect, _record, cargs, cparams):
            return _AnswerBounded.connect(*cargs, **cparams)

        _ping_after_idle(engine)
        return engine

    file_backed = bool(parsed.database) and parsed.database != ":memory:"
    if file_backed:
        Path(str(parsed.database)).parent.mkdir(parents=True, exist_ok=True)
    # FastAPI runs sync routes in a thread pool; Reflex handlers run in other threads. A file's
    # pool keeps as many connections as that pool has threads: a burst of payments otherwise
    # opened (and set up) connections past the default 5 and closed them again, every burst. A
    # file has no server that could drop a connection: no ping before each use. (In memory,
    # SQLAlchemy keeps one connection per thread, with no size to set.)
    sizes = {"pool_size": SQLITE_POOL_SIZE, "max_overflow": SQLITE_POOL_SIZE} if file_backed else {}
    engine = create_engine(url, connect_args={"check_same_thread": False}, **sizes)
    _engines.append(engine)

    # SQLite ignores foreign keys unless asked, per connection. WAL lets readers and the
    # one writer proceed together (concurrent payments otherwise hit "database is locked").
    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_conn, _record):
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        if file_backed:
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=5000")
        cur.close()

    return engine


def _ping_after_idle(engine: Engine) -> None:
    """pool_pre_ping, for connections idle PING_AFTER_IDLE_SECONDS or longer only."""

    @event.listens_for(engine, "connect")
    @event.listens_for(engine, "checkin")
    def _used(_dbapi_conn, record) -> None:
        record.info["used_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping(dbapi_conn, record, _proxy) -> None:
        if time.monotonic() - record.info.get("used_at", 0.0) < PING_AFTER_IDLE_SECONDS:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as e:
            # As a failed pre-ping: every pooled connection made before now is replaced, and this
            # checkout tries a new one (its failure to connect is the caller's error).
            raise exc.InvalidatePoolError() from e


def get_engine() -> Engine:
    """The engine for the current settings (a new DATABASE_URL gets its own engine)."""
    return _engine_for(get_settings().database_url)


@lru_cache
def _autocommit(engine: Engine) -> Engine:
    return engine.execution_options(isolation_level="AUTOCOMMIT")


def read_session() -> Session:
    """A session that only reads: on PostgreSQL each statement commits by itself, sparing the
    BEGIN and ROLLBACK round trips around them (two of a status read's five). Its reads are not
    one snapshot; write with get_session(). SQLite starts no transaction for reads anyway."""
    engine = get_engine()
    return Session(engine if engine.dialect.name == "sqlite" else _autocommit(engine), expire_on_commit=False)


def get_session() -> Session:
    """A new SQLModel session; use it as `with get_session() as s:`.

    expire_on_commit=False so objects returned by services stay readable after commit.
    """
    return Session(get_engine(), expire_on_commit=False)


class CommitWatch:
    """Whether anyone may have committed to the database since the last look: for a loop that
    would otherwise run a query every few milliseconds to find out (the relayer's queue check
    without Redis cost an idle relayer about 4 % of a core). On a SQLite file it reads PRAGMA
    data_version on a read-only connection of its own, which changes when any other connection,
    in any process, commits: a few microseconds. Anywhere else, or on any error, it says maybe."""

    def __init__(self) -> None:
        self._url: str | None = None  # the DATABASE_URL watched; parsed only when it changes
        self._path: str | None = None  # its SQLite file, if it is one
        self._conn: sqlite3.Connection | None = None
        self._version: int | None = None

    def maybe_committed(self) -> bool:
        """True on the first call, then only after a commit by another connection (or when it cannot tell)."""
        url = get_settings().database_url
        if url != self._url:
            self.close()
            parsed = make_url(url)
            path = parsed.database if parsed.get_backend_name() == "sqlite" else None
            self._url, self._path = url, path if path and path != ":memory:" else None
        if self._path is None:
            return True
        try:
            if self._conn is None:
                read_only = f"{Path(self._path).resolve().as_uri()}?mode=ro"
                self._conn = sqlite3.connect(read_only, uri=True, check_same_thread=False)
            version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error:
            self.close()
            return True
        changed, self._version = version != self._version, version
        return changed

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._url = self._path = self._conn = self._version = None


_turn_locks: dict[str, threading.Lock] = {}  # an in-memory SQLite database's turns (one process)


def _lock_key(name: str) -> int:
    """PostgreSQL's advisory lock key (a signed 64-bit integer) for a lock's name."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@lru_cache(maxsize=8)
def _advisory_locks(count: int) -> TextClause:
    """One statement taking `count` advisory locks, in the order named (a select list is evaluated
    left to right): one round trip for the locks an execute takes."""
    calls = ", ".join(f"pg_advisory_xact_lock(:key{i})" for i in range(count))
    return text(f"SELECT {calls}")


def lock_until_commit(db: Session, *names: str) -> None:
    """Holds each name's lock, in this order, from here to the end of `db`'s transaction, waiting
    for whoever holds it (in any process). PostgreSQL: transaction-level advisory locks. SQLite has
    one writer at a time: a transaction holds the database's write lock from its first write to its
    end, so there nothing is taken here and the caller reads what the lock guards after its first
    write."""
    if names and db.get_bind().dialect.name == "postgresql":
        keys = {f"key{i}": _lock_key(name) for i, name in enumerate(names)}
        db.connection().execute(_advisory_locks(len(names)), keys)


@contextmanager
def exclusive_turn(name: str) -> Iterator[bool]:
    """Whether this caller holds `name`'s turn, without waiting: of several processes (or threads)
    running the same pass, one at a time does it, the others skip it. PostgreSQL: an advisory lock
    for a transaction on a connection of its own, held while the block runs (a dead process's
    ends with its connection). A SQLite file: a file lock next to it. In memory: a lock here."""
    engine = get_engine()
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection, connection.begin():
            key = _lock_key(name)
            yield bool(connection.execute(text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": key}).scalar())
    elif database and database != ":memory:":
        with open(f"{database}.{hashlib.sha256(name.encode()).hexdigest()[:16]}.lock", "w") as lock_file:
            try:
                fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released when the file closes
            except BlockingIOError:
                yield False
            else:
                yield True
    else:
        lock = _turn_locks.setdefault(name, threading.Lock())
        mine = lock.acquire(blocking=False)
        try:
            yield mine
        finally:
            if mine:
                lock.release()


def alembic_config():
    from alembic.config import Config

    return Config(str(REPO_ROOT / "alembic.ini"))


def revisions_unknown_here(connection: Connection, cfg: Any) -> list[str]:
    """The database's current Alembic revisions that none of this release's migrations name."""
    from alembic.migration import MigrationContext
    from alembic.script import ScriptDirectory

    known = {script.revision for script in ScriptDirectory.from_config(cfg).walk_revisions()}
    return [rev for rev in MigrationContext.configure(connection).get_current_heads() if rev not in known]


_MIGRATION_LOCK = 0x6E65_62_6C  # any fixed bigint ("nebl") naming the lock on PostgreSQL


# PostgreSQL: a migration's wait for a table lock (the previous release serving beside it, an
# operator's open transaction) gives up after this long, and the whole upgrade is tried again after
# MIGRATION_RETRY_SECONDS. Every query of that table queues behind a waiting ALTER or DROP INDEX:
# waiting without end, one idle transaction stopped the table for every worker (each query failing
# after PG_LOCK_TIMEOUT_MS, 503), as long as it stayed open.
MIGRATION_LOCK_TIMEOUT_MS = 2_000
MIGRATION_RETRY_SECONDS = (1.0, 2.0, 4.0, 8.0, 15.0)  # the last one repeats


def take_migration_turn(connection: Connection) -> None:
    """PostgreSQL, first in a migration's transaction (the app's upgrade_schema and the alembic
    command line alike): waits for any other process's migration (an advisory lock, held until the
    transaction ends), then lets the migration wait at most MIGRATION_LOCK_TIMEOUT_MS for a
    table's lock, and run as long as it takes."""
    connection.execute(text("SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0"))
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
    # ...but no long wait for a table's lock, which every query of the table waits behind.
    connection.execute(text(f"SET LOCAL lock_timeout = {int(MIGRATION_LOCK_TIMEOUT_MS)}"))


def upgrade_schema(engine: Engine | None = None) -> None:
    """`alembic upgrade head` on the configured database (called at app start).

    Workers start together: one upgrades while the others wait for it, then find head. The lock
    is PostgreSQL's advisory lock (ends with the transaction), or a file lock next to a SQLite
    file (a deferred SQLite transaction would read the old version, then fail to write). On
    PostgreSQL an upgrade that waited MIGRATION_LOCK_TIMEOUT_MS for a table lock is rolled back,
    whole, and tried again.
    """
    engine = engine or get_engine()
    for attempt in itertools.count():
        try:
            _upgrade_once(engine)
            return
        except exc.OperationalError as e:
            if not isinstance(e.orig, psycopg.errors.LockNotAvailable):
                raise
            delay = MIGRATION_RETRY_SECONDS[min(attempt, len(MIGRATION_RETRY_SECONDS) - 1)]
            log.warning(
                "migrating: a table lock was not granted within %g s (another transaction holds it);"
                " trying again in %g s",
                MIGRATION_LOCK_TIMEOUT_MS / 1000,
                delay,
            )
            time.sleep(delay)


def _upgrade_once(engine: Engine) -> None:
    from alembic.script import ScriptDirectory

    from alembic import command

    database = engine.url.database if engine.dialect.name == "sqlite" else None
    with ExitStack() as stack:
        if database and database != ":memory:":
            lock_file = stack.enter_context(open(f"{database}.migrate-lock", "w"))
            fcntl.flock(lock_file, fcntl.LOCK_EX)  # released when the file closes
        connection = stack.enter_context(engine.connect())
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # To alter a column SQLite rebuilds the table (batch mode), dropping it while others
            # reference it: foreign keys are off meanwhile (the pragma only works outside a
            # transaction) and checked before the commit. The connection is not reused after.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()
            stack.callback(connection.invalidate)
            # The whole upgrade is one transaction, DDL included: pysqlite (Python 3.11) begins a
            # transaction only before INSERT/UPDATE/DELETE, so each CREATE/ALTER/DROP before the
            # first of them committed by itself, and a kill or error mid-upgrade left a later
            # revision's columns under the old alembic_version (the next start failed on them).
            # SQLAlchemy's pysqlite recipe: the driver begins nothing, we emit BEGIN (IMMEDIATE:
            # the write lock from the start). This connection only: the runtime pool keeps the
            # driver's own transactions (its reads begin none), and the invalidate above drops it.
            cast(sqlite3.Connection, connection.connection.driver_connection).isolation_level = None
        with connection.begin():
            if sqlite:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
            if connection.dialect.name == "postgresql":
                bounded = cast(_AnswerBounded, connection.connection.driver_connection)
                bounded.answer_timeout = None  # a migration may rewrite a large table
                stack.callback(setattr, bounded, "answer_timeout", PG_ANSWER_TIMEOUT_SECONDS)
                take_migration_turn(connection)
            cfg = alembic_config()
            # env.py uses this connection instead of building its own engine.
            cfg.attributes["connection"] = connection
            if newer := revisions_unknown_here(connection, cfg):
                # A later release migrated it (its processes run beside this one during a rolling
                # deploy, or this release was started again to roll back): Alembic would refuse to
                # start ("Can't locate revision"), and a restarted old process never came back.
                # Its migrations keep this release's code working (README: Upgrading).
                log.warning(
                    "the database is at migration %s, which this release does not have (its newest: %s):"
                    " a later release migrated it; starting without migrating",
                    ", ".join(newer),
                    ScriptDirectory.from_config(cfg).get_current_head(),
                )
                return
            command.upgrade(cfg, "head")
            if sqlite and (broken := connection.exec_driver_sql("PRAGMA foreign_key_check").all()):
                raise RuntimeError(f"the migration left rows whose foreign keys point nowhere: {broken}")
