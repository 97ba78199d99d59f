"""Wallet operations shared by the REST routes (/api/v1) and the Reflex event handlers.

Plain functions: they take the signed-in User (or its id), validate every argument (Reflex
handlers can be called with anything) and return JSON-ready dicts with the keys of the
specification. Failures raise WalletError(code): a machine code the pages translate into
ko/en and the API returns as {"detail": code}. Codes (besides those of ChainError, e.g.
unsupported_chain, not_a_contract, not_erc20, rpc_unavailable, estimate_failed,
invalid_raw_tx, sender_mismatch, rejected):
    not_authenticated  the user no longer exists
    no_address         the user has not registered a wallet address yet
    invalid_chain_id   chain_id is not a positive integer
    invalid_address    a token address that is not 0x + 40 hex
    native_blocked     a transfer of the native coin (zero or empty token address)
    invalid_recipient  recipient is not 0x + 40 hex
    bad_checksum       a mixed-case recipient that fails the EIP-55 checksum
    invalid_amount     amount is not a positive integer string (smallest unit) below 2**256
"""

from __future__ import annotations

import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Iterator

from eth_abi import decode as abi_decode
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select
from web3 import Web3

from wallet_app.core.db import get_session
from wallet_app.models import Activity, User, UserToken
from wallet_app.services import chain as chain_svc
from wallet_app.services.amounts import format_balance
from wallet_app.services.chain import ZERO_ADDRESS, ChainConfig, ChainError

log = logging.getLogger(__name__)

_HEX_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_UINT = re.compile(r"[0-9]{1,78}")
TRANSFER_SELECTOR = "a9059cbb"  # transfer(address,uint256)
APPROVE_SELECTOR = "095ea7b3"  # approve(address,uint256)
ACTIVITY_LIMIT = 100
RECEIPT_REFRESH_LIMIT = 10  # pending entries checked per listing (one RPC call each)


class WalletError(ChainError):
    """A refused wallet operation; `code` is the machine code (see the module docstring)."""


@contextmanager
def _as_wallet_errors() -> Iterator[None]:
    try:
        yield
    except WalletError:
        raise
    except ChainError as e:
        raise WalletError(e.code, e.message) from e


# ---------------------------------------------------------------- pure validation (table-tested)

def parse_chain_id(value: Any) -> int:
    """An int or a decimal string (query strings, built transactions) -> int."""
    if isinstance(value, bool):
        raise WalletError("invalid_chain_id")
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,18}", value.strip()):
        value = int(value.strip())
    if not isinstance(value, int) or not 0 < value < 2**53:  # EIP-2294 bound; fits every DB integer
        raise WalletError("invalid_chain_id")
    return value


def parse_token_address(value: Any) -> str:
    """A token address -> lowercase; empty/None means the native coin (the zero address)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return ZERO_ADDRESS
    if not isinstance(value, str) or not _HEX_ADDRESS.fullmatch(value.strip()):
        raise WalletError("invalid_address", "token address must be 0x followed by 40 hex digits")
    return value.strip().lower()


def parse_recipient(value: Any) -> str:
    """A recipient -> its checksummed form. All-lowercase or all-uppercase hex carries no
    checksum and is accepted; mixed case must pass EIP-55."""
    text = value.strip() if isinstance(value, str) else None
    if not text or not _HEX_ADDRESS.fullmatch(text):
        raise WalletError("invalid_recipient", "recipient must be 0x followed by 40 hex digits")
    hexpart = text[2:]
    if hexpart != hexpart.lower() and hexpart != hexpart.upper() and not Web3.is_checksum_address(text):
        raise WalletError("bad_checksum", "recipient fails the EIP-55 checksum")
    return Web3.to_checksum_address(text)


def parse_amount(value: Any) -> int:
    """An integer string (or int) in the smallest unit, > 0 and < 2**256."""
    if isinstance(value, bool):
        raise WalletError("invalid_amount")
    if isinstance(value, int):
        units = value
    elif isinstance(value, str) and _UINT.fullmatch(value.strip()):
        units = int(value.strip())
    else:
        raise WalletError("invalid_amount", "amount must be a positive integer string in the smallest unit")
    if units <= 0 or units >= 2**256:
        raise WalletError("invalid_amount", "amount must be a positive integer string in the smallest unit")
    return units


def short_address(address: str | None) -> str:
    """0x + 4 leading and 4 trailing hex characters (design.md section 9)."""
    if not address or len(address) < 12:
        return address or ""
    return f"{address[:6]}…{address[-4:]}"


def decode_token_call(data: str) -> tuple[str, str, int] | None:
    """('transfer'|'approve', counterparty lowercase, amount) for ERC-20 transfer/approve calldata."""
    if not isinstance(data, str) or not data.startswith("0x") or len(data) != 2 + 8 + 128:
        return None
    selector = data[2:10].lower()
    kind = {TRANSFER_SELECTOR: "transfer", APPROVE_SELECTOR: "approve"}.get(selector)
    if kind is None:
        return None
    try:
        to, amount = abi_decode(["address", "uint256"], bytes.fromhex(data[10:]))
    except Exception:
        return None
    return kind, to.lower(), amount


def activity_summary(row: Activity) -> str:
    """Short English text; the UI renders its own ko/en text from the structured fields."""
    amount = None
    if row.amount is not None and row.token_decimals is not None:
        amount = f"{format_balance(int(row.amount), row.token_decimals, max_decimals=row.token_decimals)} {row.token_symbol or ''}".strip()
    who = short_address(row.counterparty)
    if row.type == "transfer" and amount:
        text = f"Sent {amount} to {who}"
    elif row.type == "approve" and amount:
        text = f"Approved {amount} for {who}"
    elif row.type == "payment" and amount:
        text = f"Paid {amount} to {who}"
    elif who:
        text = f"{row.type.capitalize()} with {who}"
    else:
        text = row.type.capitalize()
    if row.status == "submitted":
        text += " (pending)"
    elif row.status == "failed":
        text += " (failed)"
    return text


# ---------------------------------------------------------------- helpers

def _user(db: Session, user: User | int) -> User:
    user_id = user if isinstance(user, int) and not isinstance(user, bool) else getattr(user, "id", None)
    row = db.get(User, user_id) if user_id is not None else None
    if row is None:
        raise WalletError("not_authenticated")
    return row


def _chain(chain_id: Any) -> ChainConfig:
    with _as_wallet_errors():
        return chain_svc.get_chain(parse_chain_id(chain_id))


@lru_cache(maxsize=4096)
def _checksummed(address: str) -> str:
    return Web3.to_checksum_address(address)  # a keccak each: cached, lists repeat the same tokens


def _token_dict(chain: ChainConfig, row: UserToken) -> dict:
    return {
        "chain_id": chain.chain_id,
        "chain_name": chain.chain_name,
        "token_address": _checksummed(row.token_address),
        "token_symbol": row.symbol,
        "token_name": row.name,
        "token_decimals": row.decimals,
    }


def _seed(db: Session, user_id: int, chains: list[ChainConfig]) -> list[UserToken]:
    """The user's rows, after adding any configured token they do not have yet (first use,
    or a chain/token added to the configuration later)."""
    rows = list(db.exec(select(UserToken).where(UserToken.user_id == user_id).order_by(col(UserToken.id))))
    have = {(r.chain_id, r.token_address) for r in rows}
    missing = [(c.chain_id, t) for c in chains for t in c.tokens if (c.chain_id, t.token_address.lower()) not in have]
    if missing:
        try:
            for chain_id, t in missing:
                db.add(UserToken(user_id=user_id, chain_id=chain_id, token_address=t.token_address.lower(),
                                 symbol=t.token_symbol, name=t.token_name, decimals=t.token_decimals))
            db.commit()
        except IntegrityError:
            db.rollback()  # a concurrent request seeded them
        rows = list(db.exec(select(UserToken).where(UserToken.user_id == user_id).order_by(col(UserToken.id))))
    return rows


def _user_token_rows(user: User | int) -> tuple[User, list[tuple[ChainConfig, UserToken]]]:
    with _as_wallet_errors():
        chains = chain_svc.get_chains()
    by_id = {c.chain_id: c for c in chains}
    with get_session() as db:
        u = _user(db, user)
        rows = _seed(db, u.id, chains)
    # Tokens of chains no longer configured are kept in the DB but not shown.
    return u, [(by_id[r.chain_id], r) for r in rows if r.chain_id in by_id]


# ---------------------------------------------------------------- chains and tokens

def list_chains() -> list[dict]:
    with _as_wallet_errors():
        return [{"chain_id": c.chain_id, "chain_name": c.chain_name} for c in chain_svc.get_chains()]


def user_tokens(user: User | int) -> list[dict]:
    """The user's token list: [{chain_id, chain_name, token_address, token_symbol, token_name, token_decimals}]."""
    _, rows = _user_token_rows(user)
    return [_token_dict(c, r) for c, r in rows]


def token_metadata(chain_id: Any, token_address: Any) -> dict:
    """{token_name, token_symbol, token_decimals} read from the chain; the zero (or empty)
    address gives the chain's native coin."""
    chain = _chain(chain_id)
    address = parse_token_address(token_address)
    with _as_wallet_errors():
        info = chain_svc.token_metadata(chain, address)
    return {"token_name": info.token_name, "token_symbol": info.token_symbol, "token_decimals": info.token_decimals}


def add_token(user: User | int, chain_id: Any, token_address: Any) -> dict:
    """Probes the address and adds it to the user's list; adding a token twice returns the
    existing entry. The zero address adds the chain's native coin."""
    chain = _chain(chain_id)
    address = parse_token_address(token_address)
    u, rows = _user_token_rows(user)
    for c, r in rows:
        if c.chain_id == chain.chain_id and r.token_address == address:
            return _token_dict(c, r)
    with _as_wallet_errors():
        info = chain_svc.token_metadata(chain, address)
    with get_session() as db:
        row = UserToken(user_id=u.id, chain_id=chain.chain_id, token_address=address,
                        symbol=info.token_symbol[:64], name=info.token_name[:128], decimals=info.token_decimals)
        try:
            db.add(row)
            db.commit()
        except IntegrityError:
            db.rollback()  # the same token added concurrently
            row = db.exec(select(UserToken).where(UserToken.user_id == u.id, UserToken.chain_id == chain.chain_id,
                                                  UserToken.token_address == address)).one()
    return _token_dict(chain, row)


def asset_balances(user: User | int) -> list[dict]:
    """Token balance items (specification section 3), balance as an integer string in the
    smallest unit. One aggregated eth_call per chain, chains read in parallel; a chain that
    does not answer contributes no items. No address yet: an empty list."""
    u, rows = _user_token_rows(user)
    if not u.address or not rows:
        return []
    per_chain: dict[int, tuple[ChainConfig, list[UserToken]]] = {}
    for c, r in rows:
        per_chain.setdefault(c.chain_id, (c, []))[1].append(r)

    def read(item: tuple[ChainConfig, list[UserToken]]) -> list[dict]:
        c, tokens = item
        try:
            found = chain_svc.balances(c, u.address, [t.token_address for t in tokens])
        except ChainError as e:
            log.warning("balances of chain %s unavailable: %s", c.chain_id, e)
            return []
        return [{**_token_dict(c, t), "balance": str(found[t.token_address])}
                for t in tokens if t.token_address in found]

    groups = list(per_chain.values())
    if len(groups) == 1:
        return read(groups[0])
    with ThreadPoolExecutor(max_workers=min(8, len(groups))) as pool:
        return [item for items in pool.map(read, groups) for item in items]


# ---------------------------------------------------------------- transactions

def build_transfer(user: User | int, chain_id: Any, token_address: Any, to: Any, amount: Any) -> dict:
    """An unsigned legacy ERC-20 transfer {chain_id, to, data, value, nonce, gas_limit, gas_price}
    (decimal strings) from the user's address; `amount` in the token's smallest unit."""
    with get_session() as db:
        u = _user(db, user)
    if not u.address:
        raise WalletError("no_address")
    chain = _chain(chain_id)
    token = parse_token_address(token_address)
    if token == ZERO_ADDRESS:
        raise WalletError("native_blocked", "native coin transfers are not supported")
    recipient = parse_recipient(to)
    units = parse_amount(amount)
    with _as_wallet_errors():
        return chain_svc.build_erc20_transfer(chain, u.address, token, recipient, units)


def submit_signed(user: User | int, raw_tx: Any) -> dict:
    """Checks that the signed transaction is from the user's address and for a configured
    chain, broadcasts it once (never retried), records an activity, returns {tx_hash}."""
    with get_session() as db:
        u = _user(db, user)
    if not u.address:
        raise WalletError("no_address")
    with _as_wallet_errors():
        decoded = chain_svc.decode_raw_tx(raw_tx)
    if decoded.sender.lower() != u.address.lower():
        raise WalletError("sender_mismatch", "transaction is not signed by the session's address")
    if decoded.chain_id is None:
        raise WalletError("unsupported_chain", "transaction has no EIP-155 chain id")
    chain = _chain(decoded.chain_id)
    with _as_wallet_errors():
        tx_hash = chain_svc.submit_raw(chain, raw_tx, expected_sender=u.address)
    try:
        _record_submitted(u.id, chain, decoded, tx_hash)
    except Exception:  # the transaction is out: a bookkeeping failure must not hide its hash
        log.exception("could not record activity for %s", tx_hash)
    return {"tx_hash": tx_hash}


def _known_token(user_id: int, chain: ChainConfig, address: str) -> tuple[str | None, int | None]:
    with get_session() as db:
        row = db.exec(select(UserToken).where(UserToken.user_id == user_id, UserToken.chain_id == chain.chain_id,
                                              UserToken.token_address == address)).first()
    if row:
        return row.symbol, row.decimals
    for t in chain.tokens:
        if t.token_address.lower() == address:
            return t.token_symbol, t.token_decimals
    try:
        info = chain_svc.token_metadata(chain, address)
        return info.token_symbol, info.token_decimals
    except ChainError:
        return None, None


def _record_submitted(user_id: int, chain: ChainConfig, tx: chain_svc.DecodedTx, tx_hash: str) -> None:
    to = tx.to.lower() if tx.to else None
    call = decode_token_call(tx.data) if to else None
    fields: dict[str, Any] = {"type": "call", "counterparty": to}
    if call:
        kind, counterparty, amount = call
        symbol, decimals = _known_token(user_id, chain, to)
        fields = {"type": kind, "token_address": to, "token_symbol": symbol, "token_decimals": decimals,
                  "amount": str(amount), "counterparty": counterparty}
    elif to and tx.data in ("0x", "") and tx.value > 0:
        fields = {"type": "transfer", "token_address": ZERO_ADDRESS, "token_symbol": chain.native_symbol,
                  "token_decimals": chain.native_decimals, "amount": str(tx.value), "counterparty": to}
    record_activity(user_id, chain_id=chain.chain_id, tx_hash=tx_hash,
                    data={"to": to, "value": str(tx.value), "selector": tx.data[:10]}, **fields)


def record_activity(user_id: int, type: str, *, chain_id: int | None = None, tx_hash: str | None = None,
                    token_address: str | None = None, token_symbol: str | None = None,
                    token_decimals: int | None = None, amount: int | str | None = None,
                    counterparty: str | None = None, status: str = "submitted", data: dict | None = None) -> int:
    """Adds an activity entry (also for other flows, e.g. payments); returns its id."""
    row = Activity(
        user_id=user_id, type=type, chain_id=chain_id, tx_hash=tx_hash,
        token_address=token_address.lower() if token_address else None, token_symbol=token_symbol,
        token_decimals=token_decimals, amount=str(amount) if amount is not None else None,
        counterparty=counterparty.lower() if counterparty else None, status=status,
        data=json.dumps(data, separators=(",", ":")) if data is not None else None,
    )
    with get_session() as db:
        db.add(row)
        db.commit()
        return row.id


def set_activity_status(activity_id: int, status: str) -> None:
    with get_session() as db:
        row = db.get(Activity, activity_id)
        if row is not None and row.status != status:
            row.status = status
            db.add(row)
            db.commit()


def _refresh_pending(rows: list[Activity]) -> None:
    """Marks submitted transactions ok/failed from their receipts (one call per entry, bounded)."""
    pending = [r for r in rows if r.status == "submitted" and r.tx_hash and r.chain_id][:RECEIPT_REFRESH_LIMIT]
    chains = {c.chain_id: c for c in chain_svc.get_chains()} if pending else {}
    for row in pending:
        c = chains.get(row.chain_id)
        if c is None:
            continue
        try:
            receipt = chain_svc.web3_for(c).eth.get_transaction_receipt(row.tx_hash)
        except Exception:  # not mined yet (TransactionNotFound) or the node is down: keep waiting
            continue
        row.status = "ok" if receipt["status"] == 1 else "failed"
        set_activity_status(row.id, row.status)


def activities(user: User | int, refresh: bool = True) -> list[dict]:
    """The user's entries, newest first: {id, type, summary, chain_id, tx_hash, token_address,
    token_symbol, token_decimals, amount, counterparty, status, created_at}."""
    with get_session() as db:
        u = _user(db, user)
        rows = list(db.exec(select(Activity).where(Activity.user_id == u.id)
                            .order_by(col(Activity.created_at).desc(), col(Activity.id).desc())
                            .limit(ACTIVITY_LIMIT)))
    if refresh:
        try:
            _refresh_pending(rows)
        except ChainError as e:
            log.warning("activity refresh skipped: %s", e)
    return [{
        "id": r.id, "type": r.type, "summary": activity_summary(r), "chain_id": r.chain_id, "tx_hash": r.tx_hash,
        "token_address": r.token_address, "token_symbol": r.token_symbol, "token_decimals": r.token_decimals,
        "amount": r.amount, "counterparty": r.counterparty, "status": r.status, "created_at": r.created_at,
    } for r in rows]
