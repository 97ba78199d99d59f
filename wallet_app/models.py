"""Database tables (SQLModel). Alembic owns the schema: change a model, add a migration.

Times are integer epoch seconds (UTC): comparable in SQL on SQLite and PostgreSQL alike.
"""

import time

from sqlmodel import Field, SQLModel


def now_epoch() -> int:
    return int(time.time())


class User(SQLModel, table=True):
    __tablename__ = "users"

    id: int | None = Field(default=None, primary_key=True)
    google_sub: str = Field(max_length=255, unique=True, index=True)
    email: str = Field(max_length=320)
    locale: str = Field(default="en", max_length=2)  # 'ko' | 'en'
    address: str | None = Field(default=None, max_length=42, index=True)  # lowercase 0x hex
    has_backup: bool = Field(default=False)
    last_backup_at: int | None = Field(default=None)
    created_at: int = Field(default_factory=now_epoch)


class UserSession(SQLModel, table=True):
    """A login. Only the SHA-256 of the cookie token is stored."""

    __tablename__ = "sessions"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    token_hash: str = Field(max_length=64, unique=True, index=True)
    created_at: int = Field(default_factory=now_epoch)
    expires_at: int
    revoked: bool = Field(default=False)
