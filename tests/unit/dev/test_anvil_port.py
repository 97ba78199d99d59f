"""`make run` starts again right after a stop: anvil's port probe ignores TIME_WAIT connections
(SO_REUSEADDR) but still sees a listener."""

import socket

import pytest

from wallet_app.dev import anvil
from wallet_app.dev.anvil import PORT_RANGE_ENV, Anvil, AnvilError, free_port, port_free


def plain_bind_fails(port: int) -> bool:
    """Without SO_REUSEADDR (the probe before commit aa817a7), a TIME_WAIT connection blocks the bind."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def test_time_wait_is_free_and_a_listener_is_not():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    assert not port_free(port)  # a live listener: in use
    client = socket.create_connection(("127.0.0.1", port))
    conn, _ = listener.accept()
    conn.close()  # the server side closes first: its end (local port = `port`) goes to TIME_WAIT
    assert client.recv(1) == b""  # the FIN arrived
    client.close()
    listener.close()
    assert plain_bind_fails(port), "no TIME_WAIT connection left on the port: the test proves nothing"
    assert port_free(port)


def test_start_refuses_a_port_with_a_listener():
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        with pytest.raises(AnvilError, match=f"^port {port} is in use$"):
            Anvil(port=port).start()


def test_free_port_never_hands_out_a_port_twice(monkeypatch):
    monkeypatch.setattr(anvil, "_handed_out", set())
    monkeypatch.delenv(PORT_RANGE_ENV, raising=False)
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == 200


def test_free_port_keeps_to_its_range_and_skips_a_taken_port(monkeypatch):
    """Two test runs side by side with their own ranges never pick the same port."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        low = port - 5
        monkeypatch.setattr(anvil, "_handed_out", set())
        monkeypatch.setenv(PORT_RANGE_ENV, f"{low}-{port}")
        free = {p for p in range(low, port) if not plain_bind_fails(p)}
        assert {free_port() for _ in free} == free
        with pytest.raises(AnvilError, match=f"^no free port left \\({PORT_RANGE_ENV}={low}-{port}\\)$"):
            free_port()
