"""The websocket's limits (core/sockets.py) in-process: the token bucket, the open sockets counted
per client IP (as the API's limits count it, a trusted proxy's client included), a handshake over
the cap refused, a message over the rate closing the connection unread, and engine.io's message
size set from the settings. The real server's: tests/e2e/test_socket_limits.py."""

from __future__ import annotations

import warnings

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

with warnings.catch_warnings():  # Starlette asks for `httpx2`; the pinned httpx works
    warnings.simplefilter("ignore", UserWarning)
    from starlette.testclient import TestClient

from tests.unit.test_config import _start
from wallet_app.api import build_api, in_front_of_reflex
from wallet_app.core import sockets
from wallet_app.core.config import BUILDING_ENV, Settings, get_settings
from wallet_app.core.sockets import OpenSockets, SocketLimits, TokenBucket


def use(monkeypatch, **env: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    monkeypatch.setattr(sockets, "_warned", {})  # each test's warnings are its own


def test_the_bucket_gives_its_burst_then_its_rate():
    bucket = TokenBucket(rate=2, burst=3, now=0.0)
    assert [bucket.take(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.take(0.25) is False  # half a token back: none taken
    assert bucket.take(0.5) is True  # one token back at 2 a second
    assert bucket.take(0.5) is False
    assert [bucket.take(100.0) for _ in range(4)] == [True, True, True, False]  # never more than the burst


def test_the_defaults_leave_room_for_a_page_load_and_typing():
    fields = Settings.model_fields
    assert fields["socket_event_burst"].default == 60 and fields["socket_event_rate"].default == 20
    assert fields["socket_max_per_ip"].default == 50
    # /sign's signed transaction (up to 100,002 characters) with its link twice (64,000 each).
    assert fields["socket_max_message_chars"].default == 500_000 > 100_002 + 2 * 64_000 + 10_000


def test_open_sockets_are_counted_per_client_up_to_the_cap():
    counts = OpenSockets()
    assert [counts.add("192.0.2.1", 2) for _ in range(3)] == [True, True, False]
    assert counts.add("192.0.2.2", 2) is True  # another client
    counts.remove("192.0.2.1")
    assert counts.add("192.0.2.1", 2) is True and counts.add("192.0.2.1", 2) is False
    for key in ("192.0.2.1", "192.0.2.1", "192.0.2.2"):
        counts.remove(key)
    assert counts.counts == {}


def socket_app(seen: list[str]) -> Starlette:
    """A websocket at /_event like engine.io's: accepts, answers each message, notes what reached it."""

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        while (message := await websocket.receive())["type"] == "websocket.receive":
            seen.append(message["text"])
            await websocket.send_text("ok " + message["text"])
        seen.append(message["type"])

    return Starlette(routes=[WebSocketRoute("/_event", endpoint), Route("/", lambda _: PlainTextResponse("plain"))])


def refused(client: TestClient, **kwargs) -> int:
    """The close code of a handshake the app refuses (AssertionError when it accepts)."""
    with pytest.raises(WebSocketDisconnect) as e, client.websocket_connect("/_event", **kwargs):
        pass
    return e.value.code


def test_the_websockets_of_one_ip_are_capped_and_a_closed_one_frees_its_place(settings_env, monkeypatch, caplog):
    use(monkeypatch, SOCKET_MAX_PER_IP="2")
    seen: list[str] = []
    with caplog.at_level("WARNING", logger="wallet_app.core.sockets"), \
            TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.1", 1)) as c:
        with c.websocket_connect("/_event") as first:
            with c.websocket_connect("/_event") as second:
                assert refused(c) == 1008
                assert sockets.open_sockets.counts == {"192.0.2.1": 2}
                for ws in (first, second):  # the two open ones work on
                    ws.send_text("hi")
                    assert ws.receive_text() == "ok hi"
            # `second` is closed (its app has ended): its place is free, and only its
            with c.websocket_connect("/_event") as third:
                third.send_text("again")
                assert third.receive_text() == "ok again"
                assert refused(c) == 1008
                with TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.9", 1)) as other:
                    with other.websocket_connect("/_event"):  # another IP has its own count
                        assert sockets.open_sockets.counts == {"192.0.2.1": 2, "192.0.2.9": 1}
    assert sockets.open_sockets.counts == {}
    assert seen == ["hi", "hi", "websocket.disconnect", "again"] + ["websocket.disconnect"] * 3
    # Two refusals of that IP within the minute: one warning.
    assert caplog.messages == ["websocket from 192.0.2.1 refused: SOCKET_MAX_PER_IP open in this worker"]


def test_http_passes_untouched(settings_env, monkeypatch):
    use(monkeypatch, SOCKET_MAX_PER_IP="1")
    with TestClient(SocketLimits(socket_app([])), client=("192.0.2.1", 1)) as c:
        assert [c.get("/").text for _ in range(3)] == ["plain"] * 3
    assert sockets.open_sockets.counts == {}


def test_an_ipv6_client_counts_by_its_64_and_a_proxy_by_the_client_it_names(settings_env, monkeypatch):
    """In the served stack (build_api with Reflex under it): after ForwardedFrom, so behind a
    trusted proxy each client has its own count, and the addresses of one /64 share one."""
    use(monkeypatch, SOCKET_MAX_PER_IP="1", TRUSTED_PROXIES="10.0.0.0/8")
    seen: list[str] = []
    served = in_front_of_reflex(build_api())(socket_app(seen))

    def forwarded(ip: str) -> dict:
        return {"headers": {"X-Forwarded-For": ip}}

    with TestClient(served, client=("10.0.0.5", 1)) as c:
        with c.websocket_connect("/_event", **forwarded("2001:db8:1:2::1")), \
                c.websocket_connect("/_event", **forwarded("198.51.100.7")), c.websocket_connect("/_event"):
            assert sockets.open_sockets.counts == {"2001:db8:1:2::/64": 1, "198.51.100.7": 1, "10.0.0.5": 1}
            assert refused(c, **forwarded("2001:db8:1:2:ffff::9")) == 1008  # the same /64
            assert refused(c, **forwarded("198.51.100.7")) == 1008
            assert refused(c) == 1008  # the proxy's own (nothing forwarded)
    assert sockets.open_sockets.counts == {}


def test_a_message_over_the_rate_closes_the_connection_unread(settings_env, monkeypatch, caplog):
    # A burst of 3 and a rate too slow to give one back during the test.
    use(monkeypatch, SOCKET_EVENT_BURST="3", SOCKET_EVENT_RATE="0.001")
    seen: list[str] = []
    with caplog.at_level("WARNING", logger="wallet_app.core.sockets"), \
            TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.3", 1)) as c:
        with c.websocket_connect("/_event") as ws:
            for text in ("a", "b", "c"):
                ws.send_text(text)
                assert ws.receive_text() == "ok " + text
            ws.send_text("d")
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == 1008
    assert seen == ["a", "b", "c", "websocket.disconnect"]  # "d" never reached the app
    assert caplog.messages == ["websocket from 192.0.2.3 closed: over SOCKET_EVENT_BURST/SOCKET_EVENT_RATE"]
    assert sockets.open_sockets.counts == {}


def test_engine_io_gets_the_message_size_from_the_settings(tmp_path):
    """engine.io's max_http_buffer_size closes a longer message (and is announced to the page)."""
    check = "import wallet_app.wallet_app as w; assert w.app.sio.eio.max_http_buffer_size == 123456"
    done = _start("-c", check, DEV_MODE="1", DATABASE_URL=f"sqlite:///{tmp_path / 'app.db'}",
                  SOCKET_MAX_MESSAGE_CHARS="123456", **{BUILDING_ENV: "1"})
    assert done.returncode == 0, done.stderr
