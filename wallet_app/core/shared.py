"""Short-lived keys every worker must see: in Redis when settings.redis_url is set (shared by all
workers), else in this process's memory. Each key expires by itself after its seconds.

    marks("refused").mark("k", 30)            # (re)sets k for 30 s
    marks("refused").left("k")                # seconds k still has (0: none)
    marks("spent").add_new("k", 600)          # False when k is already there (atomic)
    marks("codes").put("k", "v", 60); marks("codes").get("k"); marks("codes").take("k")  # values
    await marks("refused").left_async("k")    # on an event loop: left/mark/add_new have *_async forms

A namespace's keys are prefixed "nb:<namespace>:" in Redis. Redis errors are raised as
redis.RedisError: each caller decides whether to serve without (rate limits) or refuse (sign-in).
Code running on the event loop (middleware, async routes) uses the *_async forms (redis.asyncio):
a Redis that hangs then holds that one request for at most REDIS_TIMEOUT_SECONDS, never the
worker's loop; the plain forms are for threads (sync routes, services).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from functools import lru_cache
from typing import Any, cast

import redis
import redis.asyncio

from wallet_app.core.config import Settings, get_settings

REDIS_TIMEOUT_SECONDS = 0.5  # connect and each reply: a Redis that hangs must not hold a request for long
# Every Redis client of the app's: no CLIENT SETINFO on connect (redis-py's default: two more
# commands per new connection, and its own version looked up among the installed packages each
# time: 33 ms of a worker's burst of payments, its pools growing). LISTEN_OPTIONS for the
# subscribers, which wait for messages; CLIENT_OPTIONS for commands, whose replies must be quick.
LISTEN_OPTIONS: dict[str, Any] = {"socket_connect_timeout": REDIS_TIMEOUT_SECONDS, "driver_info": None}
CLIENT_OPTIONS: dict[str, Any] = {**LISTEN_OPTIONS, "socket_timeout": REDIS_TIMEOUT_SECONDS}

MAX_MEMORY_KEYS = 100_000  # per namespace: beyond, the expired ones go, else the oldest


class MemoryMarks:
    def __init__(self) -> None:
        self._until: dict[str, tuple[float, str]] = {}  # key -> (time.monotonic() it expires, value)
        self._lock = threading.Lock()

    def _left(self, key: str, now: float) -> float:
        until = self._until.get(key, (0.0, ""))[0]
        if until <= now:
            self._until.pop(key, None)
            return 0.0
        return until - now

    def _set(self, key: str, seconds: float, now: float, value: str = "1") -> None:
        if len(self._until) >= MAX_MEMORY_KEYS:
            expired = [k for k, (until, _) in self._until.items() if until <= now]
            for old in expired or list(self._until)[: MAX_MEMORY_KEYS // 10]:
                del self._until[old]
        self._until.pop(key, None)  # re-inserted last: insertion order stays roughly time order
        self._until[key] = (now + seconds, value)

    def mark(self, key: str, seconds: float) -> None:
        with self._lock:
            self._set(key, seconds, time.monotonic())

    def put(self, key: str, value: str, seconds: float) -> None:
        with self._lock:
            self._set(key, seconds, time.monotonic(), value)

    def get(self, key: str) -> str | None:
        with self._lock:
            return self._until[key][1] if self._left(key, time.monotonic()) else None

    def take(self, key: str) -> str | None:
        """The value, removed (one-time use)."""
        with self._lock:
            value = self._until[key][1] if self._left(key, time.monotonic()) else None
            self._until.pop(key, None)
            return value

    def add_new(self, key: str, seconds: float) -> bool:
        now = time.monotonic()
        with self._lock:
            if self._left(key, now):
                return False
            self._set(key, seconds, now)
            return True

    def left(self, key: str) -> float:
        with self._lock:
            return self._left(key, time.monotonic())

    async def mark_async(self, key: str, seconds: float) -> None:
        self.mark(key, seconds)

    async def add_new_async(self, key: str, seconds: float) -> bool:
        return self.add_new(key, seconds)

    async def left_async(self, key: str) -> float:
        return self.left(key)


class RedisMarks:
    def __init__(self, url: str, namespace: str, client: redis.Redis | None = None) -> None:
        self._url = url
        self._client = client or _client(url)  # the sync client (a test may pass its own)
        self._prefix = f"nb:{namespace}:"

    def mark(self, key: str, seconds: float) -> None:
        self._client.set(self._prefix + key, b"1", px=max(1, int(seconds * 1000)))

    def add_new(self, key: str, seconds: float) -> bool:
        return bool(self._client.set(self._prefix + key, b"1", px=max(1, int(seconds * 1000)), nx=True))

    def put(self, key: str, value: str, seconds: float) -> None:
        self._client.set(self._prefix + key, value.encode(), px=max(1, int(seconds * 1000)))

    def get(self, key: str) -> str | None:
        return _text(self._client.get(self._prefix + key))

    def take(self, key: str) -> str | None:
        """The value, removed (one-time use: GETDEL, atomic across workers)."""
        return _text(self._client.getdel(self._prefix + key))

    def left(self, key: str) -> float:
        # -2: no key, -1: no expiry (never set here); the sync client answers an int (typed for both).
        ms = cast(int, self._client.pttl(self._prefix + key))
        return ms / 1000 if ms > 0 else 0.0

    async def mark_async(self, key: str, seconds: float) -> None:
        await _bounded(_async_client(self._url).set(self._prefix + key, b"1", px=max(1, int(seconds * 1000))))

    async def add_new_async(self, key: str, seconds: float) -> bool:
        client = _async_client(self._url)
        return bool(await _bounded(client.set(self._prefix + key, b"1", px=max(1, int(seconds * 1000)), nx=True)))

    async def left_async(self, key: str) -> float:
        ms = await _bounded(_async_client(self._url).pttl(self._prefix + key))
        return ms / 1000 if ms > 0 else 0.0


def _text(value: object) -> str | None:
    return value.decode() if isinstance(value, bytes) else None


Marks = MemoryMarks | RedisMarks


def publish(channel: str, *messages: str) -> None:
    """PUBLISH each message on the current settings' Redis, all in one round trip (a pipeline);
    REDIS_URL must be set; redis.RedisError when it fails."""
    url = get_settings().redis_url
    if not url:
        raise RuntimeError("publish needs REDIS_URL")
    pipe = _client(url).pipeline(transaction=False)
    for message in messages:
        pipe.publish(channel, message)
    pipe.execute()


@lru_cache(maxsize=1)
def _client(url: str) -> redis.Redis:
    # Short timeouts: a Redis that hangs must not hold a request's thread for long.
    return redis.Redis.from_url(url, **CLIENT_OPTIONS)


# An asyncio client belongs to the event loop it first ran on: one per loop (a worker has one; the
# tests start several), dropped with its loop.
_async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, redis.asyncio.Redis]] = (
    weakref.WeakKeyDictionary()
)


def _async_client(url: str) -> redis.asyncio.Redis:
    per_loop = _async_clients.setdefault(asyncio.get_running_loop(), {})
    if url not in per_loop:
        per_loop[url] = redis.asyncio.Redis.from_url(url, **CLIENT_OPTIONS)
    return per_loop[url]


async def _bounded(call):
    """The call's answer, or redis.TimeoutError once REDIS_TIMEOUT_SECONDS (twice: connect, then
    reply) have passed, whatever part of the client waits."""
    try:
        return await asyncio.wait_for(call, 2 * REDIS_TIMEOUT_SECONDS)
    except TimeoutError:
        raise redis.TimeoutError("Redis did not answer in time") from None


async def run_script_async(url: str, script: str, keys: list[str], args: list[str | int]) -> Any:
    """A Lua script on `url`'s Redis: its commands run as one, no other client's in between (EVAL;
    the script's text is short, and sent each time)."""
    return await _bounded(_async_client(url).eval(script, len(keys), *keys, *args))


async def ping(url: str) -> None:
    """PING `url`'s Redis; redis.RedisError when it does not answer within the timeouts."""
    await _bounded(_async_client(url).ping())


class FeedLost:
    """A Redis subscription (a listener that retries every second while Redis is out) lost and
    back, each logged once: a warning per retry was three lines a second from a machine's two
    workers and its relayer for as long as Redis was out, and its return went unlogged."""

    def __init__(self, logger: logging.Logger, lost: str, back: str) -> None:
        self.log, self.lost_message, self.back_message = logger, lost, back
        self.since: float | None = None  # time.monotonic() it was lost (None: subscribed, or never yet)

    def lost(self) -> None:
        if self.since is None:
            self.since = time.monotonic()
            self.log.warning(self.lost_message)

    def back(self) -> None:
        if self.since is not None:
            self.log.warning("%s after %.1f s", self.back_message, time.monotonic() - self.since)
            self.since = None


# A subscription quiet this long is sent a PING; nothing heard (no message, no pong) for twice
# this and its connection is taken for dead.
LISTEN_PING_SECONDS = 5.0


class Heartbeat:
    """Whether a subscription still hears Redis. A connection can die without a word (packets
    dropped on the way, a frozen Redis, a proxy or NAT that forgot it): a read then just waits, and
    the listener kept believing it was subscribed, for good. Read with `read_seconds()` as the
    timeout and pass each read's result (None: it timed out) to `after`."""

    def __init__(self) -> None:
        self.heard_at = self.pinged_at = time.monotonic()

    @staticmethod
    def read_seconds() -> float:
        return min(1.0, LISTEN_PING_SECONDS / 2)

    def after(self, message: object) -> bool:
        """True: send a PING now (its pong counts as heard). Raises redis.ConnectionError when
        nothing was heard for 2 x LISTEN_PING_SECONDS."""
        now = time.monotonic()
        if message is not None:
            self.heard_at = now
        if now - self.heard_at > 2 * LISTEN_PING_SECONDS:
            raise redis.ConnectionError(f"nothing heard from Redis for {now - self.heard_at:.1f} s")
        if now - max(self.heard_at, self.pinged_at) >= LISTEN_PING_SECONDS:
            self.pinged_at = now
            return True
        return False


# The stores of the current settings, by namespace.
_state: tuple[Settings, dict[str, Marks]] | None = None


def marks(namespace: str) -> Marks:
    """The store of `namespace` for the current settings (new settings, e.g. a test's, start afresh)."""
    global _state
    settings = get_settings()
    if _state is None or _state[0] is not settings:
        _state = (settings, {})
    stores = _state[1]
    if namespace not in stores:
        stores[namespace] = RedisMarks(settings.redis_url, namespace) if settings.redis_url else MemoryMarks()
    return stores[namespace]
