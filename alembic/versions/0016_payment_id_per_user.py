"""A payment id is unique per user, no longer across users: a merchant link's ref is the payment
id (the on-chain paymentRef) of each user who pays it, as the payment contract keeps a ref per
payer. One user's quote or failed payment of a ref held it against every other payer for good.
The webhook's event id names the payer too, so it grows.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_payments_payment_id", table_name="payments")
    op.create_index("ix_payments_payment_id", "payments", ["payment_id"], unique=False)
    op.create_index("uq_payments_user_payment_id", "payments", ["user_id", "payment_id"], unique=True)
    with op.batch_alter_table("merchant_webhooks") as batch:
        batch.alter_column(
            "event_id", existing_type=sa.String(length=100), type_=sa.String(length=160), existing_nullable=False
        )


def downgrade() -> None:
    with op.batch_alter_table("merchant_webhooks") as batch:
        batch.alter_column(
            "event_id", existing_type=sa.String(length=160), type_=sa.String(length=100), existing_nullable=False
        )
    op.drop_index("uq_payments_user_payment_id", table_name="payments")
    op.drop_index("ix_payments_payment_id", table_name="payments")
    op.create_index("ix_payments_payment_id", "payments", ["payment_id"], unique=True)
