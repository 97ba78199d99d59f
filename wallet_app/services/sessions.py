"""Login sessions: a random 256-bit token in an HttpOnly cookie, only its SHA-256 in the DB.

The API looks sessions up through a short per-process cache (`api_user`): the database once per
session and SESSION_CACHE_SECONDS, not once per request. A change of the user or the session
(sign-out, address, locale, backup flag: every writer calls `user_changed`) drops it at once in
this process and, with REDIS_URL, in every worker: it is published on a Redis channel each
worker listens to (no Redis call per request; while a worker is not subscribed, it reads the
database every time). A change this process cannot hear of (Redis hanging; no Redis and another
process writing) is seen within SESSION_CACHE_SECONDS. An entry past a random point in the second
half of that time is read again in the background while the cache still answers, so a request
waits for the database only on a session's first use (entries cached in one burst, e.g. after a
restart, would otherwise all expire and be read again in one burst, a stall of every request of
that worker). The entries that fall due within REFRESH_BATCH_SECONDS are read in one query: one
read per session every few seconds was a sixth of a worker's CPU under a payment burst of 100
users. Requests that find no entry share the reads in flight, and those of one turn of the event
loop are read in one query (`_read`). The Reflex handlers read the database every time
(`user_from_socket_cookie`): their websocket carries a handle of the token, not the token
(`SocketCookie`).
"""

import asyncio
import contextlib
import functools
import hashlib
import logging
import random
import secrets
import threading
import time
from dataclasses import dataclass

import redis.asyncio
from redis import RedisError
from starlette.concurrency import run_in_threadpool

from wallet_app import crud
from wallet_app.core import shared
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_session, read_session
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
CHANGES_CHANNEL = "nb:user_changed"  # Redis pub/sub: the id of each user changed by any process
LISTEN_RETRY_SECONDS = 1.0
REFRESH_AFTER = (0.5, 0.9)  # shares of SESSION_CACHE_SECONDS: when a hit starts a background read
REFRESH_BATCH_SECONDS = 0.2  # due entries gathered this long are read again together
LOOKUP_CHUNK = 500  # token hashes per query


@dataclass(frozen=True)
class _Cached:
    user_id: int
    # The User row's columns: each request gets its own User (never a shared object), made by
    # model_construct: the fields are a row's own, so no validation, and SQLAlchemy does not track
    # it (it cannot be added to a database session): 6 µs against User(**fields)'s 47 µs.
    fields: dict
    session_expires_at: int  # epoch seconds
    until: float  # time.monotonic() after which the database is asked again
    refresh_at: float  # time.monotonic() after which a hit also reads it again in the background


_cache: dict[str, _Cached] = {}
_changed_at: dict[int, float] = {}  # user id -> time.monotonic() of the last change heard of
_lock = threading.Lock()
_changes = 0  # how many changes _drop has heard of: a read begun before the latest is not shared
_reading: dict[str, tuple[int, asyncio.Task]] = {}  # token hash -> (_changes at its start, its read)
# The read about to begin: _changes when it was made, the token hashes it will read, its task.
_next_read: tuple[int, list[str], asyncio.Task] | None = None
_due: set[str] = set()  # token hashes a hit found past their refresh point
_refresher: asyncio.Task | None = None  # reads the due entries again (on the loop that started it)
# With REDIS_URL: the change feed's listener (on this process's event loop) and since when it is
# subscribed (None: not subscribed, nothing is served from the cache).
_listener: tuple[str, asyncio.Task] | None = None
_listening_since: float | None = None


def _drop(user_id: int) -> None:
    global _changes
    with _lock:
        _changes += 1
        if len(_changed_at) >= CACHE_MAX:
            _changed_at.clear()
            _cache.clear()
        _changed_at[user_id] = time.monotonic()
        for key in [k for k, c in _cache.items() if c.user_id == user_id]:
            del _cache[key]


def user_changed(user_id: int | None) -> None:
    """A user's row or one of their sessions changed (after commit): cached lookups of that user
    are dropped here and, with REDIS_URL, in every worker (published on CHANGES_CHANNEL)."""
    if user_id is None:
        return
    _drop(user_id)
    if get_settings().redis_url:
        try:
            shared.publish(CHANGES_CHANNEL, str(user_id))
        except RedisError:  # the other workers see it within SESSION_CACHE_SECONDS
            log.exception("user change not published; other workers may serve the old one for a moment")


_feed = shared.FeedLost(
    log,
    "session cache: the change feed is lost; sessions are read from the database until it is back",
    "session cache: the change feed is back",
)


async def _listen(url: str) -> None:
    """Drops the changed users' cache entries as other processes publish them. While not
    subscribed (Redis gone, reconnecting) the cache is empty and unused."""
    global _listening_since
    while True:
        client = redis.asyncio.Redis.from_url(url, **shared.LISTEN_OPTIONS)
        pubsub = client.pubsub()
        try:
            await pubsub.subscribe(CHANGES_CHANNEL)
            beat = shared.Heartbeat()
            while True:
                message = await pubsub.get_message(timeout=beat.read_seconds())
                if beat.after(message):
                    await pubsub.ping()
                if message is None:
                    continue
                if message["type"] == "subscribe":
                    _listening_since = time.monotonic()
                    _feed.back()
                elif message["type"] == "message":
                    _drop(int(message["data"]))
        except (RedisError, OSError, ValueError):
            _feed.lost()  # once until it is back: this retries every LISTEN_RETRY_SECONDS
        finally:
            _listening_since = None
            with _lock:
                _cache.clear()
            with contextlib.suppress(Exception):
                await pubsub.aclose()
                await client.aclose()
        await asyncio.sleep(LISTEN_RETRY_SECONDS)


def _ensure_listener(url: str) -> None:
    global _listener
    loop = asyncio.get_running_loop()
    if _listener is None or _listener[0] != url or _listener[1].done() or _listener[1].get_loop() is not loop:
        if _listener is not None:
            _listener[1].cancel()
        _listener = (url, loop.create_task(_listen(url)))


async def api_user(raw_token: str | None) -> User | None:
    """lookup_user through the cache (the API's requests, on the event loop)."""
    settings = get_settings()
    if not raw_token or len(raw_token) > 256 or settings.session_cache_seconds <= 0:
        return await run_in_threadpool(lookup_user, raw_token)
    if settings.redis_url:
        _ensure_listener(settings.redis_url)
    key = hash_token(raw_token)
    cached = _cache.get(key)
    now = time.monotonic()
    if cached and now < cached.until and cached.session_expires_at > now_epoch():
        if now >= cached.refresh_at:
            _refresh_in_background(key)
        return User.model_construct(**cached.fields)
    return await _read(key)


async def _read(key: str) -> User | None:
    """The session's user from the database, cached when nothing can have changed meanwhile.

    The requests of one session share a read in flight: on a saturated worker a read in a thread
    waits for the interpreter lock at each of its I/O calls and takes many times its CPU, and every
    request of the session arriving meanwhile started one more (50 clients on one event loop:
    348 of 350 reads were such). The sessions asked for in one turn of the event loop are read in
    one query (after a restart or a quiet spell every client comes back at once: 50 reads of one
    session cost 50 ms of CPU, one of 50 sessions 3 ms). Not a read begun before a change heard of
    since: it may answer from before the change."""
    global _next_read
    loop = asyncio.get_running_loop()
    reading = _reading.get(key)
    if reading is None or reading[0] != _changes or reading[1].get_loop() is not loop:
        if _next_read is None or _next_read[0] != _changes or _next_read[2].get_loop() is not loop:
            keys: list[str] = []
            _next_read = (_changes, keys, loop.create_task(_read_next(keys)))
        _next_read[1].append(key)
        reading = (_next_read[0], _next_read[2])
        _reading[key] = reading
        reading[1].add_done_callback(functools.partial(_read_done, key))
    return (await asyncio.shield(reading[1])).get(key)


async def _read_next(keys: list[str]) -> dict[str, User]:
    """Runs a turn of the loop after it was made: by then every request of that turn has added
    its session to `keys`; later ones wait for the next read."""
    global _next_read
    if _next_read is not None and _next_read[1] is keys:
        _next_read = None
    return await _read_many(keys)


def _read_done(key: str, task: asyncio.Task) -> None:
    if (reading := _reading.get(key)) is not None and reading[1] is task:
        del _reading[key]
    if not task.cancelled():
        task.exception()  # retrieved: each request awaiting it raised it already


async def _read_many(keys: list[str]) -> dict[str, User]:
    """The users of the live sessions among these, from the database in one thread hop; each
    cached when nothing can have changed meanwhile, the others dropped from the cache."""
    settings = get_settings()
    started = time.monotonic()
    found = await run_in_threadpool(_lookup_with_expiry, keys)
    with _lock:
        # Cached only when no change can have slipped between the read and now: none heard of
        # since the read began, and (with Redis) subscribed to the change feed before it began.
        subscribed = not settings.redis_url or (_listening_since is not None and _listening_since <= started)
        bound = settings.session_cache_seconds
        for key in keys:
            if key not in found:
                _cache.pop(key, None)
                continue
            user, expires_at = found[key]
            if _changed_at.get(stored_id(user), 0.0) >= started or not subscribed:
                continue
            if len(_cache) >= CACHE_MAX:
                _cache.clear()
            _cache[key] = _Cached(
                stored_id(user),
                user.model_dump(),
                expires_at,
                until=started + bound,
                refresh_at=started + bound * random.uniform(*REFRESH_AFTER),
            )
    return {key: user for key, (user, _) in found.items()}


def _refresh_in_background(key: str) -> None:
    global _refresher
    with _lock:
        if len(_due) >= CACHE_MAX:
            _due.clear()
        _due.add(key)
    loop = asyncio.get_running_loop()
    if _refresher is None or _refresher.done() or _refresher.get_loop() is not loop:
        _refresher = loop.create_task(_refresh_due())


async def _refresh_due() -> None:
    """Every REFRESH_BATCH_SECONDS, the entries still due (a read may have replaced some since
    their hit) read again together, until none are left."""
    global _due
    while True:
        await asyncio.sleep(REFRESH_BATCH_SECONDS)
        now = time.monotonic()
        with _lock:
            keys = [k for k in _due if (c := _cache.get(k)) is not None and now >= c.refresh_at]
            _due = set()
        if not keys:
            return
        try:
            await _read_many(keys)
        except Exception:  # the entries stay until their bound; the next read after that asks again
            log.exception("session cache: background read failed")


def _lookup_with_expiry(token_hashes: list[str]) -> dict[str, tuple[User, int]]:
    found: dict[str, tuple[User, int]] = {}
    with read_session() as db:
        for i in range(0, len(token_hashes), LOOKUP_CHUNK):
            found.update(crud.active_session_users(db, token_hashes[i : i + LOOKUP_CHUNK], now_epoch()))
    return found


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
    """The session token of a raw Cookie header: the one rule for the API and the Reflex websocket."""
    return parse_cookie_header(cookie_header).get(session_cookie_name()) or None


# ---------------------------------------------------------------- the Reflex websocket's cookie

# Reflex keeps each connection's request headers in the client's state, and with REDIS_URL that
# state is pickled into Redis: the raw session token would sit there for the state's lifetime.
# So the websocket's Cookie header is replaced, before Reflex sees it, by a random handle that
# names the connection's token in this process only (a socket stays on its worker for its life).
SOCKET_COOKIE = "nb_socket"
_socket_tokens: dict[str, str] = {}  # handle -> raw session token, for the sockets open here


class SocketCookie:
    """ASGI middleware: a websocket's Cookie header becomes `nb_socket=<handle>` (or goes, with no
    session cookie), for the life of the connection. Every other request passes untouched."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await self.app(scope, receive, send)
        cookie = b"; ".join(v for k, v in scope["headers"] if k == b"cookie").decode("latin-1")
        headers = [(k, v) for k, v in scope["headers"] if k != b"cookie"]
        handle = None
        if token := token_from_cookie_header(cookie):
            handle = secrets.token_urlsafe(16)
            _socket_tokens[handle] = token
            headers.append((b"cookie", f"{SOCKET_COOKIE}={handle}".encode()))
        try:
            return await self.app({**scope, "headers": headers}, receive, send)
        finally:
            if handle is not None:
                _socket_tokens.pop(handle, None)


def user_from_socket_cookie(cookie_header: str | None) -> User | None:
    """For Reflex handlers: the signed-in user of the websocket whose Cookie header (as SocketCookie
    left it) this is, else None."""
    handle = parse_cookie_header(cookie_header).get(SOCKET_COOKIE)
    return lookup_user(_socket_tokens.get(handle)) if handle else None


def socket_closed(cookie_header: str | None) -> bool:
    """Whether the websocket whose Cookie header (as SocketCookie left it) this is is not open in
    this process although it had a session: it closed (the page was left: a link opened in the tab,
    a reload, a dropped connection; Reflex still runs the events it sent) or, read by a background
    event from the state, it is the tab's newer socket on another worker. Either way a lookup finds
    no user, though the session goes on."""
    handle = parse_cookie_header(cookie_header).get(SOCKET_COOKIE)
    return handle is not None and handle not in _socket_tokens
