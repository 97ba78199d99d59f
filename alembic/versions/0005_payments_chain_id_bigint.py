"""payments.chain_id as BIGINT, like user_tokens and activities: chain ids can exceed 32 bits
(INTEGER is 64-bit on SQLite but 32-bit on PostgreSQL)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.alter_column("chain_id", existing_type=sa.Integer(), type_=sa.BigInteger(), existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("payments") as batch:
        batch.alter_column("chain_id", existing_type=sa.BigInteger(), type_=sa.Integer(), existing_nullable=False)
