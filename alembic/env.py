"""Alembic environment: URL from the app settings, metadata from wallet_app.models."""

from logging.config import fileConfig

from alembic import context
from sqlalchemy import create_engine, event
from sqlmodel import SQLModel

import wallet_app.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from wallet_app.core.config import get_settings
from wallet_app.core.db import take_migration_turn

config = context.config
target_metadata = SQLModel.metadata
# Given by wallet_app.core.db.upgrade_schema(); absent when run from the alembic CLI.
connection = config.attributes.get("connection")

# Only the CLI configures logging: inside the app it would replace the app's logging setup.
if connection is None and config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _configure(conn, **options) -> None:
    context.configure(
        connection=conn,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds tables (no-op elsewhere).
        render_as_batch=conn.dialect.name == "sqlite",
        compare_type=True,
        **options,
    )


def run_migrations_offline() -> None:
    context.configure(
        url=get_settings().database_url,
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(get_settings().database_url)
    options = {}
    if engine.dialect.name == "sqlite":
        # One transaction for the whole upgrade, DDL included, as in upgrade_schema: SQLAlchemy's
        # pysqlite recipe (the driver begins nothing; BEGIN is ours; this engine only migrates),
        # and Alembic told so (else it commits after each revision on SQLite).
        event.listen(engine, "connect", lambda dbapi_conn, _record: setattr(dbapi_conn, "isolation_level", None))
        event.listen(engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
        options["transactional_ddl"] = True
    with engine.connect() as conn:
        _configure(conn, **options)
        with context.begin_transaction():
            if conn.dialect.name == "postgresql":
                # Never beside an app process's migration, nor holding a table's queries for long
                # (a table lock not granted in 2 s fails the command: run it again).
                take_migration_turn(conn)
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
