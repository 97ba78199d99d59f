"""The websocket's limits on the real server (core/sockets.py, engine.io's message size), with raw
websockets from this process (engine.io v4 frames) and a real page in Chromium:
- the SOCKET_MAX_PER_IP+1th websocket of one IP is refused (403) while the others stay open, and a
  closed one frees its place;
- a flood of events closes the connection (1008) before it is all answered;
- a message one character over SOCKET_MAX_MESSAGE_CHARS closes it, one of exactly that size does not;
- a person's page loads and navigation (sign-in, new wallet, /home, the bottom navigation, a
  reload) are never closed, under the default rate.

Without Redis one worker; with TEST_REDIS=1 two, which count together in Redis (the kernel picks
which worker takes each websocket, and the cap holds for the IP all the same). The cap test runs
first: the page's own websocket counts too."""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
import websockets
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS, RESULTS_DIR, own_app_server
from tests.e2e.flows import create_wallet, new_email
from wallet_app.core.config import Settings

MAX_PER_IP = 3
MAX_MESSAGE = Settings.model_fields["socket_max_message_chars"].default  # the shipped defaults
BURST = Settings.model_fields["socket_event_burst"].default
FLOOD = 300
NAMESPACE = "/_event"
PING = f'42{NAMESPACE},["ping"]'  # Reflex's ping event: the server answers PONG
PONG = f'42{NAMESPACE},["ping","pong"]'
WAIT_S = 15.0  # how long a frame or a close may take to come (a bound, not a pause)
# The close code of every websocket of the page (the SOCKET_WATCH of helpers keeps the sockets).
CLOSE_WATCH = """
window.__nbCloseCodes = [];
const WatchedWebSocket = window.WebSocket;
window.WebSocket = class extends WatchedWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener("close", (e) => window.__nbCloseCodes.push(e.code));
  }
};
"""


@pytest.fixture(scope="module")
def limited_server(tmp_path_factory):
    redis_url = os.environ.get("REDIS_URL", "")
    if redis_url:  # TEST_REDIS=1: a database of its own (the run's other servers count this IP's pages too)
        redis_url = redis_url.rsplit("/", 1)[0] + "/3"
        redis.Redis.from_url(redis_url).flushdb()
    env = {"SOCKET_MAX_PER_IP": str(MAX_PER_IP), "REDIS_URL": redis_url}
    with own_app_server(tmp_path_factory.mktemp("e2e-sockets"), "sockets", env) as server:
        yield server


def run(coroutine):
    """The coroutine on an event loop of its own thread (Playwright's sync API may hold this one's)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def open_socket(server) -> tuple[websockets.ClientConnection, dict]:
    """A new websocket (a new client token) as the page opens it; with engine.io's handshake."""
    ws = await websockets.connect(
        f"ws://127.0.0.1:{server.port}{NAMESPACE}/?token={uuid.uuid4()}&EIO=4&transport=websocket",
        additional_headers={"Origin": server.base_url},
        compression=None,
        max_size=None,
        open_timeout=WAIT_S,
    )
    opened = str(await asyncio.wait_for(ws.recv(), WAIT_S))
    assert opened.startswith("0"), opened
    return ws, json.loads(opened[1:])


async def connected(server) -> websockets.ClientConnection:
    """A websocket with socket.io's namespace connected (no hydrate: no page state is loaded)."""
    ws, _ = await open_socket(server)
    await ws.send(f"40{NAMESPACE},")
    assert (await next_frame(ws)).startswith(f"40{NAMESPACE},")
    return ws


async def next_frame(ws) -> str:
    """The next frame that is not engine.io's ping (answered, as the page does)."""
    while (frame := str(await asyncio.wait_for(ws.recv(), WAIT_S))) == "2":
        await ws.send("3")
    return frame


async def pong(ws) -> None:
    await ws.send(PING)
    assert await next_frame(ws) == PONG


async def close_code(ws) -> int | None:
    """Reads until the server closes the connection; its close code."""
    with pytest.raises(websockets.ConnectionClosed):
        while True:
            await next_frame(ws)
    return ws.close_code


def test_the_next_websocket_of_an_ip_is_refused_until_one_closes(limited_server):
    async def check(sockets: list) -> None:
        sockets += [await connected(limited_server) for _ in range(MAX_PER_IP)]
        with pytest.raises(websockets.InvalidStatus) as refused:
            await open_socket(limited_server)
        assert refused.value.response.status_code == 403
        for ws in sockets:  # the open ones work on
            await pong(ws)
        await sockets.pop().close()
        # Its place is free once the server has seen it go (a moment after the close handshake).
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_S
        while True:
            try:
                ws, _ = await open_socket(limited_server)
                break
            except websockets.InvalidStatus as e:
                assert e.response.status_code == 403 and loop.time() < deadline
        sockets.append(ws)
        with pytest.raises(websockets.InvalidStatus):
            await open_socket(limited_server)  # full again

    async def closing_all() -> None:
        sockets: list = []
        try:
            await check(sockets)
        finally:
            for ws in sockets:
                await ws.close()

    run(closing_all())


def test_a_flood_of_events_closes_the_connection(limited_server):
    async def check() -> tuple[int | None, int]:
        ws = await connected(limited_server)
        await pong(ws)
        try:
            for _ in range(FLOOD):
                await ws.send(PING)
        except websockets.ConnectionClosed:  # closed while still sending
            pass
        pongs = 0
        with pytest.raises(websockets.ConnectionClosed):
            while True:
                assert await next_frame(ws) == PONG
                pongs += 1
        return ws.close_code, pongs

    code, pongs = run(check())
    # The server logs why, then closes with 1008. A client still sending may see its connection reset
    # (1006) instead: the server drops it with the flood unread, and the reset can beat the close frame.
    log = (RESULTS_DIR / "e2e-sockets-app-server.log").read_text()
    assert "closed: over SOCKET_EVENT_BURST/SOCKET_EVENT_RATE" in log
    assert code in (1008, 1006), code
    assert pongs < FLOOD / 2, pongs  # about the burst was answered, not the flood


def test_a_message_over_the_size_closes_the_connection(limited_server):
    def padded(size: int) -> str:
        """An event as the page frames one, of no handler, `size` characters long."""
        head = f'42{NAMESPACE},["event",{{"x":"'
        return head + "x" * (size - len(head) - 3) + '"}]'

    async def check() -> None:
        ws, opened = await open_socket(limited_server)
        assert opened["maxPayload"] == MAX_MESSAGE  # engine.io tells the page
        await ws.send(f"40{NAMESPACE},")
        await next_frame(ws)
        await ws.send(padded(MAX_MESSAGE))
        await pong(ws)  # exactly the limit: read, and the connection works on
        await ws.send(padded(MAX_MESSAGE + 1))
        assert await close_code(ws) == 1000  # engine.io's own close

    run(check())


def test_a_frame_the_page_never_sends_closes_the_connection_unlogged(limited_server):
    """Event data as a string: Reflex would log it whole, twice (about 800 kB of log a frame). An
    event framed as the page frames one, of a handler that does not exist, is logged by Reflex's
    event processor with its payload: each log line is cut."""
    junk, payload = "J7" * 50_000, "K9" * 50_000
    log = RESULTS_DIR / "e2e-sockets-app-server.log"

    async def check() -> None:
        ws, _ = await open_socket(limited_server)
        await ws.send(f"40{NAMESPACE},")
        await next_frame(ws)
        await ws.send(f'42{NAMESPACE},["event","{junk}"]')
        assert await close_code(ws) == 1008
        ws, _ = await open_socket(limited_server)  # the server works on
        await ws.send(f"40{NAMESPACE},")
        await next_frame(ws)
        await pong(ws)
        await ws.send(f'42{NAMESPACE},["event",{{"name":"no_such.handler","payload":{{"p":"{payload}"}}}}]')
        await pong(ws)
        await ws.close()

    run(check())
    deadline = time.monotonic() + WAIT_S
    while "no_such.handler" not in (text := log.read_text()):
        assert time.monotonic() < deadline, "the unknown handler's event was never logged"
        time.sleep(0.05)  # polling interval, not a fixed wait
    # Counted, not searched for in a run: Reflex's console wraps a long line at 80 columns.
    assert text.count("J7") == 0 and text.count("K9") < 1000


def test_page_loads_and_navigation_are_never_closed(browser, limited_server):
    with helpers.mobile_page(browser, limited_server.base_url, DEFAULT_TIMEOUT_MS) as page:
        page.add_init_script(helpers.SOCKET_WATCH)
        page.add_init_script(CLOSE_WATCH)
        sent: list[str] = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload))))
        create_wallet(page, new_email("sockets"))  # sign-in, onboarding, /home: full page loads
        nav = page.get_by_role("navigation", name="Main")
        for name in ("Activity", "Card", "Settings", "Home"):  # in-page navigation, one websocket
            nav.get_by_role("link", name=name).click()
            expect(nav.get_by_role("link", name=name)).to_have_attribute("aria-current", "page")
        assert page.evaluate("() => [window.__nbSockets.length, window.__nbCloseCodes]") == [1, []]
        sent.clear()
        page.reload()
        page.wait_for_function("() => window.__nbSockets.length === 1 && window.__nbSockets[0].hydrated")
        expect(nav.get_by_role("link", name="Home")).to_have_attribute("aria-current", "page")
        assert page.evaluate("() => window.__nbCloseCodes") == []
        events = [f for f in sent if f.startswith(("40", "42"))]
        assert 0 < len(events) < BURST / 2, events  # a page load is far from the burst
