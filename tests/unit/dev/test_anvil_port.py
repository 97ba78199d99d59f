"""`make run` starts again right after a stop: anvil's port probe ignores TIME_WAIT connections
(SO_REUSEADDR) but still sees a listener."""

import socket

import pytest

from wallet_app.dev.anvil import Anvil, AnvilError, port_free


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
