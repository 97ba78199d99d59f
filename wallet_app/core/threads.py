"""The payment routes' own threads. Quote and execute (database, chain, signature checks) run in
PAYMENT_THREADS threads per worker, and status reads (database only) in as many of their own,
not in the 40 that every other sync route shares (Settings.payment_threads says why). Apart, so
that a hanging node, which holds every quote and execute thread, delays no status read."""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from wallet_app.core.config import get_settings

T = TypeVar("T")

# The limiters of each event loop (a worker's; tests run several loops), by pool: anyio's
# limiters belong to one loop.
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, anyio.CapacityLimiter]] = (
    weakref.WeakKeyDictionary()
)


async def _in_thread(pool: str, fn: Callable[..., T], *args: Any) -> T:
    limiters = _limiters.setdefault(asyncio.get_running_loop(), {})
    limiter = limiters.get(pool)
    if limiter is None:
        limiter = limiters[pool] = anyio.CapacityLimiter(get_settings().payment_threads)
    return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=limiter)


async def in_payment_thread(fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) (a quote or an execute) in one of this worker's payment threads; waits for a free one."""
    return await _in_thread("payment", fn, *args)


async def in_status_thread(fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) (a payment's status read) in one of this worker's status threads."""
    return await _in_thread("status", fn, *args)


async def in_health_thread(fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) (the health check's database read) in threads of its own: with every shared thread
    held (requests waiting on a node that hangs), the check waited its 5 s for one and answered
    that the database was unavailable, and a balancer took the worker out of rotation."""
    return await _in_thread("health", fn, *args)
