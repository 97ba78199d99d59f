"""The Alembic migrations on the test database (SQLite; PostgreSQL with TEST_DATABASE=pg): types,
defaults, constraints and unique indexes behave the same on both."""

import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError
from sqlmodel import SQLModel

import wallet_app.models  # noqa: F401
from alembic import command
from tests.conftest import ON_PG
from tests.waits import wait_until
from wallet_app.core import db
from wallet_app.core.config import REPO_ROOT
from wallet_app.core.db import alembic_config, get_engine, read_session, upgrade_schema

BIG_CHAIN_ID = 2**40 + 7  # does not fit a 32-bit INTEGER


def _user(conn, sub: str) -> int:
    # No has_backup: the column's server default must fill it in.
    conn.execute(
        text("INSERT INTO users (google_sub, email, locale, created_at) VALUES (:sub, 'a@example.com', 'en', 1)"),
        {"sub": sub},
    )
    return conn.execute(text("SELECT id FROM users WHERE google_sub = :sub"), {"sub": sub}).scalar_one()


def _payment(conn, user_id: int, payment_id: str, nonce: int | None, relayer: str | None = "0xrelayer") -> None:
    conn.execute(
        text(
            "INSERT INTO payments (payment_id, user_id, chain_id, token_address, amount, from_address, status,"
            " relayer_address, nonce, created_at, updated_at)"
            " VALUES (:pid, :uid, :chain, '0xtoken', '1', '0xfrom', 'pending', :relayer, :nonce, 1, 1)"
        ),
        {"pid": payment_id, "uid": user_id, "chain": BIG_CHAIN_ID, "relayer": relayer, "nonce": nonce},
    )


def _raises_integrity(engine, statement) -> None:
    with pytest.raises(IntegrityError), engine.begin() as conn:
        statement(conn)


def test_the_migrations_build_the_models_on_the_test_database(settings_env):
    upgrade_schema()
    engine = get_engine()
    assert engine.dialect.name == ("postgresql" if ON_PG else "sqlite")
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
        types = {c["name"]: str(c["type"]) for c in inspect(conn).get_columns("payments")}
        assert types["chain_id"] == "BIGINT"
        assert {c["name"]: str(c["type"]) for c in inspect(conn).get_columns("users")}["has_backup"] == "BOOLEAN"
    engine.dispose()


def test_defaults_constraints_and_unique_indexes(settings_env):
    upgrade_schema()
    engine = get_engine()
    with engine.begin() as conn:
        uid = _user(conn, "sub-1")
        has_backup = conn.execute(text("SELECT has_backup FROM users WHERE id = :id"), {"id": uid}).scalar_one()
        assert has_backup == 0  # false, not NULL
        _payment(conn, uid, "p1", nonce=5)
        _payment(conn, uid, "p2", nonce=None)  # quotes hold no nonce: NULLs never collide
        _payment(conn, uid, "p3", nonce=None, relayer=None)
        _payment(conn, uid, "p4", nonce=None, relayer=None)
        assert conn.execute(text("SELECT chain_id FROM payments WHERE payment_id = 'p1'")).scalar_one() == BIG_CHAIN_ID
    # The relayer's nonce is unique per chain and relayer address; a public id per user (a merchant
    # link's ref is the payment id of each user who pays it).
    _raises_integrity(engine, lambda conn: _payment(conn, uid, "p5", nonce=5))
    _raises_integrity(engine, lambda conn: _payment(conn, uid, "p1", nonce=6))
    with engine.begin() as conn:
        _payment(conn, _user(conn, "sub-2"), "p1", nonce=6)
    # ...but not one that failed for good (failed and settled): the user may pay that order again.
    fail = "UPDATE payments SET status = 'failed', settled = :settled WHERE payment_id = 'p2'"
    with engine.begin() as conn:
        conn.execute(text(fail), {"settled": False})
    _raises_integrity(engine, lambda conn: _payment(conn, uid, "p2", nonce=None))  # it may still be mined
    with engine.begin() as conn:
        conn.execute(text(fail), {"settled": True})
        _payment(conn, uid, "p2", nonce=None)
    _raises_integrity(engine, lambda conn: _user(conn, "sub-1"))
    # Foreign keys hold (SQLite only with the engine's PRAGMA).
    _raises_integrity(engine, lambda conn: _payment(conn, uid + 1000, "p6", nonce=7))
    session_sql = "INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES (:u, :h, 1, 2)"
    with engine.begin() as conn:
        conn.execute(text(session_sql), {"u": uid, "h": "h1"})
    _raises_integrity(engine, lambda conn: conn.execute(text(session_sql), {"u": uid, "h": "h1"}))
    engine.dispose()


def test_downgrade_to_base_and_upgrade_again(settings_env):
    upgrade_schema()
    engine = get_engine()
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    upgrade_schema()
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
    engine.dispose()


def test_workers_starting_together_migrate_once(settings_env):
    # Each worker process upgrades the schema at start; three start at once here.
    code = "from wallet_app.core.db import upgrade_schema; upgrade_schema()"
    env = {**os.environ, "DATABASE_URL": settings_env.database_url}
    workers = [subprocess.Popen([sys.executable, "-c", code], env=env, cwd=REPO_ROOT) for _ in range(3)]
    assert [w.wait(timeout=120) for w in workers] == [0, 0, 0]
    engine = get_engine()
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
        assert conn.execute(text("SELECT count(*) FROM alembic_version")).scalar_one() == 1
    engine.dispose()


AFTER_2038 = 2**40  # epoch seconds far past 2**31 - 1 (19 January 2038)


def _epoch_columns() -> set[tuple[str, str]]:
    """(table, column) of the models' epoch-seconds columns: named *_at, or deadline."""
    return {
        (table.name, column.name)
        for table in SQLModel.metadata.sorted_tables
        for column in table.columns
        if column.name.endswith("_at") or column.name == "deadline"
    }


def test_epoch_columns_are_bigint_and_hold_times_after_2038(settings_env):
    # The migration lists every epoch column of the tables it knew (a new one needs a migration
    # too); tables made later are checked below, like every epoch column, to be BIGINT.
    listed = ScriptDirectory.from_config(alembic_config()).get_revision("0006").module.EPOCH_COLUMNS
    assert {(t, c) for t, columns in listed.items() for c, _ in columns} == {
        (t, c) for t, c in _epoch_columns() if t in listed
    }
    upgrade_schema()
    engine = get_engine()
    with engine.begin() as conn:
        for table, column in _epoch_columns():
            types = {c["name"]: str(c["type"]) for c in inspect(conn).get_columns(table)}
            assert types[column] == "BIGINT", (table, column)
        uid = _user(conn, "sub-late")
        conn.execute(text("UPDATE users SET created_at = :t, last_backup_at = :t WHERE id = :id"),
                     {"t": AFTER_2038, "id": uid})
        conn.execute(text("INSERT INTO sessions (user_id, token_hash, created_at, expires_at)"
                          " VALUES (:u, 'h', :t, :t)"),
                     {"u": uid, "t": AFTER_2038})
        _payment(conn, uid, "p-late", nonce=1)
        conn.execute(text("UPDATE payments SET deadline = :t, sent_at = :t, claimed_at = :t, created_at = :t,"
                          " updated_at = :t"), {"t": AFTER_2038})
        assert conn.execute(text("SELECT deadline FROM payments")).scalar_one() == AFTER_2038
        assert conn.execute(text("SELECT expires_at FROM sessions")).scalar_one() == AFTER_2038
    engine.dispose()


def test_the_bigint_migration_keeps_existing_rows(settings_env):
    # A database at 0005 with rows in the tables it rebuilds (SQLite) or alters (PostgreSQL):
    # `users` is referenced by the others' foreign keys.
    engine = get_engine()
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
        uid = _user(conn, "sub-old")
        conn.execute(text("INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES (:u, 'h', 5, 6)"),
                     {"u": uid})
        _payment(conn, uid, "p-old", nonce=3)
    upgrade_schema()
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
        assert conn.execute(text("SELECT google_sub, created_at FROM users")).all() == [("sub-old", 1)]
        assert conn.execute(text("SELECT user_id, created_at, expires_at FROM sessions")).all() == [(uid, 5, 6)]
        assert conn.execute(text("SELECT payment_id, nonce FROM payments")).all() == [("p-old", 3)]
    engine.dispose()


def _entry(conn, user_id: int, type_: str, tx_hash: str, log_index: int | None = None, replaces: int | None = None):
    conn.execute(
        text(
            "INSERT INTO activities (user_id, type, chain_id, tx_hash, status, created_at, log_index, replaces_id)"
            " VALUES (:u, :type, 31337, :h, 'submitted', 1, :log, :rep)"
        ),
        {"u": user_id, "type": type_, "h": tx_hash, "log": log_index, "rep": replaces},
    )
    return conn.execute(text("SELECT MAX(id) FROM activities")).scalar_one()


def test_the_own_transaction_index_keeps_each_first_entry(settings_env):
    """0012: a user's own transaction recorded twice (the same signed bytes submitted again) keeps
    its first entry, and a speed-up pointing at the copy points at the first; afterwards a second
    entry is refused. Received transfers (by log index) and payments (the relayer's) are not own
    entries: the index leaves them be."""
    engine = get_engine()
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0011")
        uid, other = _user(conn, "sub-a"), _user(conn, "sub-b")
        first = _entry(conn, uid, "transfer", "0xaa")
        copy = _entry(conn, uid, "transfer", "0xaa")
        speed_up = _entry(conn, uid, "transfer", "0xbb", replaces=copy)
        kept = [
            _entry(conn, other, "transfer", "0xaa"),  # another user's
            _entry(conn, uid, "receive", "0xaa", log_index=0),
            _entry(conn, uid, "payment", "0xcc"),
            _entry(conn, uid, "payment", "0xcc"),
            _entry(conn, uid, "call", None),
            _entry(conn, uid, "call", None),
        ]
    upgrade_schema()
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
        ids = conn.execute(text("SELECT id FROM activities ORDER BY id")).scalars().all()
        assert ids == sorted([first, speed_up, *kept])
        replaces = conn.execute(text("SELECT replaces_id FROM activities WHERE id = :id"), {"id": speed_up})
        assert replaces.scalar_one() == first
    _raises_integrity(engine, lambda conn: _entry(conn, uid, "approve", "0xbb"))
    with engine.begin() as conn:  # still allowed: another receive log, a payment, a NULL hash
        _entry(conn, uid, "receive", "0xaa", log_index=1)
        _entry(conn, uid, "payment", "0xcc")
        _entry(conn, uid, "call", None)
    engine.dispose()


# Stops an upgrade at 0012's first statement, after 0011's DDL ran in the same upgrade: the process
# dies (a SIGKILL's stand-in) or the statement fails.
_STOP_IN_0012 = """
import os, sys
from alembic.operations import Operations
from alembic import command
from wallet_app.core.db import alembic_config, upgrade_schema

def stop(*_args, **_kwargs):
    if sys.argv[1] == "error":
        raise RuntimeError("0012 failed")
    os._exit(137)

Operations.execute = stop
upgrade_schema() if sys.argv[2] == "app" else command.upgrade(alembic_config(), "head")
"""


@pytest.mark.parametrize(("stop", "runner"), [("kill", "app"), ("error", "app"), ("kill", "cli")])
def test_an_upgrade_stopped_halfway_leaves_the_old_revision_whole(settings_env, stop, runner):
    """An upgrade is one transaction, DDL included (on SQLite too, where pysqlite commits DDL by
    itself unless told otherwise): stopped during 0012, it leaves the database at 0010 without
    0011's column and index, and the next start upgrades it to head. runner: upgrade_schema (the
    app's start) or the alembic command line's own engine (env.py)."""
    engine = get_engine()
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0010")
        _payment(conn, _user(conn, "sub-kept"), "p-kept", nonce=1)
    engine.dispose()
    env = {**os.environ, "DATABASE_URL": settings_env.database_url}
    run = subprocess.run([sys.executable, "-c", _STOP_IN_0012, stop, runner], env=env, cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == (137 if stop == "kill" else 1), run.stderr
    if stop == "error":
        assert "0012 failed" in run.stderr
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == ["0010"]
        assert "gas_cost_wei" not in {c["name"] for c in inspect(conn).get_columns("payments")}
        assert "ix_payments_chain_spend" not in {i["name"] for i in inspect(conn).get_indexes("payments")}
        assert conn.execute(text("SELECT payment_id FROM payments")).scalars().all() == ["p-kept"]
    engine.dispose()
    upgrade_schema()  # the next start
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == head
        assert conn.execute(text("SELECT payment_id FROM payments")).scalars().all() == ["p-kept"]
    engine.dispose()


@pytest.mark.skipif(ON_PG, reason="PostgreSQL keeps its foreign keys during migrations")
def test_a_failed_foreign_key_check_rolls_the_whole_sqlite_upgrade_back(settings_env):
    """upgrade_schema checks SQLite's foreign keys (off while tables are rebuilt) before its commit:
    a row pointing nowhere fails the start and leaves the database at its old revision, all of it."""
    engine = get_engine()
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0010")
    engine.dispose()
    with closing(sqlite3.connect(str(engine.url.database))) as raw, raw:  # foreign keys off: the default
        raw.execute("INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES (999, 'h', 1, 2)")
    with pytest.raises(RuntimeError, match="foreign keys point nowhere"):
        upgrade_schema()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == "0010"
        assert "gas_cost_wei" not in {c["name"] for c in inspect(conn).get_columns("payments")}
    engine.dispose()


# A later release's migration, as the rule for migrations (README: Upgrading) allows: a new table,
# a nullable column.
_LATER_RELEASE = '''
import sqlalchemy as sa
from alembic import op

revision = "9001"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("payments", sa.Column("later_release_note", sa.String(length=20), nullable=True))


def downgrade() -> None:
    op.drop_column("payments", "later_release_note")
'''


def _later_release(tmp_path, name: str, migration: str):
    """An Alembic config of a later release: this one's migrations and `migration` (a template
    whose {head} is this release's head) as versions/`name`."""
    later = tmp_path / "later-release"
    shutil.copytree(REPO_ROOT / "alembic", later)
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    (later / "versions" / name).write_text(migration.format(head=head))
    cfg = alembic_config()
    cfg.set_main_option("script_location", str(later))
    return cfg


def test_a_release_starts_on_a_database_a_later_release_migrated(settings_env, tmp_path, caplog):
    """During a rolling deploy the new release migrates the database while the old one still runs;
    an old process started again then (a crashed relayer, a worker, a roll-back) found a revision
    it does not have, and Alembic's "Can't locate revision" stopped it for good. It starts, says
    so, and leaves the schema as it is."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    cfg = _later_release(tmp_path, "9001_later_release.py", _LATER_RELEASE)
    engine = get_engine()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    engine.dispose()

    with caplog.at_level(logging.WARNING, logger="wallet_app.core.db"):
        upgrade_schema()  # this release's start
    assert [r.getMessage() for r in caplog.records] == [
        f"the database is at migration 9001, which this release does not have (its newest: {head}):"
        " a later release migrated it; starting without migrating"
    ]
    with engine.begin() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == "9001"
        _payment(conn, _user(conn, "sub-old-code"), "p-old", nonce=1)  # the old code's INSERT
    engine.dispose()


def _schema(conn) -> dict[str, dict[str, dict]]:
    """table -> column -> its inspector entry (nullable, default), alembic_version aside."""
    found = inspect(conn)
    return {t: {c["name"]: c for c in found.get_columns(t)} for t in found.get_table_names() if t != "alembic_version"}



def _rule_breaks(cfg) -> list[str]:
    """Each migration of cfg's, upgraded one at a time on the test database, against the rule for
    migrations (README: Upgrading): the new release migrates the database while the previous one
    still serves and writes, so a migration keeps every table and column the previous one had (its
    SELECTs name them all), and a column it adds to a table is nullable or has a server default
    (the previous code's INSERTs do not name it), as does a column it makes NOT NULL."""
    revisions = [s.revision for s in reversed(list(ScriptDirectory.from_config(cfg).walk_revisions()))]
    engine = get_engine()
    broken: list[str] = []
    before: dict[str, dict[str, dict]] = {}
    for revision in revisions:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
            after = _schema(conn)
        for table, columns in sorted(before.items()):
            if table not in after:
                broken.append(f"{revision}: drops table {table}")
                continue
            broken += [f"{revision}: drops {table}.{name}" for name in sorted(columns.keys() - after[table].keys())]
            for name, column in after[table].items():
                required = not column["nullable"] and column.get("default") is None
                if required and (name not in columns or columns[name]["nullable"]):
                    broken.append(f"{revision}: {table}.{name} is NOT NULL without a server default")
        before = after
    engine.dispose()
    return broken


def test_each_migration_keeps_the_previous_releases_code_working(settings_env):
    assert _rule_breaks(alembic_config()) == []


_BREAKS_THE_RULE = '''
import sqlalchemy as sa
from alembic import op

revision = "9001"
down_revision = "{head}"


def upgrade() -> None:
    op.add_column("payments", sa.Column("later_required", sa.String(length=20), nullable=False))
    op.add_column("payments", sa.Column("later_defaulted", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("users") as batch:
        batch.drop_column("locale")
    op.drop_table("chain_cursors")
'''


def test_the_rule_check_finds_a_migration_that_breaks_the_previous_code(settings_env, tmp_path):
    cfg = _later_release(tmp_path, "9001_breaks.py", _BREAKS_THE_RULE)
    assert _rule_breaks(cfg) == [
        "9001: drops table chain_cursors",
        "9001: payments.later_required is NOT NULL without a server default",
        "9001: drops users.locale",
    ]


@pytest.mark.skipif(not ON_PG, reason="PostgreSQL's table locks (SQLite has one writer, with a busy timeout)")
def test_a_migration_waiting_for_a_table_lock_does_not_stop_the_tables_queries(settings_env, caplog):
    """A new release migrates while the previous one serves: 0017 drops an index of payments, which
    waits for every open transaction that read payments (an operator's psql session left open, here).
    Every query of payments queued behind that wait: a worker's status read failed after its lock
    timeout (10 s, then 503) for as long as the transaction stayed open. The migration gives up
    after 2 s and tries again, the queries pass between its tries, and it goes through once the
    transaction ends."""
    engine = get_engine()
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0016")
    waiting = text("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'payments'::regclass")
    holder = engine.connect()
    holder.begin()
    holder.execute(text("SELECT count(*) FROM payments"))
    migrating = threading.Thread(target=upgrade_schema)
    with caplog.at_level(logging.WARNING, logger="wallet_app.core.db"):
        migrating.start()
        try:
            with engine.connect() as conn:  # the migration's DROP INDEX is waiting
                wait_until(lambda: conn.execute(waiting).scalar_one() > 0, timeout=30)
            with read_session() as db:  # a worker's read, with the app's lock timeout
                assert db.execute(text("SELECT count(*) FROM payments")).scalar_one() == 0
        finally:
            holder.rollback()
            holder.close()
            migrating.join(60)
    assert not migrating.is_alive()
    assert "migrating: a table lock was not granted within 2 s (another transaction holds it); trying again in 1 s" in [
        r.getMessage() for r in caplog.records
    ]
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == head
    engine.dispose()


@pytest.mark.skipif(not ON_PG, reason="PostgreSQL's advisory lock (SQLite: the command's BEGIN IMMEDIATE)")
def test_the_alembic_command_waits_for_an_app_process_migrating(settings_env):
    """`alembic upgrade head` (README: to migrate ahead of the start, as a rolling deploy would) took
    neither the app's migration lock nor its bounded wait for a table's lock: run while a new
    release's process migrated, the two upgraded at once. It waits for the process's turn."""
    engine = get_engine()
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0016")
    env = {**os.environ, "DATABASE_URL": settings_env.database_url}
    waiting = text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
    with engine.connect() as app_process, app_process.begin():  # an app process's migration, under way
        app_process.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": db._MIGRATION_LOCK})
        cli = subprocess.Popen([sys.executable, "-m", "alembic", "upgrade", "head"], env=env, cwd=REPO_ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with engine.connect() as conn:
            wait_until(lambda: cli.poll() is not None or conn.execute(waiting).scalar_one() > 0, timeout=60)
        assert cli.poll() is None, cli.communicate()[0]  # it waits for the app's turn
    assert cli.wait(timeout=120) == 0, cli.communicate()[0]
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == head
    engine.dispose()
