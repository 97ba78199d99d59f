"""merchant payments

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "payments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("payment_id", sa.String(length=66), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("token_address", sa.String(length=42), nullable=False),
        sa.Column("amount", sa.String(length=80), nullable=False),
        sa.Column("from_address", sa.String(length=42), nullable=False),
        sa.Column("merchant_address", sa.String(length=42), nullable=True),
        sa.Column("deadline", sa.Integer(), nullable=True),
        sa.Column("signature", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=255), nullable=True),
        sa.Column("relayer_address", sa.String(length=42), nullable=True),
        sa.Column("nonce", sa.Integer(), nullable=True),
        sa.Column("gas_price", sa.String(length=80), nullable=True),
        sa.Column("tx_hash", sa.String(length=66), nullable=True),
        sa.Column("old_tx_hashes", sa.Text(), nullable=True),
        sa.Column("raw_tx", sa.Text(), nullable=True),
        sa.Column("settled", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("activity_id", sa.Integer(), nullable=True),
        sa.Column("sent_at", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("chain_id", "relayer_address", "nonce", name="uq_payments_relayer_nonce"),
    )
    op.create_index("ix_payments_payment_id", "payments", ["payment_id"], unique=True)
    op.create_index("ix_payments_user_id", "payments", ["user_id"], unique=False)
    op.create_index("ix_payments_status", "payments", ["status"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_payments_status", table_name="payments")
    op.drop_index("ix_payments_user_id", table_name="payments")
    op.drop_index("ix_payments_payment_id", table_name="payments")
    op.drop_table("payments")
