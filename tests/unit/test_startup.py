"""core.startup.freeze_startup_objects: what a server process made at start-up is left out of the
collector's walks, in the relayer process and (test_config) in the web server's workers."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref

import pytest

from tests.conftest import run_async
from wallet_app.core.startup import HANDLER_THREADS, freeze_startup_objects, size_handler_threads
from wallet_app.relayer import __main__ as relayer_main


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_startup_objects_are_frozen_and_later_garbage_is_still_collected(unfrozen):
    assert gc.get_freeze_count() == 0
    freeze_startup_objects()
    assert gc.get_freeze_count() > 10_000  # this test process's modules, at the least
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the collector frees it
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None


def test_the_relayer_process_freezes_once_started(unfrozen, monkeypatch):
    ran = []
    monkeypatch.setattr(relayer_main, "upgrade_schema", lambda: None)
    monkeypatch.setattr(relayer_main, "run_indexer", lambda stop: None)
    monkeypatch.setattr(relayer_main.merchant_webhooks, "start", lambda stop: None)
    monkeypatch.setattr(relayer_main, "run", lambda stop: ran.append(gc.get_freeze_count()))
    monkeypatch.setattr(relayer_main.signal, "signal", lambda *a: None)
    assert relayer_main.main() == 0
    assert ran and ran[0] > 10_000  # frozen before the loops start


@pytest.mark.parametrize("sized, together", [(False, False), (True, True)])
def test_the_pages_handlers_get_as_many_threads_as_the_api(sized, together):
    """Twelve handlers each waiting in a thread (on a slow node, say) at once: Python's default
    pool on two cores runs six, and the rest waited (found by an audit)."""
    handlers = 12
    assert HANDLER_THREADS >= handlers
    all_waiting = threading.Barrier(handlers)

    def wait_for_the_others() -> bool:
        try:
            all_waiting.wait(timeout=2)
            return True
        except threading.BrokenBarrierError:
            return False

    async def run() -> list[bool]:
        if sized:
            size_handler_threads()
        else:  # Python's default on a 2-core machine
            from concurrent.futures import ThreadPoolExecutor

            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(min(32, 2 + 4)))
        return await asyncio.gather(*(asyncio.to_thread(wait_for_the_others) for _ in range(handlers)))

    assert all(run_async(run())) is together
