"""Free loopback ports for the private servers and the tests (wallet_app/dev/anvil.py,
tools/pgserver.py, tools/redisserver.py, tests/e2e/helpers.py). Standard library only: `make redis`
runs tools/redisserver.py with the system's python3."""

from __future__ import annotations

import os
import random
import socket

# "LOW-HIGH": free_port() draws from these ports only. `make test` runs its two halves side by
# side and gives each its own range, so they never pick the same port (tools/side_by_side.py).
PORT_RANGE_ENV = "NEWBL_PORT_RANGE"
_handed_out: set[int] = set()


def _can_bind(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port free right now on 127.0.0.1, and never one handed out before in this process: a
    server binds its port only once it starts, so two picks in a row could get the same one (CI
    once gave an app and its own anvil the same port, and the app could not bind). Drawn from
    NEWBL_PORT_RANGE when it is set, else the OS picks."""
    bounds = os.environ.get(PORT_RANGE_ENV)
    low, high = (int(b) for b in bounds.split("-")) if bounds else (0, 0)
    for _ in range(10_000):
        if bounds:
            port = random.randint(low, high)
            if port in _handed_out or not _can_bind(port):
                continue
        else:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free port left ({PORT_RANGE_ENV}={bounds})")
