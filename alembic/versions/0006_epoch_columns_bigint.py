"""Epoch-seconds columns as BIGINT: INTEGER is 32-bit on PostgreSQL (it ends in January 2038,
and a deadline or expiry set further ahead fails today); SQLite's INTEGER is 64-bit already

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

# table -> (column, nullable): every integer column holding epoch seconds
EPOCH_COLUMNS = {
    "users": [("last_backup_at", True), ("created_at", False)],
    "sessions": [("created_at", False), ("expires_at", False)],
    "user_tokens": [("created_at", False)],
    "activities": [("created_at", False)],
    "payments": [
        ("deadline", True),
        ("sent_at", True),
        ("claimed_at", True),
        ("created_at", False),
        ("updated_at", False),
    ],
}


def _alter(old: type[sa.types.TypeEngine], new: type[sa.types.TypeEngine]) -> None:
    # On SQLite batch mode rebuilds each table: upgrade_schema turns foreign keys off meanwhile
    # (`users` is dropped and re-created while the others reference it).
    for table, columns in EPOCH_COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            for column, nullable in columns:
                batch.alter_column(column, existing_type=old(), type_=new(), existing_nullable=nullable)


def upgrade() -> None:
    _alter(sa.Integer, sa.BigInteger)


def downgrade() -> None:
    _alter(sa.BigInteger, sa.Integer)
