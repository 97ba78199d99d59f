"""The websocket's limits (core/sockets.py) in-process: the token bucket, the open sockets counted
per client IP (as the API's limits count it, a trusted proxy's client included), a handshake over
the cap refused, a message over the rate closing the connection unread, and engine.io's message
size set from the settings; with REDIS_URL the cap counted over all workers (another worker played
by a second SharedOpenSockets on the same Redis), a dead worker's places freed when their leases
end, and each worker on its own while Redis is out. The real server's: tests/e2e/test_socket_limits.py."""

from __future__ import annotations

import logging
import warnings

import pytest
import redis
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

with warnings.catch_warnings():  # Starlette asks for `httpx2`; the pinned httpx works
    warnings.simplefilter("ignore", UserWarning)
    from starlette.testclient import TestClient

from tests.conftest import run_async, use_env
from tests.unit.test_config import _start
from tests.waits import wait_until
from tools.ports import free_port
from tools.redisserver import RedisServer
from wallet_app.api import build_api, in_front_of_reflex
from wallet_app.core import ratelimit, sockets
from wallet_app.core.config import BUILDING_ENV, Settings, get_settings
from wallet_app.core.sockets import OpenSockets, SharedOpenSockets, SocketLimits, TokenBucket


def use(monkeypatch, **env: str) -> None:
    use_env(monkeypatch, **env)
    monkeypatch.setattr(sockets, "_warned", {})  # each test's warnings are its own
    monkeypatch.setattr(sockets._shared_outage, "down", None)
    monkeypatch.setattr(ratelimit._limits_outage, "down", None)


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


def event(text: str) -> str:
    """A frame as Reflex's page sends an event."""
    return f'42/_event,["event",{{"name":"{text}"}}]'


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
                    ws.send_text(event("hi"))
                    assert ws.receive_text() == "ok " + event("hi")
            # `second` is closed (its app has ended): its place is free, and only its
            with c.websocket_connect("/_event") as third:
                third.send_text(event("again"))
                assert third.receive_text() == "ok " + event("again")
                assert refused(c) == 1008
                with TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.9", 1)) as other:
                    with other.websocket_connect("/_event"):  # another IP has its own count
                        assert sockets.open_sockets.counts == {"192.0.2.1": 2, "192.0.2.9": 1}
    assert sockets.open_sockets.counts == {}
    assert seen == [event("hi"), event("hi"), "websocket.disconnect", event("again")] + ["websocket.disconnect"] * 3
    # Two refusals of that IP within the minute: one warning.
    assert caplog.messages == ["websocket from 192.0.2.1 refused: SOCKET_MAX_PER_IP open in this worker"]


def test_new_websockets_of_one_ip_are_rate_limited(settings_env, monkeypatch, caplog):
    use(monkeypatch, RATE_LIMIT_SOCKET_OPEN="2/minute")
    with caplog.at_level("WARNING", logger="wallet_app.core.sockets"), \
            TestClient(SocketLimits(socket_app([])), client=("192.0.2.6", 1)) as c:
        for _ in range(2):
            with c.websocket_connect("/_event") as ws:  # opened and closed: the cap alone would let it go on
                ws.send_text(event("x"))
                assert ws.receive_text() == "ok " + event("x")
        assert refused(c) == 1008
        with TestClient(SocketLimits(socket_app([])), client=("192.0.2.7", 1)) as other:
            with other.websocket_connect("/_event"):  # another IP has its own count
                pass
    assert caplog.messages == ["websocket from 192.0.2.6 refused: over RATE_LIMIT_SOCKET_OPEN"]
    assert sockets.open_sockets.counts == {}


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
                ws.send_text(event(text))
                assert ws.receive_text() == "ok " + event(text)
            ws.send_text(event("d"))
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == 1008
    assert seen == [event("a"), event("b"), event("c"), "websocket.disconnect"]  # "d" never reached the app
    assert caplog.messages == ["websocket from 192.0.2.3 closed: over SOCKET_EVENT_BURST/SOCKET_EVENT_RATE"]
    assert sockets.open_sockets.counts == {}


PAGE_FRAMES = [
    "3",  # the answer to the server's ping
    '40/_event,{"token":"t","event":{"name":"reflex___state____state.hydrate_and_load"}}',
    "40/_event,",
    event("x"),
    '42/_event,["ping"]',
    '42/_event,["client_error",{"message":"m"}]',
    "41/_event,",
]


@pytest.mark.parametrize("frame", [
    '42/_event,["event","' + "x" * 1000 + '"]',  # event data as a string: Reflex logs it whole
    '42/_event,["event",["x"]]',
    '42/_event,["other",{}]',
    '42/_event, ["event",{}]',
    "4hello",
    '40/_other,{"token":"t"}',
    "",
])
def test_a_frame_the_page_never_sends_closes_the_connection_unread(settings_env, monkeypatch, caplog, frame):
    use(monkeypatch)
    seen: list[str] = []
    with caplog.at_level("WARNING", logger="wallet_app.core.sockets"), \
            TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.4", 1)) as c:
        with c.websocket_connect("/_event") as ws:
            for good in PAGE_FRAMES:  # what the page sends passes
                ws.send_text(good)
                assert ws.receive_text() == "ok " + good
            ws.send_text(frame)
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == 1008
    assert seen == [*PAGE_FRAMES, "websocket.disconnect"]
    assert caplog.messages == ["websocket from 192.0.2.4 closed: a frame the page never sends"]


def test_a_binary_frame_closes_the_connection_unread(settings_env, monkeypatch):
    use(monkeypatch)
    seen: list[str] = []
    with TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.4", 1)) as c, c.websocket_connect("/_event") as ws:
        ws.send_bytes(b"\x04" + b"x" * 100)
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 1008
    assert seen == ["websocket.disconnect"]


def test_the_app_sees_only_the_headers_it_reads_each_cut_short(settings_env, monkeypatch):
    use(monkeypatch)
    headers: list[dict[str, str]] = []

    async def endpoint(websocket: WebSocket) -> None:
        headers.append(dict(websocket.headers))
        await websocket.accept()
        await websocket.close()

    app = Starlette(routes=[WebSocketRoute("/_event", endpoint)])
    sent = {"Accept-Language": "ko", "User-Agent": "u" * 5000, "X-Padding": "p" * 100_000, "Referer": "https://x/"}
    with TestClient(SocketLimits(app), client=("192.0.2.5", 1)) as c, c.websocket_connect("/_event", headers=sent):
        pass
    (seen,) = headers
    assert seen["accept-language"] == "ko" and seen["user-agent"] == "u" * sockets.MAX_HEADER_CHARS
    assert "x-padding" not in seen and "referer" not in seen
    assert set(seen) <= {name.decode() for name in sockets.KEPT_HEADERS}


@pytest.fixture
def cut_log_lines():
    before = logging.getLogRecordFactory()
    sockets.cut_long_log_lines()
    sockets.cut_long_log_lines()  # once is enough: not wrapped twice
    yield
    logging.setLogRecordFactory(before)


@pytest.mark.parametrize("logger_name", ["reflex_base.event.processor.event_processor", "any.other"])
def test_a_clients_long_text_is_logged_cut_in_each_line(caplog, cut_log_lines, logger_name):
    """Whichever logger quotes what a client sent: Reflex's event processor logs an unknown event's
    payload whole, under a logger of its own."""
    logger = logging.getLogger(logger_name)
    data = "d" * 50_000
    try:
        raise ValueError(f"Failed to deserialize event data: {data}.")
    except ValueError:
        with caplog.at_level("WARNING", logger=logger_name):
            logger.warning("Received event data as a string. Event data: %s", data)
            logger.exception("event failed")
            logger.warning("%s short %s", "a", "b")
    first, second, third = caplog.records
    said = "Received event data as a string. Event data: "
    assert first.getMessage() == said + data[: 1000 - len(said)] + f"… ({len(said) + len(data)} characters)"
    assert "Failed to deserialize event data: ddd" in caplog.text and data not in caplog.text
    # each line: its record's prefix (level, logger, place) and at most MAX_LOGGED_LINE characters and the count
    assert max(len(line) for line in caplog.text.splitlines()) < sockets.MAX_LOGGED_LINE + 150
    assert second.exc_text.splitlines()[0] == "Traceback (most recent call last):"  # the traceback kept, its lines cut
    assert (third.msg, third.args, third.getMessage()) == ("%s short %s", ("a", "b"), "a short b")  # short: as it was


def test_engine_io_gets_the_message_size_from_the_settings(tmp_path):
    """engine.io's max_http_buffer_size closes a longer message (and is announced to the page)."""
    check = "import wallet_app.wallet_app as w; assert w.app.sio.eio.max_http_buffer_size == 123456"
    done = _start("-c", check, DEV_MODE="1", DATABASE_URL=f"sqlite:///{tmp_path / 'app.db'}",
                  SOCKET_MAX_MESSAGE_CHARS="123456", **{BUILDING_ENV: "1"})
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def redis_server():
    with RedisServer() as server:
        yield server


@pytest.fixture
def shared_count(settings_env, monkeypatch, redis_server) -> redis.Redis:
    """REDIS_URL on a Redis of this module's, emptied; a client to look into it."""
    use(monkeypatch, REDIS_URL=redis_server.url, SOCKET_MAX_PER_IP="3")
    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    return client


def places(client: redis.Redis, ip: str) -> dict[str, float]:
    """The places counted for `ip` in Redis: name -> when its lease ends (Redis's clock, ms)."""
    found = client.zrange(SharedOpenSockets.redis_key(ip), 0, -1, withscores=True)
    return {name.decode(): score for name, score in found}


def redis_now_ms(client: redis.Redis) -> float:
    seconds, micros = client.time()
    return seconds * 1000 + micros / 1000


def test_the_cap_counts_the_websockets_of_every_worker(shared_count, caplog):
    other_worker = SharedOpenSockets(get_settings().redis_url)

    async def other_claims(n: int) -> list[str | None]:
        return [await other_worker.claim("192.0.2.1", 3) for _ in range(n)]

    theirs = run_async(other_claims(2))
    assert all(theirs) and len(places(shared_count, "192.0.2.1")) == 2
    seen: list[str] = []
    with caplog.at_level("WARNING", logger="wallet_app.core.sockets"), \
            TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.1", 1)) as c:
        with c.websocket_connect("/_event") as ws:  # the IP's third, the first in this worker
            ws.send_text(event("hi"))
            assert ws.receive_text() == "ok " + event("hi")
            assert len(places(shared_count, "192.0.2.1")) == 3
            assert refused(c) == 1008  # though this worker has only one of the IP's open
            assert sockets.open_sockets.counts == {"192.0.2.1": 1}
            with TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.9", 1)) as other_ip:
                with other_ip.websocket_connect("/_event"):  # another IP has its own count
                    assert len(places(shared_count, "192.0.2.9")) == 1
            run_async(other_worker.release(theirs[0]))  # one closes in the other worker
            with c.websocket_connect("/_event"):
                assert run_async(other_claims(1)) == [None]  # now the other worker finds it full
        # Closed here (freed once the server has seen it go): the other worker's remaining one is counted.
        wait_until(lambda: list(places(shared_count, "192.0.2.1")) == [theirs[1]])
        wait_until(lambda: places(shared_count, "192.0.2.9") == {})
    assert sockets.open_sockets.counts == {}
    assert seen == [event("hi"), "websocket.disconnect", "websocket.disconnect", "websocket.disconnect"]
    assert caplog.messages == ["websocket from 192.0.2.1 refused: SOCKET_MAX_PER_IP open in all workers"]


def test_a_dead_workers_places_free_themselves_and_a_live_ones_are_renewed(shared_count, monkeypatch):
    monkeypatch.setattr(sockets, "SHARED_LEASE_SECONDS", 1.0)
    monkeypatch.setattr(sockets, "RENEW_EVERY_SECONDS", 0.2)
    dead_worker = SharedOpenSockets(get_settings().redis_url)

    async def dead_claims() -> list[str | None]:
        return [await dead_worker.claim("192.0.2.1", 3) for _ in range(3)]

    # Its event loop ends with run_async, and its renewals with it: as if the worker was killed.
    assert all(run_async(dead_claims()))
    with TestClient(SocketLimits(socket_app([])), client=("192.0.2.1", 1)) as c:
        assert refused(c) == 1008

        def accepted() -> bool:
            try:
                with c.websocket_connect("/_event"):
                    return True
            except WebSocketDisconnect:
                return False

        wait_until(accepted)  # once the dead worker's leases have ended
        with c.websocket_connect("/_event"):
            wait_until(lambda: len(places(shared_count, "192.0.2.1")) == 1)  # the one `accepted` closed, gone
            [(mine, first_end)] = places(shared_count, "192.0.2.1").items()
            # Renewed while open: still counted after its first lease has ended.
            wait_until(lambda: redis_now_ms(shared_count) > first_end + 300)
            assert places(shared_count, "192.0.2.1").keys() == {mine}
            assert places(shared_count, "192.0.2.1")[mine] > first_end
        wait_until(lambda: places(shared_count, "192.0.2.1") == {})


def test_while_redis_is_out_each_worker_keeps_to_the_cap_alone(settings_env, monkeypatch, caplog):
    use(monkeypatch, REDIS_URL=f"redis://127.0.0.1:{free_port()}/0", SOCKET_MAX_PER_IP="2")  # nothing listens
    seen: list[str] = []
    with caplog.at_level("WARNING", logger="wallet_app.core.sockets"), \
            TestClient(SocketLimits(socket_app(seen)), client=("192.0.2.1", 1)) as c:
        with c.websocket_connect("/_event") as first, c.websocket_connect("/_event"):
            first.send_text(event("hi"))
            assert first.receive_text() == "ok " + event("hi")
            assert refused(c) == 1008
            assert sockets.open_sockets.counts == {"192.0.2.1": 2}
    assert sockets.open_sockets.counts == {}
    assert caplog.messages == [
        # the new websockets' rate, then their count: each in the worker alone, each said once
        "rate limit storage unavailable; limits counted in each process until it answers",
        "websocket count storage unavailable; websockets counted in each worker only until it answers",
        "websocket from 192.0.2.1 refused: SOCKET_MAX_PER_IP open in this worker",
    ]
