"""chain_cursors.last_block and last_hash: the newest block the indexer scanned and its hash, so
that a pass finds a reorganisation under its cursor (the block replaced) and scans again

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chain_cursors") as batch:
        batch.add_column(sa.Column("last_block", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("last_hash", sa.String(length=66), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chain_cursors") as batch:
        batch.drop_column("last_hash")
        batch.drop_column("last_block")
