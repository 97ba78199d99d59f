"""The merchant webhooks' outbox (issue 14 item 6, services/merchant_webhooks.py)

Revision ID: 0008
Revises: 0007_permit
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007_permit"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "merchant_webhooks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.String(length=100), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.BigInteger(), nullable=False),
        sa.Column("lease_expires_at", sa.BigInteger(), nullable=True),
        sa.Column("last_error", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("sent_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event_id"),
    )
    op.create_index("ix_merchant_webhooks_due", "merchant_webhooks", ["status", "next_attempt_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_merchant_webhooks_due", table_name="merchant_webhooks")
    op.drop_table("merchant_webhooks")
