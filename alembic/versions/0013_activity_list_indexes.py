"""Two partial indexes for the activity list (wallet_app.crud.list_activities), which reads the
user's own entries and the transfers received apart, newest first: each read walks its index's
newest rows, however many of the other kind the user has (a flood of received dust).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

# As wallet_app.models has them today.
OWN_ENTRY = "type <> 'receive'"
RECEIVED_ENTRY = "type = 'receive'"
INDEXES = {"ix_activities_user_own": OWN_ENTRY, "ix_activities_user_received": RECEIVED_ENTRY}


def upgrade() -> None:
    for name, where in INDEXES.items():
        op.create_index(
            name,
            "activities",
            ["user_id", "created_at", "id"],
            sqlite_where=sa.text(where),
            postgresql_where=sa.text(where),
        )


def downgrade() -> None:
    for name in INDEXES:
        op.drop_index(name, table_name="activities")
