"""core.startup.freeze_startup_objects: what a server process made at start-up is left out of the
collector's walks, in the relayer process and (test_config) in the web server's workers."""

from __future__ import annotations

import gc
import weakref

import pytest

from wallet_app.core.startup import freeze_startup_objects
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
