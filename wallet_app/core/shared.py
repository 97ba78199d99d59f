"""Short-lived keys every worker must see: in Redis when settings.redis_url is set (shared by all
workers), else in this process's memory. Each key expires by itself after its seconds.

    marks("refused").mark("k", 30)            # (re)sets k for 30 s
    marks("refused").left("k")                # seconds k still has (0: none)
    marks("spent").add_new("k", 600)          # False when k is already there (atomic)
    marks("codes").put("k", "v", 60); marks("codes").get("k"); marks("codes").take("k")  # values

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


class RedisMarks:
    def __init__(self, client: redis.Redis, namespace: str) -> None:
        self._client = client
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


def _text(value: object) -> str | None:
    return value.decode() if isinstance(value, bytes) else None


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
