"""Database tables (SQLModel). Alembic owns the schema: change a model, add a migration.

Times are integer epoch seconds (UTC): comparable in SQL on SQLite and PostgreSQL alike, and
BIGINT (PostgreSQL's INTEGER is 32-bit: it ends in 2038).
"""

import time
from typing import Protocol

from sqlalchemy import BigInteger, Column, Index, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel


def now_epoch() -> int:
    return int(time.time())


class _Stored(Protocol):
    @property
    def id(self) -> int | None: ...


def stored_id(row: _Stored) -> int:
    """The primary key of a row read from (or flushed to) the database: None only before the insert."""
    if row.id is None:
        raise ValueError(f"{type(row).__name__} has no id: it was never flushed")
    return row.id


class User(SQLModel, table=True):
    __tablename__ = "users"

    id: int | None = Field(default=None, primary_key=True)
    google_sub: str = Field(max_length=255, unique=True, index=True)
    email: str = Field(max_length=320)
    locale: str = Field(default="en", max_length=2)  # 'ko' | 'en'
    address: str | None = Field(default=None, max_length=42, index=True)  # lowercase 0x hex
    has_backup: bool = Field(default=False)
    last_backup_at: int | None = Field(default=None, sa_type=BigInteger)
    created_at: int = Field(default_factory=now_epoch, sa_type=BigInteger)


class UserSession(SQLModel, table=True):
    """A login. Only the SHA-256 of the cookie token is stored."""

    __tablename__ = "sessions"

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    token_hash: str = Field(max_length=64, unique=True, index=True)
    created_at: int = Field(default_factory=now_epoch, sa_type=BigInteger)
    expires_at: int = Field(sa_type=BigInteger)
    revoked: bool = Field(default=False)


# ---------------------------------------------------------------- tokens and activity (issue 4)
class UserToken(SQLModel, table=True):
    """A token in a user's list (seeded from the chains file, plus tokens the user added)."""

    __tablename__ = "user_tokens"
    __table_args__ = (UniqueConstraint("user_id", "chain_id", "token_address", name="uq_user_tokens_user_chain_token"),)

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    chain_id: int = Field(sa_type=BigInteger)  # chain ids can exceed 32 bits
    token_address: str = Field(max_length=42)  # lowercase 0x hex; the zero address is the native coin
    symbol: str = Field(max_length=64)
    name: str = Field(max_length=128)
    decimals: int
    created_at: int = Field(default_factory=now_epoch, sa_type=BigInteger)


OWN_TX_ENTRY = "log_index IS NULL AND type <> 'payment'"  # the entries of the user's own signed transactions
# The transfers others sent the user (services.indexer.RECEIVE), and all the other entries: the
# user's own (sends, payments, approvals). The activity list reads them apart (crud.list_activities).
RECEIVED_ENTRY = "type = 'receive'"
OWN_ENTRY = "type <> 'receive'"
HAS_NONCE = "nonce IS NOT NULL"  # the user's own signed transactions with their nonce (services.replacements)
# Entry statuses followed until mined or their nonce is taken (services.pending): pending, and
# dropped (the node holds none of it: it may still be in another node's pool, and mined).
UNRESOLVED = ("submitted", "dropped")
# The user's own entries followed (UNRESOLVED) by the indexer's status pass: payments are the
# relayer's, and stay out of ix_activities_unresolved (no index write on the payments' path).
UNRESOLVED_ENTRY = "status IN ('submitted', 'dropped') AND type <> 'payment'"


class Activity(SQLModel, table=True):
    """One entry of the user's activity list (a submitted transaction, a payment, a transfer
    received: type 'receive', found by services.indexer, with the log index of its Transfer event
    or -1 for a native transfer; the unique key makes indexing the same block twice harmless)."""

    __tablename__ = "activities"
    __table_args__ = (
        # NULL log_index (the user's own entries) never collides.
        UniqueConstraint("user_id", "chain_id", "tx_hash", "log_index", name="uq_activities_user_chain_tx_log"),
        # ...so the user's own transactions have this one: the same signed bytes submitted twice
        # are one entry (services.chain.submit_raw answers both). Payments are the relayer's.
        Index(
            "uq_activities_own_tx",
            "user_id",
            "chain_id",
            "tx_hash",
            unique=True,
            sqlite_where=text(OWN_TX_ENTRY),
            postgresql_where=text(OWN_TX_ENTRY),
        ),
        # The activity list's two reads, newest first (crud.list_activities): the user's own entries
        # and the transfers received, each an index walk of its newest rows, however many of the
        # other kind there are (a flood of received dust).
        Index(
            "ix_activities_user_own",
            "user_id",
            "created_at",
            "id",
            sqlite_where=text(OWN_ENTRY),
            postgresql_where=text(OWN_ENTRY),
        ),
        Index(
            "ix_activities_user_received",
            "user_id",
            "created_at",
            "id",
            sqlite_where=text(RECEIVED_ENTRY),
            postgresql_where=text(RECEIVED_ENTRY),
        ),
        # A nonce group of the user's own transactions (services.pending: a send, its speed-ups and
        # cancel), read at each status refresh of a pending send and before each submit.
        Index(
            "ix_activities_nonce_group",
            "user_id",
            "chain_id",
            "nonce",
            sqlite_where=text(HAS_NONCE),
            postgresql_where=text(HAS_NONCE),
        ),
        # The entries the indexer's status pass follows, newest first (services.indexer.
        # refresh_outgoing): an index walk of those alone, however many entries are newer.
        Index(
            "ix_activities_unresolved",
            "chain_id",
            "id",
            sqlite_where=text(UNRESOLVED_ENTRY),
            postgresql_where=text(UNRESOLVED_ENTRY),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="users.id", index=True)
    type: str = Field(max_length=32)  # 'transfer' | 'approve' | 'call' | later 'payment', ...
    chain_id: int | None = Field(default=None, sa_type=BigInteger)
    tx_hash: str | None = Field(default=None, max_length=66, index=True)
    token_address: str | None = Field(default=None, max_length=42)
    token_symbol: str | None = Field(default=None, max_length=64)
    token_decimals: int | None = Field(default=None)
    amount: str | None = Field(default=None, max_length=80)  # integer string, smallest unit
    counterparty: str | None = Field(default=None, max_length=42)  # lowercase 0x hex
    # 'submitted' (pending) | 'ok' | 'failed' | 'replaced' | 'cancelled' (another tx took its nonce)
    # | 'dropped' (the node holds none of it now; followed on: UNRESOLVED)
    status: str = Field(default="submitted", max_length=16, index=True)
    created_at: int = Field(default_factory=now_epoch, sa_type=BigInteger, index=True)
    data: str | None = Field(default=None, sa_column=Column(Text, nullable=True))  # free JSON text
    # The user's own signed transactions (services.replacements): their nonce, and the entry a
    # speed-up or cancel replaces; the entries of one (chain, sender, nonce) are one group.
    nonce: int | None = Field(default=None, sa_type=BigInteger)
    replaces_id: int | None = Field(default=None, index=True)
    log_index: int | None = Field(default=None)  # received entries only: the Transfer log's index, -1 native


# ---------------------------------------------------------------- the incoming-transfer indexer (issue 14)
class ChainCursor(SQLModel, table=True):
    """Per chain: the next block the indexer scans, and who may scan it (a lease: one indexer
    at a time across processes and machines; another takes over when it expires)."""

    __tablename__ = "chain_cursors"

    chain_id: int = Field(sa_type=BigInteger, primary_key=True, sa_column_kwargs={"autoincrement": False})
    next_block: int = Field(sa_type=BigInteger)
    lease_owner: str | None = Field(default=None, max_length=64)
    lease_until: int = Field(default=0, sa_type=BigInteger)  # epoch seconds
    # The newest block scanned and its hash: a pass that finds another block there (a reorganisation
    # under the cursor) scans the blocks before it again (services.indexer.REWIND_BLOCKS).
    last_block: int | None = Field(default=None, sa_type=BigInteger)
    last_hash: str | None = Field(default=None, max_length=66)


# ---------------------------------------------------------------- merchant payments (issue 6)
# The payments that hold their payment id for their user: all but those failed for good (a failed
# payment still followed by the relayer may yet turn out paid).
HOLDS_ITS_ID = "status <> 'failed' OR NOT settled"
# The relayed payments the relayer still follows (a nonce taken, not settled): crud.unsettled_payments.
UNSETTLED_SENT = "nonce IS NOT NULL AND NOT settled"


class Payment(SQLModel, table=True):
    """A payment quote and, once executed, its relayed pay() transaction.

    status: 'quoted' (not executed) -> 'pending' (relayed) -> 'ok' | 'failed' (+ reason); back to
    'pending' when the block of its receipt is reorganised away (mined_in).
    settled: the relayer nonce is consumed on chain in a block the chain's index_confirmations
    deep, or none was used; reconcile() looks after every row with a nonce that is not settled (a
    failed-expired row may still hold one, a mined one waits for its block to be final).
    """

    __tablename__ = "payments"
    __table_args__ = (
        UniqueConstraint("chain_id", "relayer_address", "nonce", name="uq_payments_relayer_nonce"),
        # A payment id is unique per user, as the contract's paymentRef is per payer: a merchant
        # link's ref is the payment id of each user who pays it (services.payments). A payment that
        # failed for good (settled: nothing of it can still be mined) holds it no more: the user may
        # pay that order again (the contract, which it never reached, refuses a second success).
        Index(
            "uq_payments_user_payment_id",
            "user_id",
            "payment_id",
            unique=True,
            sqlite_where=text(HOLDS_ITS_ID),
            postgresql_where=text(HOLDS_ITS_ID),
        ),
        Index("ix_payments_user_created", "user_id", "created_at"),  # the per-user quotas count by time
        # The relayer's hourly budget sums gas_cost_wei by chain and claim time (the index alone answers it).
        Index("ix_payments_chain_spend", "chain_id", "claimed_at", "gas_cost_wei"),
        # The relayer's follow loop reads these every pass (crud.unsettled_payments): an index walk
        # of the few still followed, in its order, however many payments there are.
        Index(
            "ix_payments_unsettled",
            "chain_id",
            "relayer_address",
            "nonce",
            sqlite_where=text(UNSETTLED_SENT),
            postgresql_where=text(UNSETTLED_SENT),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    payment_id: str = Field(max_length=66, index=True)  # 0x + 64 hex; the public id (the user's), the paymentRef
    user_id: int = Field(foreign_key="users.id", index=True)
    chain_id: int = Field(sa_type=BigInteger)  # chain ids can exceed 32 bits
    token_address: str = Field(max_length=42)  # lowercase 0x hex
    amount: str = Field(max_length=80)  # integer string, smallest unit
    from_address: str = Field(max_length=42)  # the user's address at quote time, lowercase
    merchant_address: str | None = Field(default=None, max_length=42)  # lowercase; set by the quote or at execute
    deadline: int | None = Field(default=None, sa_type=BigInteger)
    signature: str | None = Field(default=None, max_length=200)
    # The payer's EIP-2612 permit checked by execute, JSON {value, deadline, signature}: payWithPermit.
    permit: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    status: str = Field(default="quoted", max_length=16, index=True)
    reason: str | None = Field(default=None, max_length=255)
    relayer_address: str | None = Field(default=None, max_length=42)  # lowercase
    nonce: int | None = Field(default=None)
    gas_price: str | None = Field(default=None, max_length=80)
    tx_hash: str | None = Field(default=None, max_length=66)
    old_tx_hashes: str | None = Field(default=None, sa_column=Column(Text, nullable=True))  # replaced, space-separated
    raw_tx: str | None = Field(default=None, sa_column=Column(Text, nullable=True))  # signed, for re-sending
    settled: bool = Field(default=False)
    # The hash of the block whose receipt gave the status, while the row is followed until that
    # block is final: a receipt then missing, or in another block, is a reorganisation.
    mined_in: str | None = Field(default=None, max_length=66)
    activity_id: int | None = Field(default=None)
    sent_at: int | None = Field(default=None, sa_type=BigInteger)
    claimed_at: int | None = Field(default=None, sa_type=BigInteger)  # when execute took the quote (the execute quota)
    # What the relayer's transaction costs, in wei, counted against the chain's hourly budget:
    # max_pay_gas x gas price from execute until it is sent, then gas limit x price until mined,
    # then gas used x price; 0 when nothing was sent.
    gas_cost_wei: int | None = Field(default=None, sa_type=BigInteger)
    created_at: int = Field(default_factory=now_epoch, sa_type=BigInteger)
    updated_at: int = Field(default_factory=now_epoch, sa_type=BigInteger)


# ---------------------------------------------------------------- merchant webhooks (issue 14 item 6)
class MerchantWebhook(SQLModel, table=True):
    """The outbox of signed webhooks (services.merchant_webhooks): one row per settled payment,
    written in the relayer's transaction that settles it, delivered at least once.

    status: 'pending' -> 'sent' | 'failed' (given up after settings.merchant_webhook_max_attempts).
    A sender leases a row (lease_expires_at) before its POST: a second relayer skips it, and a
    crashed sender's lease runs out, after which the row is sent again (same event_id).
    """

    __tablename__ = "merchant_webhooks"
    __table_args__ = (Index("ix_merchant_webhooks_due", "status", "next_attempt_at"),)

    id: int | None = Field(default=None, primary_key=True)
    event_id: str = Field(max_length=160, unique=True)  # the idempotency id the merchant deduplicates on
    payload: str = Field(sa_column=Column(Text, nullable=False))  # the event's JSON, without its timestamp
    status: str = Field(default="pending", max_length=16)
    attempts: int = Field(default=0)
    next_attempt_at: int = Field(default_factory=now_epoch, sa_type=BigInteger)
    lease_expires_at: int | None = Field(default=None, sa_type=BigInteger)
    last_error: str | None = Field(default=None, max_length=255)
    created_at: int = Field(default_factory=now_epoch, sa_type=BigInteger)
    sent_at: int | None = Field(default=None, sa_type=BigInteger)
