"""helpers.close_context: a context close that never returns is bounded, and pytest-timeout's
per-test timer (the same SIGALRM) keeps running afterwards."""

from __future__ import annotations

import signal
import time

import pytest

from tests.e2e import helpers


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
