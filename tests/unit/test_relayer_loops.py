"""The relayer process's two loops (wallet_app.relayer.run): idle, they pass once per
IDLE_PASS_SECONDS instead of every interval; a queued payment wakes the sending loop, a send
wakes the following loop, and a payment settled wakes the sending loop (held-back ones may go)."""

import threading
import time
from types import SimpleNamespace

import pytest

from tests.waits import wait_until
from wallet_app import relayer as loops
from wallet_app.core.config import get_settings
from wallet_app.services import chain as chains
from wallet_app.services import relayer

NOTHING_FOLLOWED = dict(ok=0, failed=0, resent=0, replaced=0, pending=0)
IDLE_SECOND = 1.0  # the loops before passed 20 times in it at this test's interval of 0.05 s


@pytest.fixture
def passes(settings_env, monkeypatch):
    """Both loops running (interval 0.05 s, no Redis) on one chain, over stand-ins of
    send_queued and reconcile that record each pass and answer what the test queues up."""
    monkeypatch.setenv("REDIS_URL", "")
    get_settings.cache_clear()
    monkeypatch.setattr(loops, "IDLE_PASS_SECONDS", 60.0)
    monkeypatch.setattr(chains, "get_chains", lambda: [SimpleNamespace(chain_id=31337, payment_contract="0xp")])
    state = SimpleNamespace(sends=[], follows=[], send_answers=[], follow_answers=[], queued=threading.Event())

    def send_queued(_chain):
        state.sends.append(time.monotonic())
        return state.send_answers.pop(0) if state.send_answers else {"sent": 0, "failed": 0}

    def reconcile(_chain):
        state.follows.append(time.monotonic())
        return state.follow_answers.pop(0) if state.follow_answers else dict(NOTHING_FOLLOWED)

    def anything_queued() -> bool:
        found = state.queued.is_set()
        state.queued.clear()
        return found

    monkeypatch.setattr(relayer, "send_queued", send_queued)
    monkeypatch.setattr(relayer, "reconcile", reconcile)
    monkeypatch.setattr(loops, "_anything_queued", anything_queued)
    stop = threading.Event()
    thread = threading.Thread(target=loops.run, args=(stop, 0.05), daemon=True)
    thread.start()
    wait_until(lambda: state.sends and state.follows)
    yield state
    stop.set()
    thread.join(5)
    assert not thread.is_alive(), "the loops did not stop within 5 s of the stop"


def test_idle_loops_do_not_pass_again_until_woken(passes):
    time.sleep(IDLE_SECOND)  # a window in which nothing may happen
    assert (len(passes.sends), len(passes.follows)) == (1, 1)


def test_a_queued_payment_wakes_the_sending_loop_and_its_send_the_following_loop(passes):
    passes.send_answers.append({"sent": 1, "failed": 0})
    passes.queued.set()
    wait_until(lambda: len(passes.sends) >= 2 and len(passes.follows) >= 2)
    # After a send the sending loop passes again at its interval, then idles.
    wait_until(lambda: len(passes.sends) >= 3)
    time.sleep(IDLE_SECOND)
    assert (len(passes.sends), len(passes.follows)) == (3, 2)


def test_a_settled_payment_wakes_the_sending_loop(passes):
    # The send wakes the follower, which finds the payment pending (busy: again at its interval),
    # then settled: the sending loop passes once more at once, for what that payer had held back.
    passes.send_answers.append({"sent": 1, "failed": 0})
    passes.follow_answers += [dict(NOTHING_FOLLOWED, pending=1), dict(NOTHING_FOLLOWED, ok=1)]
    passes.queued.set()
    wait_until(lambda: len(passes.follows) >= 3)
    settled_at = passes.follows[2]
    wait_until(lambda: passes.sends[-1] > settled_at)


def test_the_relayer_process_runs_at_cpythons_recursion_limit(settings_env, monkeypatch):
    """py_ecc's import sets 100,000, at which a deeply nested JSON answer (a node's, a merchant's)
    overflowed the C stack instead of raising: the process's main sets CPython's own back."""
    import sys

    from wallet_app.core.startup import RECURSION_LIMIT
    from wallet_app.relayer import __main__ as process

    seen = []
    monkeypatch.setattr(process, "upgrade_schema", lambda: None)
    monkeypatch.setattr(process, "freeze_startup_objects", lambda: None)
    monkeypatch.setattr(process, "run_indexer", lambda stop: None)
    monkeypatch.setattr(process.merchant_webhooks, "start", lambda stop: None)
    monkeypatch.setattr(process, "run", lambda stop: seen.append(sys.getrecursionlimit()))
    monkeypatch.setattr(process.signal, "signal", lambda *_: None)
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        assert process.main() == 0
    finally:
        sys.setrecursionlimit(before)
    assert seen == [RECURSION_LIMIT]
