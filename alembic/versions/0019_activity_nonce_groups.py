"""An index of the user's own signed transactions by (user, chain, nonce): a nonce group (a send and
its speed-ups or cancel, services.pending) is read by it each time a pending send's status is
refreshed (the Activity page's poll, the indexer's pass) and before each submit (nonce_held).
Without it each read went through all the user's activity entries, transfers received included
(111 ms for an address with 150,000 of them).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

HAS_NONCE = "nonce IS NOT NULL"  # as wallet_app.models has it today


def upgrade() -> None:
    op.create_index(
        "ix_activities_nonce_group",
        "activities",
        ["user_id", "chain_id", "nonce"],
        sqlite_where=sa.text(HAS_NONCE),
        postgresql_where=sa.text(HAS_NONCE),
    )


def downgrade() -> None:
    op.drop_index("ix_activities_nonce_group", table_name="activities")
