"""The payment routes' own threads: quote, execute and status reads run their blocking work
(database, chain, signature checks) in PAYMENT_THREADS threads per worker, not in the 40 that
every other sync route shares (Settings.payment_threads says why)."""

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

# One limiter per event loop (a worker's; tests run several loops): anyio's limiters belong to one.
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = weakref.WeakKeyDictionary()


async def in_payment_thread(fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) in one of this worker's payment threads; waits for a free one."""
    loop = asyncio.get_running_loop()
    limiter = _limiters.get(loop)
    if limiter is None:
        limiter = _limiters[loop] = anyio.CapacityLimiter(get_settings().payment_threads)
    return await anyio.to_thread.run_sync(functools.partial(fn, *args), limiter=limiter)
