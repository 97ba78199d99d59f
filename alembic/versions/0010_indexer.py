"""The incoming-transfer indexer: a cursor and lease per chain, activities.log_index with a unique
key per (user, chain, tx, log), and an index on activities.status (the background status pass)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chain_cursors",
        sa.Column("chain_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("next_block", sa.BigInteger(), nullable=False),
        sa.Column("lease_owner", sa.String(length=64), nullable=True),
        sa.Column("lease_until", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("chain_id"),
    )
    with op.batch_alter_table("activities") as batch:
        batch.add_column(sa.Column("log_index", sa.Integer(), nullable=True))
        batch.create_unique_constraint(
            "uq_activities_user_chain_tx_log", ["user_id", "chain_id", "tx_hash", "log_index"]
        )
    op.create_index("ix_activities_status", "activities", ["status"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_activities_status", table_name="activities")
    with op.batch_alter_table("activities") as batch:
        batch.drop_constraint("uq_activities_user_chain_tx_log", type_="unique")
        batch.drop_column("log_index")
    op.drop_table("chain_cursors")
