"""What a server process does once it has started."""

from __future__ import annotations

import asyncio
import gc
import sys
from concurrent.futures import ThreadPoolExecutor

import py_ecc  # noqa: F401  (imported here first, so that restore_recursion_limit runs after its import)

# CPython's own. py_ecc (under eth_keys, web3 and eth_account; pinned in requirements-lock.txt) sets
# 100,000 when imported, for its pairing code, which the wallet never calls. At that limit json.loads
# recursed until the C stack overflowed: one request body or websocket message of 200 kB, arrays
# nested 100,000 deep, killed its worker (SIGSEGV). At 1000 the parser raises RecursionError: one
# refused request.
RECURSION_LIMIT = 1000


def restore_recursion_limit() -> None:
    sys.setrecursionlimit(RECURSION_LIMIT)


def freeze_startup_objects() -> None:
    """Takes what start-up made (modules, settings, engines, the app's routes and pages, web3's ABI
    tables: about 200,000 objects in a worker or the relayer) out of the collector's walks: it lives
    as long as the process. Without it a full collection walked all of it, 100-270 ms holding the
    interpreter, and a burst of requests set one off every second or so (bench/payments: two in
    the relayer inside a 0.7 s pay phase). Objects made later are collected as before; a start-up
    object in a reference cycle that becomes garbage later is never freed (bounded: start-up runs
    once per process)."""
    gc.freeze()


# The pages' handlers run their database and chain work in the event loop's default thread pool
# (asyncio.to_thread): as many threads as the API's sync routes get (anyio's default).
HANDLER_THREADS = 40


def size_handler_threads() -> None:
    """Gives the worker's event loop a default thread pool of HANDLER_THREADS (a lifespan task: it
    runs in the loop). Python's default is min(32, cores + 4), 6 on two cores: six handlers waiting
    on a slow node held every page's session check on that worker."""
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(HANDLER_THREADS, thread_name_prefix="page-handlers")
    )
