"""Incoming transfers (issue 14 item 4): what others send to the wallet's users appears in their
activity as 'receive' entries, found in the background by the relayer process (wallet_app.relayer).

Per chain, from a cursor stored in the database (chain_cursors.next_block) up to the head minus
the chain's `index_confirmations` (reorgs: a block that deep is taken as final), in ranges of at
most RANGE_BLOCKS blocks:
- ERC-20: eth_getLogs for Transfer events of the tokens in the users' lists, with the users'
  addresses as the topic-2 (recipient) filter, TOPIC_CHUNK addresses per filter, every filter of
  the range in one JSON-RPC batch. An entry is recorded only for a token in the recipient's own
  list and a non-zero amount: transfers of unknown tokens and zero-value ones are the stuff of
  spam and address poisoning.
- Native coin: logs do not show it, so every block of the range is read with its transactions
  (eth_getBlockByNumber, full, BLOCK_BATCH blocks per JSON-RPC batch) for value transfers to a
  user's address. Limit: a transfer made inside a contract (an internal transaction, e.g. a
  multisig or an exchange's batch payout) is not a transaction of the block and is not seen.
  A plain value transfer to an account without code cannot fail once mined, so no receipt is read.
- Transactions sent by extensions.hidden_senders() are not shown (development: the dev faucet's
  funding of a new wallet, which is set-up, not the user's activity).
The entries of a range and the cursor move in one database transaction; the unique key
(user, chain, tx hash, log index; -1 for native) makes scanning a block twice harmless, so a crash
between the two or a restart loses and doubles nothing. Memory is bounded by one block batch.

One indexer at a time per chain, across processes and machines: the cursor row is a lease
(lease_owner, lease_until) taken and renewed by conditional UPDATEs, and the cursor only moves
while the lease is held; another process takes over LEASE_SECONDS after the holder stopped.
A new chain starts at its current safe head: history from before is not indexed.

Outgoing entries (the user's own sends) get their status here too: refresh_outgoing() reads the
receipts of 'submitted' entries in one batch and marks them ok or failed (status_from_receipt)
once their block is index_confirmations deep, like the transfers received (chain.final_receipts).
Payments are left to the relayer, which owns their status.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import delete, or_, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select
from web3 import Web3

from wallet_app.core import extensions
from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.models import UNRESOLVED_ENTRY, Activity, ChainCursor, User, UserToken, now_epoch, stored_id
from wallet_app.services import chain as chain_svc
from wallet_app.services import pending as pending_svc
from wallet_app.services.chain import ChainConfig
from wallet_app.services.eth import ZERO_ADDRESS

log = logging.getLogger(__name__)

TRANSFER_TOPIC = "0x" + Web3.keccak(text="Transfer(address,address,uint256)").hex().removeprefix("0x")
RANGE_BLOCKS = 1000  # blocks per eth_getLogs range and per database transaction
BLOCK_BATCH = 50  # eth_getBlockByNumber calls per JSON-RPC batch (bounds memory: full blocks)
TOPIC_CHUNK = 500  # recipient addresses per eth_getLogs filter (providers cap filter sizes)
TOKEN_CHUNK = 500  # token addresses per filter: geth refuses more than 1,000 (users list any tokens)
PASS_BLOCKS = 5000  # blocks per chain per pass at most: a long catch-up renews the lease on the way
LEASE_SECONDS = 60
# A pass first reads the newest block scanned again: another hash there is a reorganisation under
# the cursor, deeper than index_confirmations, and the blocks up to this many before the cursor
# are scanned again (a deeper one is not repaired: raise index_confirmations for such a chain).
REWIND_BLOCKS = 128
STATUS_BATCH = 100  # submitted entries whose receipts are read per pass
RECEIVE = "receive"
# A user's entries kept per range at most (the newest): the activity list shows the newest 100
# (services.activity.ACTIVITY_LIMIT), and a token flooding its holder with transfers must not fill
# the database at the price of its gas.
RECEIVE_KEEP = 100
NATIVE_LOG_INDEX = -1


@dataclass(frozen=True)
class Incoming:
    """A transfer to a watched address, before it is matched to users."""

    to: str  # lowercase
    sender: str  # lowercase
    token_address: str  # lowercase; the zero address for the native coin
    amount: int
    tx_hash: str
    log_index: int  # NATIVE_LOG_INDEX for a native transfer
    block_number: int
    tx_index: int = 0  # the transaction's position in its block (the entries' order)


# ---------------------------------------------------------------- pure helpers (table-tested)


def plan_range(
    next_block: int, head: int, confirmations: int, max_blocks: int = RANGE_BLOCKS
) -> tuple[int, int] | None:
    """The next range to scan (first, last), inclusive; None when the cursor is at the safe head."""
    safe = head - confirmations
    if next_block > safe:
        return None
    return next_block, min(safe, next_block + max_blocks - 1)


def _address_topic(address: str) -> str:
    return "0x" + "0" * 24 + address.lower().removeprefix("0x")


def _topic_address(topic: str) -> str | None:
    t = topic.lower().removeprefix("0x")
    return "0x" + t[24:] if len(t) == 64 and t[:24] == "0" * 24 else None


def transfers_from_logs(logs: Iterable[dict], watched: set[str]) -> list[Incoming]:
    """ERC-20 Transfer logs (raw JSON-RPC form) -> the transfers to watched addresses with an
    amount. ERC-721's Transfer has the same topic but 4 topics and no data: left out."""
    found = []
    for entry in logs:
        topics = entry.get("topics") or []
        data = (entry.get("data") or "0x").removeprefix("0x")
        if entry.get("removed") or len(topics) != 3 or topics[0].lower() != TRANSFER_TOPIC or len(data) != 64:
            continue
        sender, to = _topic_address(topics[1]), _topic_address(topics[2])
        amount = int(data, 16)
        if to is None or sender is None or to not in watched or amount == 0:
            continue
        found.append(
            Incoming(
                to=to,
                sender=sender,
                token_address=entry["address"].lower(),
                amount=amount,
                tx_hash=entry["transactionHash"].lower(),
                log_index=int(entry["logIndex"], 16),
                block_number=int(entry["blockNumber"], 16),
                tx_index=int(entry.get("transactionIndex") or "0x0", 16),
            )
        )
    return found


def native_from_block(block: dict, watched: set[str]) -> list[Incoming]:
    """A block with full transactions (raw JSON-RPC form) -> its value transfers to watched addresses."""
    number = int(block["number"], 16)
    found = []
    for tx in block.get("transactions") or []:
        to = (tx.get("to") or "").lower()
        value = int(tx.get("value") or "0x0", 16)
        if value and to in watched:
            position = int(tx.get("transactionIndex") or "0x0", 16)
            found.append(
                Incoming(
                    to, tx["from"].lower(), ZERO_ADDRESS, value, tx["hash"].lower(), NATIVE_LOG_INDEX, number, position
                )
            )
    return found


def status_from_receipt(receipt: dict | None) -> str | None:
    """'ok' | 'failed' from a receipt (chain_svc.receipts' form, or web3's); None while not mined."""
    if not receipt:
        return None
    return "ok" if int(receipt["status"]) == 1 else "failed"


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


# ---------------------------------------------------------------- who is watched (database)


@dataclass
class WatchList:
    """The users' addresses (address -> user ids: a wallet restored under two Google accounts is
    two users) and the tokens they hold in their lists: the chain's default tokens (everyone's:
    seeded into every list, never removed) and, per token, who added it."""

    users: dict[str, list[int]]
    holdings: dict[str, dict[int, tuple[str, int]]]  # token (lowercase) -> user id -> (symbol, decimals)
    defaults: dict[str, tuple[str, int]]  # token (lowercase) -> (symbol, decimals)

    @property
    def addresses(self) -> list[str]:
        return sorted(self.users)

    @property
    def tokens(self) -> list[str]:
        return sorted((set(self.holdings) | set(self.defaults)) - {ZERO_ADDRESS})

    def token_of(self, token: str, user_id: int) -> tuple[str, int] | None:
        """(symbol, decimals) of `token` in the user's list, None when it is not there."""
        return self.holdings.get(token, {}).get(user_id) or self.defaults.get(token)


def watch_list(db: Session, chain: ChainConfig) -> WatchList:
    users: dict[str, list[int]] = {}
    for uid, address in db.exec(select(User.id, User.address).where(col(User.address).is_not(None))):
        if uid is not None and address:
            users.setdefault(address.lower(), []).append(uid)
    defaults = {t.token_address.lower(): (t.token_symbol, t.token_decimals) for t in chain.tokens}
    # Only the tokens users added: the chain's tokens and its native coin are seeded into every
    # list (services.tokens), and `defaults` answers for them. Read with the rest, they were every
    # user's rows at every range (a year's 100,000 users: 300,000 rows, 2 s and 0.6 s of the
    # relayer process's CPU per range).
    seeded = sorted({*defaults, ZERO_ADDRESS})
    holdings: dict[str, dict[int, tuple[str, int]]] = {}
    rows = db.exec(
        select(UserToken.user_id, UserToken.token_address, UserToken.symbol, UserToken.decimals).where(
            UserToken.chain_id == chain.chain_id, col(UserToken.token_address).not_in(seeded)
        )
    )
    for uid, token, symbol, decimals in rows:
        holdings.setdefault(token.lower(), {})[uid] = (symbol, decimals)
    return WatchList(users, holdings, defaults)


def entries_for(found: Iterable[Incoming], watch: WatchList, chain: ChainConfig, times: dict[int, int]) -> list[dict]:
    """Transfers -> activity rows (the columns), in chain order (ids follow it: the list's order
    among entries of one second): one per recipient user holding the token; the native coin is
    everyone's; a user's newest RECEIVE_KEEP at most. `times`: block number -> timestamp (the
    entry's time)."""
    rows = []
    kept: dict[int, int] = {}
    for t in sorted(found, key=lambda t: (t.block_number, t.tx_index, t.log_index), reverse=True):
        for uid in reversed(watch.users.get(t.to, [])):  # newest first, reversed at the end
            if t.token_address == ZERO_ADDRESS:
                token: tuple[str, int] | None = (chain.native_symbol, chain.native_decimals)
            else:
                token = watch.token_of(t.token_address, uid)
            if token is None or kept.get(uid, 0) >= RECEIVE_KEEP:
                continue
            kept[uid] = kept.get(uid, 0) + 1
            rows.append(
                {
                    "user_id": uid,
                    "type": RECEIVE,
                    "chain_id": chain.chain_id,
                    "tx_hash": t.tx_hash,
                    "log_index": t.log_index,
                    "token_address": t.token_address,
                    "token_symbol": token[0],
                    "token_decimals": token[1],
                    "amount": str(t.amount),
                    "counterparty": t.sender,
                    "status": "ok",
                    "created_at": times.get(t.block_number) or now_epoch(),
                    "data": block_data(t.block_number),
                }
            )
    return rows[::-1]


def block_data(number: int) -> str:
    """A received entry's data: its block (remove_replaced finds the entries of a block by it)."""
    return json.dumps({"block": number}, separators=(",", ":"))


def remove_replaced(db: Session, chain_id: int, blocks: range, keep: set[tuple[int, str, int]]) -> int:
    """After a reorganisation, in db's transaction: deletes the chain's received entries of these
    blocks whose (user, tx hash, log index) is not in `keep` (what the chain holds now in the range
    scanned again, RECEIVE_KEEP not applied: an entry kept before stays; those of later blocks come
    back when their range is scanned). -> how many were deleted."""
    if not blocks:
        return 0
    entries = db.exec(
        select(Activity.id, Activity.user_id, Activity.tx_hash, Activity.log_index).where(
            Activity.chain_id == chain_id,
            Activity.type == RECEIVE,
            col(Activity.data).in_([block_data(n) for n in blocks]),
        )
    ).all()
    gone = [i for i, user_id, tx_hash, log_index in entries if (user_id, tx_hash, log_index) not in keep]
    if gone:
        db.execute(delete(Activity).where(col(Activity.id).in_(gone)))
    return len(gone)


def rescan_from(cursor: int, last_block: int, rewind: int = REWIND_BLOCKS) -> int:
    """Where the indexer scans again when block `last_block`, the newest it scanned, is no longer
    the chain's: `rewind` blocks before it (the cursor, when it was moved back past it)."""
    return max(0, min(cursor, last_block + 1) - rewind)


def insert_new(db: Session, rows: list[dict]) -> int:
    """Inserts the rows the unique key does not already hold (in db's transaction); how many were new."""
    if not rows:
        return 0
    dialect = db.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = Activity.__table__  # type: ignore[attr-defined]
    stmt = insert(table).values(rows).on_conflict_do_nothing().returning(table.c.id)
    return len(db.execute(stmt).all())  # rowcount is not reported for this on PostgreSQL


# ---------------------------------------------------------------- the lease and the cursor


def new_owner() -> str:
    """This process's lease name (host, pid and a random part: a restarted process is another)."""
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


class Lease(NamedTuple):
    next_block: int  # the cursor
    last_block: int | None  # the newest block scanned, and its hash (None: not known yet)
    last_hash: str | None


def take_lease(chain_id: int, owner: str, start_block: int, now: int | None = None) -> Lease | None:
    """The cursor of `chain_id` if `owner` holds (or now took) its lease, else None. A new chain's
    cursor starts at `start_block`."""
    now = now_epoch() if now is None else now
    with get_session() as db:
        if db.get(ChainCursor, chain_id) is None:
            try:
                db.add(
                    ChainCursor(
                        chain_id=chain_id, next_block=start_block, lease_owner=owner, lease_until=now + LEASE_SECONDS
                    )
                )
                db.commit()
                return Lease(start_block, None, None)
            except IntegrityError:  # another process created it first: its lease
                db.rollback()
                return None
        result = db.execute(
            update(ChainCursor)
            .where(
                col(ChainCursor.chain_id) == chain_id,
                or_(col(ChainCursor.lease_owner) == owner, col(ChainCursor.lease_until) < now),
            )
            .values(lease_owner=owner, lease_until=now + LEASE_SECONDS)
        )
        if getattr(result, "rowcount", 0) != 1:
            db.rollback()
            return None
        cursor = db.exec(
            select(ChainCursor.next_block, ChainCursor.last_block, ChainCursor.last_hash).where(
                ChainCursor.chain_id == chain_id
            )
        ).one()
        db.commit()
        return Lease(int(cursor[0]), cursor[1], cursor[2])


def release_lease(chain_id: int, owner: str) -> None:
    """Lets another process take over at once (a clean stop)."""
    with get_session() as db:
        db.execute(
            update(ChainCursor)
            .where(col(ChainCursor.chain_id) == chain_id, col(ChainCursor.lease_owner) == owner)
            .values(lease_until=0)
        )
        db.commit()


def _advance(db: Session, chain_id: int, owner: str, next_block: int, last: tuple[int, str] | None = None) -> bool:
    """Moves the cursor in db's transaction while `owner` holds the lease (renewing it); `last`:
    the newest block scanned and its hash."""
    values: dict[str, Any] = {"next_block": next_block, "lease_until": now_epoch() + LEASE_SECONDS}
    if last is not None:
        values.update(last_block=last[0], last_hash=last[1])
    result = db.execute(
        update(ChainCursor)
        .where(col(ChainCursor.chain_id) == chain_id, col(ChainCursor.lease_owner) == owner)
        .values(**values)
    )
    return getattr(result, "rowcount", 0) == 1


# ---------------------------------------------------------------- reading the chain


def head(w3: Web3) -> int:
    return int(w3.provider.make_request("eth_blockNumber", [])["result"], 16)  # type: ignore[arg-type]


def block_hash(w3: Web3, number: int) -> str | None:
    """The hash of the chain's block `number` now (lowercase), None when it has none (shorter now)."""
    (answer,) = chain_svc.rpc_batch(w3, [("eth_getBlockByNumber", [hex(number), False])])
    if "error" in answer:
        raise RuntimeError(f"block {number}: {answer['error']}")
    block = answer.get("result")
    return block["hash"].lower() if block else None


def fetch_logs(w3: Web3, first: int, last: int, tokens: list[str], addresses: list[str]) -> list[dict]:
    """Transfer logs of `tokens` to `addresses` in [first, last]: one filter per TOKEN_CHUNK tokens
    and TOPIC_CHUNK addresses, all in one JSON-RPC batch. A range the node refuses is read again
    in two halves, down to single blocks, and a block's filter the node refuses, with half its
    tokens or addresses (_refused_block): providers refuse a query with too many results (e.g.
    10,000 logs, a token flooding an address with events), and the same query failing every pass
    would hold the chain's indexer there for every user."""
    if not tokens or not addresses:
        return []
    filters = [(t, a) for t in _chunks(tokens, TOKEN_CHUNK) for a in _chunks(addresses, TOPIC_CHUNK)]
    answers = chain_svc.rpc_batch(w3, [("eth_getLogs", [_logs_filter(first, last, t, a)]) for t, a in filters])
    if first < last and any("error" in answer for answer in answers):
        middle = (first + last) // 2
        return fetch_logs(w3, first, middle, tokens, addresses) + fetch_logs(w3, middle + 1, last, tokens, addresses)
    logs: list[dict] = []
    for (token_chunk, address_chunk), answer in zip(filters, answers, strict=True):
        if "error" in answer:
            logs.extend(_refused_block(w3, first, token_chunk, address_chunk, answer["error"]))
        else:
            logs.extend(answer["result"])
    return logs


def _logs_filter(first: int, last: int, tokens: list[str], addresses: list[str]) -> dict:
    topics = [TRANSFER_TOPIC, None, [_address_topic(a) for a in addresses]]
    return {"fromBlock": hex(first), "toBlock": hex(last), "address": tokens, "topics": topics}


def _refused_block(w3: Web3, block: int, tokens: list[str], addresses: list[str], error: object) -> list[dict]:
    """One block's logs of a filter the node refused: read again with half its tokens, then half
    its addresses. One token to one address in one block still refused (a token flooding that
    address within the block) is skipped, with a warning, when the node answers the same token and
    block for another address: the rest of the chain's transfers go on being found. When it does
    not, the node is in trouble: the pass fails, and is retried."""
    if len(tokens) > 1 or len(addresses) > 1:
        if len(tokens) > 1:
            half = len(tokens) // 2
            parts = [(tokens[:half], addresses), (tokens[half:], addresses)]
        else:
            half = len(addresses) // 2
            parts = [(tokens, addresses[:half]), (tokens, addresses[half:])]
        return [entry for t, a in parts for entry in fetch_logs(w3, block, block, t, a)]
    nobody = "0x" + os.urandom(20).hex()  # an address no transfer goes to
    [control] = chain_svc.rpc_batch(w3, [("eth_getLogs", [_logs_filter(block, block, tokens, [nobody])])])
    if "error" in control:
        raise RuntimeError(f"eth_getLogs [{block}, {block}]: {error}")
    log.warning(
        "eth_getLogs refused the transfers of token %s to %s in block %s (%s): skipped",
        tokens[0],
        addresses[0],
        block,
        error,
    )
    return []


@dataclass
class BlockScan:
    native: list[Incoming]  # value transfers to watched addresses
    times: dict[int, int]  # block number -> timestamp
    hashes: dict[int, str]  # block number -> hash (lowercase)
    hidden: set[str]  # hashes of the transactions sent by a hidden sender (extensions.hidden_senders)


def scan_blocks(w3: Web3, first: int, last: int, watched: set[str], hidden: frozenset[str]) -> BlockScan:
    """Reads the blocks [first, last] with their transactions, BLOCK_BATCH blocks per JSON-RPC
    batch, keeping only the matches."""
    scan = BlockScan([], {}, {}, set())
    for start in range(first, last + 1, BLOCK_BATCH):
        numbers = range(start, min(start + BLOCK_BATCH, last + 1))
        for n, answer in zip(
            numbers, chain_svc.rpc_batch(w3, [("eth_getBlockByNumber", [hex(n), True]) for n in numbers]), strict=True
        ):
            block = answer.get("result")
            if not block:  # past the node's head (it went back?): stop here, retried next pass
                raise RuntimeError(f"block {n} not available: {answer.get('error')}")
            scan.times[n] = int(block["timestamp"], 16)
            scan.hashes[n] = block["hash"].lower()
            scan.native.extend(native_from_block(block, watched))
            if hidden:
                scan.hidden.update(tx["hash"].lower() for tx in block["transactions"] if tx["from"].lower() in hidden)
    return scan


# ---------------------------------------------------------------- a pass


def index_chain(chain: ChainConfig, owner: str, max_blocks: int = PASS_BLOCKS) -> dict[str, int]:
    """Scans the chain from its cursor towards the safe head (at most `max_blocks`), if `owner`
    holds its lease. -> {blocks, received, skipped (1: another process holds the lease)}"""
    w3 = chain_svc.web3_for(chain)
    tip = head(w3)
    lease = take_lease(chain.chain_id, owner, max(tip - chain.index_confirmations, 0))
    if lease is None:
        return {"blocks": 0, "received": 0, "skipped": 1}
    cursor, repair_until = lease.next_block, 0
    if cursor > tip + 1:  # the chain is shorter than what was scanned: a development chain started afresh
        log.warning(
            "chain %s is at block %s, its indexer cursor at %s: starting again at the head", chain.chain_id, tip, cursor
        )
        cursor = max(tip - chain.index_confirmations, 0)
        with get_session() as db:
            _advance(db, chain.chain_id, owner, cursor)
            db.commit()
    elif lease.last_block is not None and block_hash(w3, lease.last_block) != lease.last_hash:
        # The newest block scanned was replaced (a reorganisation deeper than index_confirmations):
        # its transfers, and maybe those of blocks before it, are not the chain's any more, and the
        # new branch's were never seen. Scanned again; the entries the new branch lacks go.
        repair_until, cursor = cursor, rescan_from(cursor, lease.last_block)
        log.warning(
            "chain %s: block %s is not the one indexed (a reorganisation): blocks from %s scanned again",
            chain.chain_id,
            lease.last_block,
            cursor,
        )
    blocks = received = 0
    hidden = extensions.hidden_senders()
    while blocks < max_blocks:
        span = plan_range(cursor, tip, chain.index_confirmations, min(RANGE_BLOCKS, max_blocks - blocks))
        if span is None:
            break
        first, last = span
        with get_session() as db:
            watch = watch_list(db, chain)
        watched = set(watch.users)
        scan = scan_blocks(w3, first, last, watched, hidden) if watched else BlockScan([], {}, {}, set())
        tokens = transfers_from_logs(fetch_logs(w3, first, last, watch.tokens, watch.addresses), watched)
        found = [t for t in [*scan.native, *tokens] if t.tx_hash not in scan.hidden]
        rows = entries_for(found, watch, chain, scan.times)
        last_hash = scan.hashes.get(last) or block_hash(w3, last)
        with get_session() as db:
            if first < repair_until:  # the first range after a reorganisation: up to the old cursor
                keep = {(uid, t.tx_hash, t.log_index) for t in found for uid in watch.users.get(t.to, [])}
                removed = remove_replaced(db, chain.chain_id, range(first, repair_until), keep)
                repair_until = 0
                if removed:
                    log.warning("chain %s: %s received entries no longer on the chain removed", chain.chain_id, removed)
            new = insert_new(db, rows)
            if not _advance(db, chain.chain_id, owner, last + 1, (last, last_hash) if last_hash else None):
                db.rollback()  # the lease went to another process (this one was too slow): it redoes the range
                log.warning("indexer lease of chain %s lost at block %s", chain.chain_id, first)
                break
            db.commit()
        received += new
        blocks += last - first + 1
        cursor = last + 1
    return {"blocks": blocks, "received": received, "skipped": 0}


# Per chain: the id below which the next pass of refresh_outgoing goes on (None: from the newest).
_status_below: dict[int, int | None] = {}


def refresh_outgoing(chain: ChainConfig, limit: int = STATUS_BATCH) -> dict[str, int]:
    """The users' own submitted transactions on `chain` -> ok / failed from their receipts (one
    batch for at most `limit` of them per pass). Payments are the relayer's. -> {ok, failed}

    The passes go through all of them, newest first, `limit` at a time, then from the newest again:
    transactions that never mine (dropped, or a user's many sends with a nonce gap) must not hold
    the batch for ever. With the newest `limit` alone, one user's hundred fresh ones did, and no
    other user's sends got a status in the background."""
    below = _status_below.get(chain.chain_id)
    with get_session() as db:
        query = select(Activity).where(
            Activity.chain_id == chain.chain_id,
            text(UNRESOLVED_ENTRY),  # not payments; ix_activities_unresolved's own words (SQLite uses it only then)
            col(Activity.tx_hash).is_not(None),
        )
        if below is not None:
            query = query.where(col(Activity.id) < below)
        pending = list(db.exec(query.order_by(col(Activity.id).desc()).limit(limit)))
    _status_below[chain.chain_id] = min(stored_id(r) for r in pending) if len(pending) == limit else None
    if not pending:
        return {}
    w3 = chain_svc.web3_for(chain)
    found = chain_svc.final_receipts(
        w3, chain, chain_svc.receipts(w3, sorted({r.tx_hash for r in pending if r.tx_hash}))
    )
    counts: dict[str, int] = {}
    for row in pending:
        status = status_from_receipt(found.get(row.tx_hash or ""))
        if status is None:
            continue
        if row.nonce is not None:
            # One of a nonce group (a speed-up or cancel may share it): the group is resolved
            # together, so the entries it replaced become replaced or cancelled, never pending.
            pending_svc.refresh_group(chain, row)
        else:
            with get_session() as db:
                db.execute(
                    update(Activity)
                    .where(col(Activity.id) == row.id, col(Activity.status).in_(pending_svc.UNRESOLVED))
                    .values(status=status)
                )
                db.commit()
        counts[status] = counts.get(status, 0) + 1
    return counts


_failing: set[tuple[int, str]] = set()  # (chain, step) that failed last time: logged once per streak


def run_once(owner: str, chains: list[ChainConfig] | None = None) -> dict[str, int]:
    """One pass over every chain: incoming transfers, then the outgoing statuses. Summed counters;
    one chain's trouble (a node down) is logged once, when it starts, and the others go on."""
    total: dict[str, int] = {}
    steps = {"index": index_chain, "statuses": lambda c, _owner: refresh_outgoing(c)}
    for chain in chains if chains is not None else chain_svc.get_chains():
        for name, step in steps.items():
            key = (chain.chain_id, name)
            try:
                counts: dict[str, Any] = step(chain, owner)
            except Exception as e:
                if key not in _failing:
                    _failing.add(key)
                    # A node that is down is expected now and then; anything else is a bug: its traceback.
                    expected = isinstance(e, (*chain_svc._NETWORK_ERRORS, AppError))
                    log.log(
                        logging.WARNING if expected else logging.ERROR,
                        "indexer %s of chain %s failed (%s), retrying every pass",
                        name,
                        chain.chain_id,
                        e,
                        exc_info=not expected,
                    )
                continue
            if key in _failing:
                _failing.discard(key)
                log.info("indexer %s of chain %s works again", name, chain.chain_id)
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
    return total
