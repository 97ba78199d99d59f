"""A payment that failed for good (failed and settled: nothing of it can be mined any more) no
longer holds its payment id for its user: that user may pay the order (the ref) again. A failed
payment the relayer still follows keeps holding it (it may yet turn out paid).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

HOLDS_ITS_ID = "status <> 'failed' OR NOT settled"  # as wallet_app.models has it today


def upgrade() -> None:
    op.drop_index("uq_payments_user_payment_id", table_name="payments")
    op.create_index(
        "uq_payments_user_payment_id",
        "payments",
        ["user_id", "payment_id"],
        unique=True,
        sqlite_where=sa.text(HOLDS_ITS_ID),
        postgresql_where=sa.text(HOLDS_ITS_ID),
    )


def downgrade() -> None:
    op.drop_index("uq_payments_user_payment_id", table_name="payments")
    op.create_index("uq_payments_user_payment_id", "payments", ["user_id", "payment_id"], unique=True)
