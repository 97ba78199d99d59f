"""payments.mined_in: the hash of the block a relayed payment's status was read from, while that
block may still be reorganised away (less than the chain's index_confirmations deep); the relayer
follows the payment until it is that deep, and sends it again if the block was replaced

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.add_column(sa.Column("mined_in", sa.String(length=66), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.drop_column("mined_in")
