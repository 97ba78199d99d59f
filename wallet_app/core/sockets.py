"""Abuse limits of Reflex's websocket (/_event, socket.io over engine.io), the one way in that the
API's rate limits and body limit do not cover, as one ASGI middleware on the websocket scope.

- Per worker, at most SOCKET_MAX_PER_IP open websockets per client IP, counted as the API's limits
  count it (ratelimit.client_key, after proxy.ForwardedFrom): each one is a client token whose
  state Reflex keeps. A handshake over it is refused (closed before accept: HTTP 403).
- Per connection, a token bucket of SOCKET_EVENT_BURST messages refilled at SOCKET_EVENT_RATE a
  second: each event loads, runs and stores a client's state (a worker's CPU). A message over it
  closes the connection (1008, policy violation) and never reaches Reflex.

The size of one message is engine.io's own limit (its max_http_buffer_size, set from
SOCKET_MAX_MESSAGE_CHARS in wallet_app.py): it closes the connection, and tells the page the
limit in its handshake.
"""

from __future__ import annotations

import logging
import time

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wallet_app.core.config import get_settings
from wallet_app.core.ratelimit import client_key

log = logging.getLogger(__name__)

POLICY_VIOLATION = 1008  # websocket close code (RFC 6455 section 7.4.1)
WARN_EVERY_SECONDS = 60.0  # per client: a flood must not flood the log too
WARNED_KEPT = 10_000


class TokenBucket:
    """`burst` tokens, refilled at `rate` a second up to `burst`; a message takes one."""

    __slots__ = ("at", "burst", "rate", "tokens")

    def __init__(self, rate: float, burst: float, now: float):
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.at = now

    def take(self, now: float) -> bool:
        """One token if there is one (True), else False (none taken). `now`: time.monotonic()."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class OpenSockets:
    """The open websockets per client key, in this worker (one event loop: no lock)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, key: str, cap: int) -> bool:
        """Counts one more for `key`; False (not counted) when it has `cap` open already."""
        n = self.counts.get(key, 0)
        if n >= cap:
            return False
        self.counts[key] = n + 1
        return True

    def remove(self, key: str) -> None:
        n = self.counts[key] - 1
        if n:
            self.counts[key] = n
        else:
            del self.counts[key]


open_sockets = OpenSockets()
_warned: dict[tuple[str, str], float] = {}  # (message, client key) -> time.monotonic() of its last warning


def _warn(message: str, client: str) -> None:
    """`message` (with %s for the client) at most once a minute per client."""
    now = time.monotonic()
    if now - _warned.get((message, client), -WARN_EVERY_SECONDS) < WARN_EVERY_SECONDS:
        return
    if len(_warned) >= WARNED_KEPT:
        _warned.clear()
    _warned[(message, client)] = now
    log.warning(message, client)


class SocketLimits:
    """ASGI middleware: the limits above on every websocket (Reflex's /_event is the only one);
    every other request passes untouched. Installed after ForwardedFrom (api.build_api), so it
    counts the client a trusted proxy names."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        settings = get_settings()
        client = client_key(HTTPConnection(scope))
        if not open_sockets.add(client, settings.socket_max_per_ip):
            _warn("websocket from %s refused: SOCKET_MAX_PER_IP open in this worker", client)
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": POLICY_VIOLATION})
            return
        bucket = TokenBucket(settings.socket_event_rate, settings.socket_event_burst, time.monotonic())
        closed = False

        async def limited_receive() -> Message:
            nonlocal closed
            if closed:
                return {"type": "websocket.disconnect", "code": POLICY_VIOLATION}
            message = await receive()
            if message["type"] == "websocket.receive" and not bucket.take(time.monotonic()):
                closed = True
                _warn("websocket from %s closed: over SOCKET_EVENT_BURST/SOCKET_EVENT_RATE", client)
                await send({"type": "websocket.close", "code": POLICY_VIOLATION})
                # The app sees the client gone (engine.io and Reflex clean up as for any disconnect).
                return {"type": "websocket.disconnect", "code": POLICY_VIOLATION}
            return message

        async def guarded_send(message: Message) -> None:
            if not closed:  # after our close, the app's last frames and its own close go nowhere
                await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        finally:
            open_sockets.remove(client)
