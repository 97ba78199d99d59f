"""Short-lived keys every worker must see: in Redis when settings.redis_url is set (shared by all
workers), else in this process's memory. Each key expires by itself after its seconds.

    marks("refused").mark("k", 30)            # (re)sets k for 30 s
    marks("refused").left("k")                # seconds k still has (0: none)
    marks("spent").add_new("k", 600)          # False when k is already there (atomic)

A namespace's keys are prefixed "nb:<namespace>:" in Redis. Redis errors are raised as
redis.RedisError: each caller decides whether to serve without (rate limits) or refuse (sign-in).
"""

from __future__ import annotations

import threading
import time
from functools import lru_cache
from typing import cast

import redis

from wallet_app.core.config import Settings, get_settings

MAX_MEMORY_KEYS = 100_000  # per namespace: beyond, the expired ones go, else the oldest


class MemoryMarks:
    def __init__(self) -> None:
        self._until: dict[str, float] = {}  # key -> time.monotonic() it expires
        self._lock = threading.Lock()

    def _left(self, key: str, now: float) -> float:
        until = self._until.get(key)
        if until is None or until <= now:
            self._until.pop(key, None)
            return 0.0
        return until - now

    def _set(self, key: str, seconds: float, now: float) -> None:
        if len(self._until) >= MAX_MEMORY_KEYS:
            expired = [k for k, until in self._until.items() if until <= now]
            for old in expired or list(self._until)[: MAX_MEMORY_KEYS // 10]:
                del self._until[old]
        self._until.pop(key, None)  # re-inserted last: insertion order stays roughly time order
        self._until[key] = now + seconds

    def mark(self, key: str, seconds: float) -> None:
        with self._lock:
            self._set(key, seconds, time.monotonic())

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


class RedisMarks:
    def __init__(self, client: redis.Redis, namespace: str) -> None:
        self._client = client
        self._prefix = f"nb:{namespace}:"

    def mark(self, key: str, seconds: float) -> None:
        self._client.set(self._prefix + key, b"1", px=max(1, int(seconds * 1000)))

    def add_new(self, key: str, seconds: float) -> bool:
        return bool(self._client.set(self._prefix + key, b"1", px=max(1, int(seconds * 1000)), nx=True))

    def left(self, key: str) -> float:
        # -2: no key, -1: no expiry (never set here); the sync client answers an int (typed for both).
        ms = cast(int, self._client.pttl(self._prefix + key))
        return ms / 1000 if ms > 0 else 0.0


Marks = MemoryMarks | RedisMarks


@lru_cache(maxsize=1)
def _client(url: str) -> redis.Redis:
    # Short timeouts: a Redis that hangs must not hold a request (or the event loop) for long.
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)


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
        stores[namespace] = RedisMarks(_client(settings.redis_url), namespace) if settings.redis_url else MemoryMarks()
    return stores[namespace]
