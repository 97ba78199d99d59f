"""helpers.close_context: a context close that never returns is bounded, and pytest-timeout's
per-test timer (the same SIGALRM) keeps running afterwards. flows_send.bad_checksum: an address whose
checksum is wrong, never one all in one case (which carries no checksum)."""

from __future__ import annotations

import signal
import time

import pytest
from web3 import Web3

from tests.e2e import helpers
from tests.e2e.flows_send import bad_checksum


class StuckContext:
    """Stands in for a BrowserContext whose close() Chromium never answers."""

    closed = False

    def close(self) -> None:
        time.sleep(60)
        self.closed = True


class Context:
    closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def outer_timer():
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("outer timer fired"))
    signal.setitimer(signal.ITIMER_REAL, 100)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_stuck_close_is_bounded_and_outer_timer_restored(outer_timer):
    ctx = StuckContext()
    started = time.monotonic()
    with pytest.warns(UserWarning, match="did not close within 0.2 s"):
        helpers.close_context(ctx, seconds=0.2)
    assert time.monotonic() - started < 5
    assert not ctx.closed
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 90 < left <= 100


def test_normal_close(outer_timer, recwarn):
    ctx = Context()
    helpers.close_context(ctx)
    assert ctx.closed
    # Only close_context's own warning counts: any other (a ResourceWarning of an object the garbage
    # collector happened to free meanwhile, in a process full of servers and browsers) is not its.
    assert not [w for w in recwarn.list if "did not close" in str(w.message)], [str(w.message) for w in recwarn.list]
    assert signal.getitimer(signal.ITIMER_REAL)[0] > 90


@pytest.mark.parametrize("address", [
    "0x21B5CB412E92544E4BEd20AD14A0F8A010E35E33",  # one lowercase letter, in the middle: met in CI
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",  # EIP-55's own example
])
def test_bad_checksum_stays_mixed_case(address):
    flipped = bad_checksum(address)
    assert flipped.lower() == address.lower() and flipped != address
    body = flipped[2:]
    assert body != body.upper() and body != body.lower()
    assert not Web3.is_checksum_address(flipped)
