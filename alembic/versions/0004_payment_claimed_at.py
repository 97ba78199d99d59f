"""payments.claimed_at: when a quote was executed (the per-user execute quota counts these)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.add_column(sa.Column("claimed_at", sa.Integer(), nullable=True))
    op.create_index("ix_payments_user_created", "payments", ["user_id", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_payments_user_created", table_name="payments")
    with op.batch_alter_table("payments") as batch:
        batch.drop_column("claimed_at")
