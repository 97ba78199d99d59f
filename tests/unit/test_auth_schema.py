"""The Alembic migrations build exactly the tables the models describe."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect
from sqlmodel import SQLModel

import wallet_app.models  # noqa: F401
from wallet_app.core.db import get_engine, upgrade_schema


def test_upgrade_schema_on_a_new_database_is_idempotent(settings_env):
    upgrade_schema()
    upgrade_schema()  # second start: nothing to do, no error
    engine = get_engine()
    try:
        names = set(inspect(engine).get_table_names())
        assert {"users", "sessions", "alembic_version"} <= names
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
            unique = {i["name"]: i["unique"] for i in inspect(conn).get_indexes("users")}
            assert unique["ix_users_google_sub"]
    finally:
        engine.dispose()
