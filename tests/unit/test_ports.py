"""tools/ports.py: a free loopback port, never the same twice in a run, from a range when given."""

import socket

import pytest

from tools import ports
from tools.ports import PORT_RANGE_ENV, free_port


def test_free_port_never_hands_out_a_port_twice(monkeypatch):
    monkeypatch.setattr(ports, "_handed_out", set())
    monkeypatch.delenv(PORT_RANGE_ENV, raising=False)
    picked = [free_port() for _ in range(200)]
    assert len(set(picked)) == 200


def test_free_port_keeps_to_its_range_and_skips_a_taken_port(monkeypatch):
    """Two test runs side by side with their own ranges never pick the same port."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        low = port - 5
        monkeypatch.setattr(ports, "_handed_out", set())
        monkeypatch.setenv(PORT_RANGE_ENV, f"{low}-{port}")
        free = {p for p in range(low, port) if ports._can_bind(p)}  # another process may hold some
        assert {free_port() for _ in free} == free
        with pytest.raises(RuntimeError, match=f"^no free port left \\({PORT_RANGE_ENV}={low}-{port}\\)$"):
            free_port()
