"""Login sessions: a random 256-bit token in an HttpOnly cookie, only its SHA-256 in the DB.

The API looks sessions up through a short per-process cache (`api_user`): the database once per
session and SESSION_CACHE_SECONDS, not once per request. A change of the user or the session
(sign-out, address, locale, backup flag: every writer calls `user_changed`) drops it at once in
this process, and with REDIS_URL in every worker: each cached answer is checked against the
user's version in Redis (one GET on the event loop). A change this process cannot hear of (Redis
not answering; no Redis and another process writing) is seen within SESSION_CACHE_SECONDS.
The Reflex handlers read the database every time (`lookup_user`).
"""

import hashlib
import logging
import secrets
import threading
import time
from dataclasses import dataclass

from redis import RedisError
from starlette.concurrency import run_in_threadpool

from wallet_app import crud
from wallet_app.core import shared
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_session
from wallet_app.models import User, now_epoch, stored_id

log = logging.getLogger(__name__)

SESSION_COOKIE = "nb_session"
# Over https the name carries the __Host- prefix: the browser keeps it only when Secure, Path=/
# and without Domain, so a sibling subdomain can neither plant nor shadow it.
HOST_SESSION_COOKIE = "__Host-" + SESSION_COOKIE


def session_cookie_name() -> str:
    """The session cookie's name: __Host-nb_session when served over https, else nb_session."""
    return HOST_SESSION_COOKIE if get_settings().https else SESSION_COOKIE


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 32 bytes = 256 bits


def hash_token(raw_token: str) -> str:
    return hashlib.sha256(raw_token.encode("utf-8")).hexdigest()


def create_session(user_id: int) -> str:
    """Store a new session for the user; returns the raw token for the cookie (never stored)."""
    raw = new_token()
    expires_at = now_epoch() + get_settings().session_lifetime_seconds
    with get_session() as db:
        crud.add_session(db, user_id, hash_token(raw), expires_at)
        db.commit()
    return raw


def revoke_session(raw_token: str) -> bool:
    """Mark the session revoked. Returns False when there was no such session."""
    if not raw_token:
        return False
    with get_session() as db:
        row = crud.get_session_by_hash(db, hash_token(raw_token))
        if row is None:
            return False
        row.revoked = True
        db.add(row)
        db.commit()
    user_changed(row.user_id)
    return True


def lookup_user(raw_token: str | None) -> User | None:
    """The user of a live session (not revoked, not expired), else None."""
    if not raw_token or len(raw_token) > 256:
        return None
    with get_session() as db:
        return crud.active_user_for_hash(db, hash_token(raw_token), now_epoch())


# ---------------------------------------------------------------- the API's session cache

CACHE_MAX = 10_000  # sessions per process; beyond, the cache starts afresh


@dataclass(frozen=True)
class _Cached:
    user_id: int
    fields: dict  # the User row's columns: each request gets its own User (never a shared ORM object)
    session_expires_at: int  # epoch seconds
    version: int  # the user's version when read
    until: float  # time.monotonic() after which the database is asked again


_cache: dict[str, _Cached] = {}
_local_versions: dict[int, int] = {}  # user id -> changes made in this process (without Redis)
_lock = threading.Lock()


def user_changed(user_id: int | None) -> None:
    """A user's row or one of their sessions changed (after commit): cached lookups of that user
    are dropped here and, with REDIS_URL, in every worker."""
    if user_id is None:
        return
    with _lock:
        _local_versions[user_id] = _local_versions.get(user_id, 0) + 1
        for key in [k for k, c in _cache.items() if c.user_id == user_id]:
            del _cache[key]
    if get_settings().redis_url:
        try:
            shared.versions().bump(user_id)
        except RedisError:  # the other workers see it within SESSION_CACHE_SECONDS
            log.exception("user version not shared; other workers may serve the old one for a moment")


async def _version(user_id: int) -> int:
    if get_settings().redis_url:
        return await shared.versions().get_async(user_id)
    return _local_versions.get(user_id, 0)


async def api_user(raw_token: str | None) -> User | None:
    """lookup_user through the cache (the API's requests, on the event loop)."""
    ttl = get_settings().session_cache_seconds
    if not raw_token or len(raw_token) > 256 or ttl <= 0:
        return await run_in_threadpool(lookup_user, raw_token)
    key = hash_token(raw_token)
    cached = _cache.get(key)
    try:
        if cached and time.monotonic() < cached.until and cached.session_expires_at > now_epoch():
            if await _version(cached.user_id) == cached.version:
                return User(**cached.fields)
        found = await run_in_threadpool(_lookup_with_expiry, key)
        if found is None:
            return None
        user, expires_at = found
        # Read after the database: a change committed in between is seen at the latest after ttl.
        version = await _version(stored_id(user))
    except RedisError:  # no shared versions: the database answers, nothing is cached
        log.exception("user versions unavailable; sessions not cached")
        return await run_in_threadpool(lookup_user, raw_token)
    with _lock:
        if len(_cache) >= CACHE_MAX:
            _cache.clear()
        _cache[key] = _Cached(stored_id(user), user.model_dump(), expires_at, version, time.monotonic() + ttl)
    return user


def _lookup_with_expiry(token_hash: str) -> tuple[User, int] | None:
    with get_session() as db:
        return crud.active_session_user(db, token_hash, now_epoch())


def parse_cookie_header(header: str | None) -> dict[str, str]:
    """Cookie header -> {name: value}; the first of duplicate names wins, junk is skipped.

    First wins because browsers send the cookie with the more specific path first (RFC 6265
    5.4). Not http.cookies.SimpleCookie: it drops every cookie after one it cannot parse; not
    Starlette's request.cookies: there the last one wins.
    """
    cookies: dict[str, str] = {}
    for part in (header or "").split(";"):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            continue
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        cookies.setdefault(name, value)
    return cookies


def token_from_cookie_header(cookie_header: str | None) -> str | None:
    """The session token of a raw Cookie header: the one rule for the API and the Reflex handlers."""
    return parse_cookie_header(cookie_header).get(session_cookie_name()) or None


def user_from_cookie_header(cookie_header: str | None) -> User | None:
    """For Reflex handlers: the signed-in user from the raw Cookie header, else None."""
    return lookup_user(token_from_cookie_header(cookie_header))
