"""An index of the relayed payments not yet settled, by chain, relayer and nonce: the relayer's
follow loop (services.relayer.reconcile, crud.unsettled_payments) reads them every pass, up to five
times a second, and without it read the whole payments table each time (a sequential scan and a
sort: 354 ms at a million payments, for the handful still followed).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

UNSETTLED_SENT = "nonce IS NOT NULL AND NOT settled"  # as wallet_app.models has it today


def upgrade() -> None:
    op.create_index(
        "ix_payments_unsettled",
        "payments",
        ["chain_id", "relayer_address", "nonce"],
        sqlite_where=sa.text(UNSETTLED_SENT),
        postgresql_where=sa.text(UNSETTLED_SENT),
    )


def downgrade() -> None:
    op.drop_index("ix_payments_unsettled", table_name="payments")
