"""Waiting for a condition, never for a fixed time: the one polling wait of the unit, API and
contract tests (the browser tests wait with Playwright's expect)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], timeout: float = 10.0, what: str = "condition not met in time", interval: float = 0.01
) -> T:
    """condition()'s first true answer, asked every `interval` seconds; AssertionError `what` once
    `timeout` seconds have passed without one."""
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, what
        time.sleep(interval)  # polling interval, not a fixed wait
    return found
