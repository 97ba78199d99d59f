"""core/proxy.py: which forwarded client and scheme are believed (table tests), and the scope the
app behind the middleware sees, for HTTP and websockets."""

import warnings

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from wallet_app.core.config import get_settings, parse_networks

with warnings.catch_warnings():  # Starlette asks for `httpx2`; the pinned httpx works
    warnings.simplefilter("ignore", UserWarning)
    from starlette.testclient import TestClient
from wallet_app.core.proxy import ForwardedFrom, forwarded_client, forwarded_scheme

NETS = parse_networks("10.0.0.0/8, 2001:db8::/32, 127.0.0.1")


@pytest.mark.parametrize(
    "peer,header,client",
    [
        ("10.0.0.5", "198.51.100.1", "198.51.100.1"),
        ("10.0.0.5", "192.0.2.7, 198.51.100.1", "198.51.100.1"),  # the client's own entry is left of ours
        ("10.0.0.5", "198.51.100.1, 10.9.9.9", "198.51.100.1"),  # through two of our proxies
        ("10.0.0.5", "10.1.1.1, 10.9.9.9", "10.1.1.1"),  # every hop ours: the first
        ("10.0.0.5", " 2001:DB9::1 ", "2001:db9::1"),
        ("10.0.0.5", "198.51.100.1, not-an-ip", None),  # garbage from our proxy: keep the peer
        ("10.0.0.5", "", None),
        ("10.0.0.5", None, None),
        ("203.0.113.9", "198.51.100.1", None),  # not our proxy
        ("testclient", "198.51.100.1", None),  # not even an IP
        ("127.0.0.1", "198.51.100.1", "198.51.100.1"),
        # With the client's port, as some proxies write it (Azure's Application Gateway).
        ("10.0.0.5", "198.51.100.1:5123", "198.51.100.1"),
        ("10.0.0.5", "[2001:DB9::1]:5123, 10.9.9.9:443", "2001:db9::1"),
        ("10.0.0.5", "[2001:db9::1]", "2001:db9::1"),
        ("10.0.0.5", "198.51.100.1, 10.9.9.9:80", "198.51.100.1"),  # our proxy's own entry with a port
        ("10.0.0.5", "198.51.100.1:", None),
        ("10.0.0.5", "198.51.100.1:x", None),
        ("10.0.0.5", "[2001:db9::1]5123", None),
        ("10.0.0.5", "[2001:db9::1", None),
        ("10.0.0.5", "[198.51.100.1]:1:2", None),
    ],
)
def test_forwarded_client(peer, header, client):
    assert forwarded_client(peer, header, NETS) == client


def test_nothing_is_believed_without_trusted_proxies():
    assert forwarded_client("10.0.0.5", "198.51.100.1", ()) is None
    assert forwarded_scheme("10.0.0.5", "https", ()) is None


@pytest.mark.parametrize(
    "peer,header,scheme",
    [
        ("10.0.0.5", "https", "https"),
        ("10.0.0.5", "HTTP", "http"),
        ("10.0.0.5", "http, https", "https"),  # the nearest proxy's word is the last
        ("10.0.0.5", "gopher", None),
        ("10.0.0.5", None, None),
        ("203.0.113.9", "https", None),
    ],
)
def test_forwarded_scheme(peer, header, scheme):
    assert forwarded_scheme(peer, header, NETS) == scheme


@pytest.mark.parametrize("spec", ["10.0.0.1/33", "proxy.local", "10.0.0.1;10.0.0.2"])
def test_malformed_networks_are_named(spec):
    with pytest.raises(ValueError, match="not an IP address or CIDR network"):
        parse_networks(spec)


def _echo_app() -> ForwardedFrom:
    async def http(request: Request) -> JSONResponse:
        return JSONResponse({"client": request.client.host if request.client else None, "scheme": request.url.scheme})

    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_json({"client": websocket.client.host if websocket.client else None,
                                   "scheme": websocket.url.scheme})
        await websocket.close()

    return ForwardedFrom(Starlette(routes=[Route("/", http), WebSocketRoute("/ws", ws)]))


@pytest.fixture
def trusted(monkeypatch):
    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.0/8")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_the_app_sees_the_forwarded_client_and_scheme(settings_env, trusted):
    headers = {"X-Forwarded-For": "192.0.2.7, 198.51.100.1", "X-Forwarded-Proto": "https"}
    with TestClient(_echo_app(), client=("10.0.0.5", 1)) as c:
        assert c.get("/", headers=headers).json() == {"client": "198.51.100.1", "scheme": "https"}
        with c.websocket_connect("/ws", headers=headers) as ws:
            assert ws.receive_json() == {"client": "198.51.100.1", "scheme": "wss"}
    with TestClient(_echo_app(), client=("203.0.113.9", 1)) as c:  # not a trusted peer
        assert c.get("/", headers=headers).json() == {"client": "203.0.113.9", "scheme": "http"}
        with c.websocket_connect("/ws", headers=headers) as ws:
            assert ws.receive_json() == {"client": "203.0.113.9", "scheme": "ws"}


def test_forwarded_headers_without_trusted_proxies_are_ignored_with_one_warning(settings_env, caplog):
    headers = {"X-Forwarded-For": "198.51.100.1", "X-Forwarded-Proto": "https"}
    with caplog.at_level("WARNING", logger="wallet_app.core.proxy"), \
            TestClient(_echo_app(), client=("127.0.0.1", 1)) as c:
        assert c.get("/").json() == {"client": "127.0.0.1", "scheme": "http"}
        assert caplog.messages == []  # no forwarded header: nothing to say
        for _ in range(3):
            assert c.get("/", headers=headers).json() == {"client": "127.0.0.1", "scheme": "http"}
    assert caplog.messages == [
        "X-Forwarded-For from 127.0.0.1 ignored: TRUSTED_PROXIES is empty. Behind a reverse proxy set it to the "
        "proxy's address (README, Deploying), or every client counts as the proxy's IP."]
