"""An index of the activity entries still followed (pending or dropped; payments, which the
relayer follows, left out: no index write on the payments' path) by chain and id: the
indexer's status pass (services.indexer.refresh_outgoing, every INDEXER_INTERVAL_SECONDS) reads
them a hundred at a time, newest first. Once they were more than about 1% of the table (sends
dropped and never followed by another of their nonce stay followed for good), PostgreSQL walked
the primary key backwards through every newer entry instead (757 ms a pass at 20,000 of them
among 2.1 million entries).

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

UNRESOLVED_ENTRY = "status IN ('submitted', 'dropped') AND type <> 'payment'"  # as wallet_app.models has it today


def upgrade() -> None:
    op.create_index(
        "ix_activities_unresolved",
        "activities",
        ["chain_id", "id"],
        sqlite_where=sa.text(UNRESOLVED_ENTRY),
        postgresql_where=sa.text(UNRESOLVED_ENTRY),
    )


def downgrade() -> None:
    op.drop_index("ix_activities_unresolved", table_name="activities")
