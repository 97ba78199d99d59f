"""A unique index on the user's own transactions' activity entries (user, chain, tx hash): the
same signed transaction submitted twice is one entry (services.chain.submit_raw answers a
transaction the node holds already as sent). An entry recorded twice before keeps its first.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

OWN_TX_ENTRY = "log_index IS NULL AND type <> 'payment'"  # as wallet_app.models has it today


def _own(alias: str) -> str:
    return f"{alias}.log_index IS NULL AND {alias}.type <> 'payment'"


# The first entry of a's transaction (a an own entry with a hash).
_FIRST_OF_A = (
    f"SELECT MIN(b.id) FROM activities b WHERE b.user_id = a.user_id AND b.chain_id = a.chain_id"
    f" AND b.tx_hash = a.tx_hash AND {_own('b')}"
)
_LATER_COPIES = f"SELECT a.id FROM activities a WHERE {_own('a')} AND a.tx_hash IS NOT NULL AND a.id > ({_FIRST_OF_A})"


def upgrade() -> None:
    # A speed-up or cancel that points at a later copy points at the first one instead.
    op.execute(
        f"UPDATE activities SET replaces_id = (SELECT ({_FIRST_OF_A}) FROM activities a"
        f" WHERE a.id = activities.replaces_id) WHERE replaces_id IN ({_LATER_COPIES})"
    )
    op.execute(f"DELETE FROM activities WHERE id IN ({_LATER_COPIES})")
    op.create_index(
        "uq_activities_own_tx",
        "activities",
        ["user_id", "chain_id", "tx_hash"],
        unique=True,
        sqlite_where=sa.text(OWN_TX_ENTRY),
        postgresql_where=sa.text(OWN_TX_ENTRY),
    )


def downgrade() -> None:
    op.drop_index("uq_activities_own_tx", table_name="activities")
