"""Rate limits of the costly actions, on the `limits` library.

`hit(kind, key)` counts one action of `kind` ("sign_in", "token_add", ...) by `key` (a client IP
or a user id) and raises AppError("rate_limited", retry_after=<seconds>) once the limit of that
kind (settings.rate_limit_<kind>, e.g. "30/minute" or "5/second;60/minute") is spent. Counters
live in memory (one process), or in Redis when settings.redis_url is set (shared by every worker;
while it does not answer, each process counts in its own memory), and so do the fast refusals
(remember_refusal / refused_for, in core.shared). `hit` runs in the services' threads; the fast
refusals run on the event loop (the API's middleware), so they are async: a Redis that hangs
holds one request for at most core.shared's timeout, never the worker.

Callers are the services shared by the REST API and the Reflex handlers, so one limit holds for
both; the API answers 429 with Retry-After (wallet_app.api.app_error_response).
"""

from __future__ import annotations

import ipaddress
import logging
import math
import threading
import time
from functools import lru_cache
from typing import Any

from fastapi import Request
from limits import RateLimitItem, parse_many, storage, strategies
from redis import RedisError
from starlette.requests import HTTPConnection

from wallet_app.core import shared
from wallet_app.core.config import Settings, get_settings
from wallet_app.core.proxy import unmapped
from wallet_app.errors import AppError

log = logging.getLogger(__name__)

KINDS = (
    "sign_in",
    "address",
    "token_metadata",
    "token_add",
    "tx_build",
    "tx_submit",
    "sign_preview",
    "balances",
    "activity_refresh",
    "socket_open",
    "payment_quote",
    "payment_execute",
    "merchant_payments",
)

# Per settings: the limiter. The refused API requests live in core.shared's "refused" marks:
# (method, path, client) -> until when their route refuses them anyway, so that the API answers a
# flood of them without the session lookup (api.RefuseWhileLimited), on every worker.
_state: tuple[Settings, strategies.RateLimiter] | None = None
_fallback: tuple[Settings, strategies.RateLimiter] | None = None  # while Redis does not answer: _local

# After a Redis error a kind of call (the counters, the fast refusals) is not made again for this
# long, per process and settings: while Redis is out each would first wait out its timeout.
REDIS_RETRY_SECONDS = 2.0


class Outage:
    """Redis failing one kind of call: not asked again for REDIS_RETRY_SECONDS after an error, and
    logged when the outage begins (with its traceback) and when it ends, not once per request."""

    def __init__(self, what: str, meanwhile: str, logger: logging.Logger = log) -> None:
        self.what, self.meanwhile, self.log = what, meanwhile, logger
        self.down: tuple[Settings, float] | None = None  # (settings, monotonic time it is asked again)

    def skipping(self, settings: Settings) -> bool:
        down = self.down
        return down is not None and down[0] is settings and time.monotonic() < down[1]

    def failed(self, settings: Settings) -> None:
        down = self.down
        if down is None or down[0] is not settings:
            self.log.exception("%s unavailable; %s until it answers", self.what, self.meanwhile)
        self.down = (settings, time.monotonic() + REDIS_RETRY_SECONDS)

    def answered(self) -> None:
        if self.down is not None:
            self.down = None
            self.log.warning("%s answers again", self.what)


# The counters: meanwhile each process counts in its own memory (up to workers x the limit).
_limits_outage = Outage("rate limit storage", "limits counted in each process")
# The fast refusals: meanwhile the routes' own limiters refuse (after the session lookup).
_refusals_outage = Outage("refusal storage", "refusals not remembered")

# The OpenAPI entry of a limited route's refusal.
RESPONSE_429: dict[int | str, dict[str, Any]] = {
    429: {"description": '{"detail": "rate_limited"}, with Retry-After: the seconds to wait'}
}


def storage_uri(settings: Settings) -> str:
    return settings.redis_url or "memory://"


EXPIRY_PASS_SECONDS = 1.0


class MemoryStorage(storage.MemoryStorage):
    """limits' in-process storage with its clean-up pass at most once a second, not every 10 ms
    after each hit. That pass walks every key, in a new thread each time: under load, with many
    users' keys, it took a growing share of the worker (8% of the GIL while 100 payments were made,
    a few hundred keys). It only frees memory: the moving window counts only the events inside it."""

    def _MemoryStorage__schedule_expiry(self) -> None:  # limits' own (name-mangled) hook; pinned in requirements
        if not self.timer.is_alive():
            self.timer = threading.Timer(EXPIRY_PASS_SECONDS, self._MemoryStorage__expire_events)  # type: ignore[attr-defined]
            self.timer.daemon = True  # a pending pass must not hold up the process's exit
            self.timer.start()


# The moving window's entries in Redis, stamped with Redis's clock (TIME), not the calling worker's:
# limits' own scripts take the worker's time.time(), and workers whose clocks differ by seconds
# share the entries. A worker 5 s ahead stamped its entries 5 s in the future for the others: a
# "2/second" limit met there refused the user on every other worker for 6 s (Retry-After 6, and
# the refusal remembered for all workers); a worker 5 s behind saw the others' entries as gone
# and let the limit through again. The same order of entries and checks as limits' scripts.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local limit, expiry, amount = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if amount > limit then return false end
local entry = redis.call('LINDEX', KEYS[1], limit - amount)
if entry and tonumber(entry) >= now - expiry then return false end
for i = 1, amount do redis.call('LPUSH', KEYS[1], tostring(now)) end
redis.call('LTRIM', KEYS[1], 0, limit - 1)
redis.call('EXPIRE', KEYS[1], expiry)
return true
"""
# -> {oldest entry inside the window (or now), how many are inside, now}, on Redis's clock.
_WINDOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local since = now - tonumber(ARGV[1])
local low, high, found = 0, tonumber(ARGV[2]) - 1, nil
while low <= high do
  local mid = math.floor((low + high) / 2)
  local value = tonumber(redis.call('LINDEX', KEYS[1], mid))
  if value and value >= since then found = mid; low = mid + 1 else high = mid - 1 end
end
if found == nil then return {tostring(now), 0, tostring(now)} end
return {redis.call('LINDEX', KEYS[1], found), found + 1, tostring(now)}
"""


class RedisStorage(storage.RedisStorage):
    """limits' Redis storage with the moving window on Redis's clock (_ACQUIRE, _WINDOW). The
    window's start is handed back in this process's clock, so that the limiter's reset time less
    time.time() (retry_after) is the time Redis's clock has left. Not registered for a scheme
    (no STORAGE_SCHEME of its own): built by _current only."""

    def initialize_storage(self, _uri: str) -> None:
        super().initialize_storage(_uri)
        self.lua_acquire_moving_window = self.get_connection().register_script(_ACQUIRE.encode())
        self.lua_moving_window = self.get_connection().register_script(_WINDOW.encode())

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        return bool(self.lua_acquire_moving_window([self.prefixed_key(key)], [limit, expiry, amount]))

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        start, count, now = self.lua_moving_window([self.prefixed_key(key)], [expiry, limit])
        return float(start) - float(now) + time.time(), int(count)


def _storage(uri: str, options: dict[str, Any]) -> storage.StorageTypes:
    if uri == "memory://":
        return MemoryStorage()
    if uri.split("://", 1)[0] in ("redis", "rediss", "redis+unix"):
        return RedisStorage(uri, **options)
    return storage.storage_from_string(uri, **options)


@lru_cache
def limits_of(spec: str) -> list[RateLimitItem]:
    return parse_many(spec)


def _current() -> strategies.RateLimiter:
    """The limiter of the current settings (new settings, e.g. a test's, start afresh)."""
    global _state
    settings = get_settings()
    if _state is None or _state[0] is not settings:
        uri = storage_uri(settings)
        # Redis: core.shared's client options (the default waits for ever on a hung Redis).
        options = shared.CLIENT_OPTIONS if settings.redis_url else {}
        limiter = strategies.MovingWindowRateLimiter(_storage(uri, options))
        _state = (settings, limiter)
    return _state[1]


def _local() -> strategies.RateLimiter:
    """This process's own counts, for while the shared storage (Redis) does not answer."""
    global _fallback
    settings = get_settings()
    if _fallback is None or _fallback[0] is not settings:
        _fallback = (settings, strategies.MovingWindowRateLimiter(MemoryStorage()))
    return _fallback[1]


def _count(limiter: strategies.RateLimiter, kind: str, key: str, spec: str) -> None:
    for item in limits_of(spec):
        if not limiter.hit(item, kind, key):
            reset = limiter.get_window_stats(item, kind, key).reset_time
            raise AppError("rate_limited", f"{kind} over {item}", retry_after=max(1, math.ceil(reset - time.time())))


def hit(kind: str, key: str | int) -> None:
    """Counts one `kind` action by `key`; rate_limited (with retry_after in seconds) when over."""
    settings = get_settings()
    spec: str = getattr(settings, f"rate_limit_{kind}")
    if _limits_outage.skipping(settings):
        _count(_local(), kind, str(key), spec)  # Redis failed a moment ago: not asked again yet
        return
    try:
        _count(_current(), kind, str(key), spec)
    except AppError:
        _limits_outage.answered()
        raise
    except Exception:  # Redis out (any error of the storage): counted here meanwhile
        _limits_outage.failed(settings)
        _count(_local(), kind, str(key), spec)
        return
    _limits_outage.answered()


def _refusal_key(key: tuple[str, str, str]) -> str:
    return " ".join(key)


async def remember_refusal(key: tuple[str, str, str], retry_after: int) -> None:
    """A route refused `key` (method, path, client) as rate_limited for `retry_after` seconds."""
    settings = get_settings()
    if _refusals_outage.skipping(settings):
        return  # the limiter itself still refuses; only the shortcut is lost
    try:
        await shared.marks("refused").mark_async(_refusal_key(key), retry_after)
    except RedisError:
        _refusals_outage.failed(settings)
        return
    _refusals_outage.answered()


async def refused_for(key: tuple[str, str, str]) -> int:
    """Seconds `key` is still refused (0: not refused, or not known while Redis is out: the route's
    own limiter decides)."""
    settings = get_settings()
    if _refusals_outage.skipping(settings):
        return 0
    try:
        left = await shared.marks("refused").left_async(_refusal_key(key))
    except RedisError:
        _refusals_outage.failed(settings)
        return 0
    _refusals_outage.answered()
    return max(1, math.ceil(left)) if left > 0 else 0


def client_key(request: HTTPConnection) -> str:
    """What a client (a request or a websocket) counts under: its IPv4 address, or its IPv6
    address's /64. One subscriber or host is given a whole /64 and may pick any of its 2^64
    addresses, one per request; an IPv4-mapped IPv6 address (a dual-stack socket's) counts as its
    IPv4 address."""
    host = request.client.host if request.client else "unknown"
    try:
        ip = unmapped(ipaddress.ip_address(host))
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def by_client_ip(kind: str):
    """A route dependency limiting `kind` per client IP (routes before sign-in): client_key."""

    def check(request: Request) -> None:
        hit(kind, client_key(request))

    return check
