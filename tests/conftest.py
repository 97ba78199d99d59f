"""Shared fixtures: settings pointed at a throw-away SQLite file, and a migrated database."""

import shutil

import pytest
from sqlalchemy import create_engine

from wallet_app.core.config import get_settings


@pytest.fixture(scope="session")
def dev_idp_key_file(tmp_path_factory):
    # One RSA key for the whole run (generating one per test is slow).
    return tmp_path_factory.mktemp("dev-idp") / "dev-idp-key.json"


@pytest.fixture
def settings_env(tmp_path, monkeypatch, dev_idp_key_file):
    """Settings for one test: SQLite in tmp_path, development sign-in, origin http://testserver.

    Set more variables with monkeypatch.setenv, then call get_settings.cache_clear().
    """
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'test.db'}")
    monkeypatch.setenv("PUBLIC_BASE_URL", "http://testserver")
    # Empty, not unset: a developer's .env must not switch tests to real Google.
    monkeypatch.setenv("GOOGLE_CLIENT_ID", "")
    monkeypatch.setenv("GOOGLE_CLIENT_SECRET", "")
    monkeypatch.setenv("DEV_IDP_KEY_FILE", str(dev_idp_key_file))
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def migrated_sqlite_template(tmp_path_factory):
    """A SQLite file migrated to head by Alembic once per run; tests get copies (faster)."""
    from wallet_app.core.db import upgrade_schema

    path = tmp_path_factory.mktemp("db-template") / "template.db"
    engine = create_engine(f"sqlite:///{path}")
    upgrade_schema(engine)
    engine.dispose()
    return path


@pytest.fixture
def db(settings_env, tmp_path, migrated_sqlite_template):
    """A fresh, migrated SQLite database at settings.database_url; yields its engine."""
    from wallet_app.core.db import get_engine

    shutil.copy(migrated_sqlite_template, tmp_path / "test.db")
    yield get_engine()
    get_engine().dispose()
