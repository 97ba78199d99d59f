"""payments.gas_cost_wei: what each relayed transaction costs, and an index to sum it by chain and
claim time (the relayer's hourly gas budget, relayer_max_spend_wei_per_hour)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.add_column(sa.Column("gas_cost_wei", sa.BigInteger(), nullable=True))
    op.create_index("ix_payments_chain_spend", "payments", ["chain_id", "claimed_at", "gas_cost_wei"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_payments_chain_spend", table_name="payments")
    with op.batch_alter_table("payments") as batch:
        batch.drop_column("gas_cost_wei")
