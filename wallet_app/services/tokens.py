"""Chains and tokens: the configured chains, the user's token list (seeded from the chains
file, plus tokens the user added), token metadata, balances, and token_info, the one lookup
of a token's symbol and decimals.

Plain functions shared by the REST routes (/api/v1) and the Reflex handlers. They take the
signed-in User (or its id), validate every argument (Reflex handlers can be called with
anything), return JSON-ready dicts with the keys of the specification, and raise AppError.
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from sqlalchemy import inspect
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from wallet_app import crud
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.models import User, UserToken, stored_id
from wallet_app.services import accounts
from wallet_app.services import chain as chain_svc
from wallet_app.services.chain import ChainConfig, TokenInfo
from wallet_app.services.eth import checksum, parse_address, parse_chain_id

log = logging.getLogger(__name__)

UNAVAILABLE_LOG_SECONDS = 60.0  # a chain's "balances unavailable" line at most this often per process
_unavailable_logged: dict[int, float] = {}  # chain id -> time.monotonic() of its last such line
_unavailable_lock = threading.Lock()


def _log_unavailable(chain_id: int, error: AppError) -> None:
    """A chain's balances could not be read: logged at most once every UNAVAILABLE_LOG_SECONDS, not
    once per GET /assets and Home load for as long as its node is out (a line per user's request)."""
    now = time.monotonic()
    with _unavailable_lock:
        last = _unavailable_logged.get(chain_id)
        if last is not None and now - last < UNAVAILABLE_LOG_SECONDS:
            return
        _unavailable_logged[chain_id] = now
    log.warning("balances of chain %s unavailable: %s", chain_id, error)


def get_chain(chain_id: Any) -> ChainConfig:
    """A configured chain by its id (int or decimal string): invalid_chain_id / unsupported_chain."""
    return chain_svc.get_chain(parse_chain_id(chain_id))


def _token_dict(chain: ChainConfig, row: UserToken) -> dict:
    return {
        "chain_id": chain.chain_id,
        "chain_name": chain.chain_name,
        "token_address": checksum(row.token_address),
        "token_symbol": row.symbol,
        "token_name": row.name,
        "token_decimals": row.decimals,
    }


def _seed(db: Session, user_id: int, chains: list[ChainConfig]) -> list[UserToken]:
    """The user's rows, after adding any configured token they do not have yet: the chains
    file's tokens, then each chain's native coin (first use, or a chain/token added to the
    configuration later; existing users get the native coin on their next read, so new and old
    lists end alike with it, and Send's first token of a network stays a sendable ERC-20).
    Two workers seeding at once: the unique key refuses the second, which reads what the first
    wrote."""
    rows = crud.list_user_tokens(db, user_id)
    have = {(r.chain_id, r.token_address) for r in rows}
    missing = [
        (c.chain_id, t)
        for c in chains
        for t in (*c.tokens, c.native_token())
        if (c.chain_id, t.token_address.lower()) not in have
    ]
    if missing:
        try:
            for chain_id, t in missing:
                crud.add_user_token(
                    db, user_id, chain_id, t.token_address, t.token_symbol, t.token_name, t.token_decimals
                )
            db.commit()
        except IntegrityError:
            db.rollback()  # a concurrent request seeded them
        rows = crud.list_user_tokens(db, user_id)
    return rows


def _user_token_rows(user: User | int) -> tuple[User, list[tuple[ChainConfig, UserToken]]]:
    chains = chain_svc.get_chains()
    by_id = {c.chain_id: c for c in chains}
    with get_session() as db:
        u = accounts.get_user(db, user)
        rows = _seed(db, stored_id(u), chains)
        if inspect(u).expired:  # by _seed's rollback (another worker seeded first): read it again
            db.refresh(u)
    # Tokens of chains no longer configured are kept in the DB but not shown.
    return u, [(by_id[r.chain_id], r) for r in rows if r.chain_id in by_id]


def list_chains() -> list[dict]:
    return [{"chain_id": c.chain_id, "chain_name": c.chain_name} for c in chain_svc.get_chains()]


def user_tokens(user: User | int) -> list[dict]:
    """The user's token list: [{chain_id, chain_name, token_address, token_symbol, token_name, token_decimals}]."""
    _, rows = _user_token_rows(user)
    return [_token_dict(c, r) for c, r in rows]


def token_metadata(user: User | int, chain_id: Any, token_address: Any) -> dict:
    """{token_name, token_symbol, token_decimals} read from the chain for the signed-in user
    (rate-limited); the zero (or empty) address gives the chain's native coin."""
    accounts.hit("token_metadata", user)
    chain = get_chain(chain_id)
    info = chain_svc.token_metadata(chain, parse_address(token_address, empty_is_zero=True))
    return {"token_name": info.token_name, "token_symbol": info.token_symbol, "token_decimals": info.token_decimals}


# Capital and small letters of other scripts drawn like Latin ones: a copycat's "USDС" (Cyrillic С).
_LOOKALIKE_LETTERS = str.maketrans(
    "АВСЕНІЈКМОРЅТХУасеіјорѕхуΑΒΕΖΗΙΚΜΝΟΡΤΥΧαοκνρτυχ",
    "ABCEHIJKMOPSTXYaceijopsxyABEZHIKMNOPTYXaokvptux",
)


def symbol_look(symbol: str) -> str:
    """What a symbol looks like on a page: NFKD ("ＵＳＤＣ" is "USDC") without combining marks
    ("ÚSDC" is "USDC"), look-alike letters of other scripts as Latin ones, no case, no surrounding
    white space."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", symbol) if not unicodedata.category(c).startswith("M"))
    return bare.translate(_LOOKALIKE_LETTERS).casefold().strip()


def _drawn_like_latin(c: str) -> bool:
    """A character outside ASCII that may be drawn like a Latin letter or digit: any but the wide
    ones, CJK and Hangul (full-width Latin letters are Latin letters)."""
    return not c.isascii() and unicodedata.east_asian_width(c) != "W"


def unfamiliar_symbol(symbol: str) -> bool:
    """A symbol with a character outside ASCII that may be drawn like a Latin one: the look-alike
    table cannot know every script's letters (Cherokee Ꮪ, Lisu ꓢ), so the add-token dialog warns
    of each. Not for Hangul or CJK symbols ("원화"): no Latin symbol reads like them."""
    return any(_drawn_like_latin(c) for c in symbol)


def _likeness(look: str, other: str) -> int | None:
    """How many characters the looks `look` and `other` (symbol_look's) share, when one could be
    read as the other: each character the same, or either one outside ASCII and narrow, which may
    be a letter drawn like the other's ("USDT0" and the listed "USD₮0" alike). None when not."""
    if len(look) != len(other):
        return None
    same = 0
    for a, b in zip(look, other, strict=True):
        if a == b:
            same += 1
        elif not (_drawn_like_latin(a) or _drawn_like_latin(b)):
            return None
    return same


def copycat_of(symbol: str, chain_id: int, address: str, listed: list[dict]) -> dict | None:
    """The token of `listed` (user_tokens' entries) on the same network whose symbol `symbol` looks
    like, at another address: anyone can deploy a token calling itself USDC, and once it is in the
    list its transfers read like the real one's. The likest one (most characters the same) when
    several could be read; None when there is none."""
    look = symbol_look(symbol)
    found, best = None, -1
    for x in listed:
        if int(x["chain_id"]) != int(chain_id) or str(x["token_address"]).lower() == address.lower():
            continue
        same = _likeness(look, symbol_look(str(x["token_symbol"] or "")))
        if same is not None and same > best:
            found, best = x, same
    return found


def copycat(user: User | int, chain_id: Any, token_address: Any, symbol: str) -> dict | None:
    """copycat_of against the user's list (the add-token dialog's warning after a probe)."""
    address = parse_address(token_address, empty_is_zero=True)
    return copycat_of(symbol, parse_chain_id(chain_id), address, user_tokens(user))


def add_token(user: User | int, chain_id: Any, token_address: Any, shown: dict | None = None) -> dict:
    """Probes the address and adds it to the user's list; adding a token twice returns the
    existing entry. The zero address adds the chain's native coin. Rate-limited; a list holds
    at most settings.max_tokens_per_user tokens (each one is read on every /assets).
    `shown`: what the user saw of it after a probe ({token_symbol, token_name, token_decimals},
    and `warned`: whether a copycat/unfamiliar warning was shown, when the caller shows them). A
    token may answer otherwise now (its symbol() can switch on the block), and a copycat must not
    go in unwarned: token_changed, before anything is stored."""
    accounts.hit("token_add", user)
    chain = get_chain(chain_id)
    address = parse_address(token_address, empty_is_zero=True).lower()
    u, rows = _user_token_rows(user)
    for c, r in rows:
        if c.chain_id == chain.chain_id and r.token_address == address:
            return _token_dict(c, r)
    cap = get_settings().max_tokens_per_user
    if len(rows) >= cap:
        raise AppError("too_many_tokens", f"the list already holds {len(rows)} tokens", max=cap)
    info = chain_svc.token_metadata(chain, address)
    if shown is not None:
        seen = (shown.get("token_symbol"), shown.get("token_name"), str(shown.get("token_decimals")))
        if seen != (info.token_symbol, info.token_name, str(info.token_decimals)):
            raise AppError("token_changed", f"{address} answers {info} now, not {seen}")
        listed = [_token_dict(c, r) for c, r in rows]
        warn = unfamiliar_symbol(info.token_symbol) or copycat_of(info.token_symbol, chain.chain_id, address, listed)
        if warn and shown.get("warned") is False:
            raise AppError("token_changed", f"{address} ({info.token_symbol}) needs a warning that was not shown")
    with get_session() as db:
        try:
            row = crud.add_user_token(
                db, stored_id(u), chain.chain_id, address, info.token_symbol, info.token_name, info.token_decimals
            )
            db.commit()
        except IntegrityError:
            db.rollback()  # the same token added concurrently
            again = crud.get_user_token(db, stored_id(u), chain.chain_id, address)
            if again is None:
                raise
            row = again
        return _token_dict(chain, row)


def token_info(user: User | int, chain: ChainConfig, address: str) -> TokenInfo | None:
    """The token's symbol and decimals: the configured tokens, then the user's list, then the
    chain itself; None when the address does not answer like an ERC-20. A chain that does not
    answer at all raises rpc_unavailable: "no token" and "cannot tell" are different answers."""
    address = parse_address(address, allow_zero=True)
    if address == chain.native_token().token_address:
        return chain.native_token()
    for t in chain.tokens:
        if t.token_address.lower() == address.lower():
            return t
    with get_session() as db:
        u = accounts.get_user(db, user)
        row = crud.get_user_token(db, stored_id(u), chain.chain_id, address.lower())
    if row is not None:
        return TokenInfo(address, row.symbol, row.name, row.decimals)
    try:
        return chain_svc.token_metadata(chain, address)
    except AppError as e:
        if e.code == "rpc_unavailable":
            raise
        return None


class Balances(NamedTuple):
    """asset_balances' answer: the token balance items, and the chains whose node did not answer
    ({chain_id, chain_name}, in the order of the user's list): their tokens are not in `items`,
    which does not mean that none is held there."""

    items: list[dict]
    unavailable: list[dict]


def asset_balances(user: User | int) -> Balances:
    """Token balance items (specification section 3), balance as an integer string in the
    smallest unit. One aggregated eth_call per chain, chains read in parallel; a chain that
    does not answer contributes no items and is named in `unavailable`. No address yet: no
    items. Rate-limited per user (RATE_LIMIT_BALANCES): the reads cost the operator's node."""
    accounts.hit("balances", user)
    u, rows = _user_token_rows(user)
    owner = u.address
    if not owner or not rows:
        return Balances([], [])
    per_chain: dict[int, tuple[ChainConfig, list[UserToken]]] = {}
    for c, r in rows:
        per_chain.setdefault(c.chain_id, (c, []))[1].append(r)

    def read(item: tuple[ChainConfig, list[UserToken]]) -> Balances:
        c, tokens = item
        try:
            found = chain_svc.balances(c, owner, [t.token_address for t in tokens])
        except AppError as e:
            _log_unavailable(c.chain_id, e)
            return Balances([], [{"chain_id": c.chain_id, "chain_name": c.chain_name}])
        items = [
            {**_token_dict(c, t), "balance": str(found[t.token_address])} for t in tokens if t.token_address in found
        ]
        return Balances(items, [])

    groups = list(per_chain.values())
    if len(groups) == 1:
        return read(groups[0])
    with ThreadPoolExecutor(max_workers=min(8, len(groups))) as pool:
        answers = list(pool.map(read, groups))
    return Balances([i for a in answers for i in a.items], [c for a in answers for c in a.unavailable])
