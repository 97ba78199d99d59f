"""activities.nonce and activities.replaces_id: a pending send sped up or cancelled (issue 14 item 4)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("activities") as batch:
        batch.add_column(sa.Column("nonce", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("replaces_id", sa.Integer(), nullable=True))
    op.create_index("ix_activities_replaces_id", "activities", ["replaces_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_activities_replaces_id", table_name="activities")
    with op.batch_alter_table("activities") as batch:
        batch.drop_column("replaces_id")
        batch.drop_column("nonce")
