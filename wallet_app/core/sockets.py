"""Abuse limits of Reflex's websocket (/_event, socket.io over engine.io), the one way in that the
API's rate limits and body limit do not cover, as one ASGI middleware on the websocket scope.

- At most SOCKET_MAX_PER_IP open websockets per client IP, counted as the API's limits count it
  (ratelimit.client_key, after proxy.ForwardedFrom): each one is a client token whose state Reflex
  keeps. A handshake over it is refused (closed before accept: HTTP 403). Each worker counts its
  own; with REDIS_URL the workers also count together (SharedOpenSockets), so that the cap holds
  for the IP whichever worker takes each websocket. While Redis does not answer, each worker
  keeps to the cap on its own.
- At most RATE_LIMIT_SOCKET_OPEN new websockets per client IP (core.ratelimit, shared by the
  workers with REDIS_URL): Reflex keeps a page state for each one's client token for an hour, so
  a client opening and dropping websockets fills Redis (or the disk) without the cap above.
- Per connection, a token bucket of SOCKET_EVENT_BURST messages refilled at SOCKET_EVENT_RATE a
  second: each event loads, runs and stores a client's state (a worker's CPU). A message over it
  closes the connection (1008, policy violation) and never reaches Reflex.

- Per connection, only the frames Reflex's page sends (PAGE_FRAMES): any other closes the
  connection (1008) unread. Reflex logs a malformed event's data whole, in a warning and again in
  a traceback: one frame of a few hundred kB made about 800 kB of log. A well-formed event can
  still be logged (an unknown handler's name): cut_long_log_lines bounds every log line.
- Per connection, only the request headers Reflex and engine.io use (KEPT_HEADERS), each cut to
  MAX_HEADER_CHARS: Reflex keeps a connection's headers in its client's state (in Redis, for an
  hour), and a client may send about 400 kB of them.

The size of one message is engine.io's own limit (its max_http_buffer_size, set from
SOCKET_MAX_MESSAGE_CHARS in wallet_app.py): it closes the connection, and tells the page the
limit in its handshake.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

from redis import RedisError
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wallet_app.core import ratelimit, shared
from wallet_app.core.config import Settings, get_settings
from wallet_app.core.ratelimit import Outage, client_key
from wallet_app.errors import AppError

log = logging.getLogger(__name__)

POLICY_VIOLATION = 1008  # websocket close code (RFC 6455 section 7.4.1)
WARN_EVERY_SECONDS = 60.0  # per client: a flood must not flood the log too
WARNED_KEPT = 10_000


# What Reflex's page sends on its websocket (engine.io 4, socket.io 5, namespace /_event): the
# answer to the server's ping, the namespace's connect (carrying the hydrate) and disconnect, and
# its three events (socket.io-client writes them with JSON.stringify: no spaces).
_PAGE_FRAMES_EXACT = frozenset({"2", "3", "40/_event", "40/_event,", "41/_event", "41/_event,"})
_PAGE_FRAME_PREFIXES = (
    "40/_event,{",
    '42/_event,["event",{',
    '42/_event,["ping"',
    '42/_event,["client_error",{',
)


def is_page_frame(message: Message) -> bool:
    """A websocket.receive message holding a frame Reflex's page sends."""
    text = message.get("text")
    return isinstance(text, str) and (text in _PAGE_FRAMES_EXACT or text.startswith(_PAGE_FRAME_PREFIXES))


# The request headers Reflex (its router data, the session's cookie and language) and engine.io (the
# origin check) read from a websocket's handshake; the client's address is already in the scope
# (proxy.ForwardedFrom runs first).
KEPT_HEADERS = frozenset(
    {
        b"host",
        b"origin",
        b"cookie",
        b"user-agent",
        b"accept-language",
        b"accept-encoding",
        b"upgrade",
        b"connection",
        b"pragma",
        b"cache-control",
        b"sec-websocket-key",
        b"sec-websocket-version",
        b"sec-websocket-extensions",
        b"sec-websocket-protocol",
    }
)
MAX_HEADER_CHARS = 512


def kept_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(k, v[:MAX_HEADER_CHARS]) for k, v in headers if k in KEPT_HEADERS]


MAX_LOGGED_LINE = 1000


def _cut_lines(text: str) -> str:
    lines = text.split("\n")
    if all(len(line) <= MAX_LOGGED_LINE for line in lines):
        return text
    return "\n".join(
        line if len(line) <= MAX_LOGGED_LINE else f"{line[:MAX_LOGGED_LINE]}… ({len(line)} characters)"
        for line in lines
    )


def _cutting(factory: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            message = record.getMessage()
            short = _cut_lines(message)
            if short is not message:
                record.msg, record.args = short, None
            if record.exc_info:
                record.exc_text = _cut_lines(logging.Formatter().formatException(record.exc_info))
        except Exception:  # noqa: BLE001 - a record the logging module reports itself (handleError)
            pass
        return record

    make.cuts_lines = True  # type: ignore[attr-defined]
    return make


def cut_long_log_lines() -> None:
    """Every log record of this process has each line of its message and traceback cut to
    MAX_LOGGED_LINE characters: Reflex, its event processor and socket.io log what a client sent
    (an event's data, whole, up to SOCKET_MAX_MESSAGE_CHARS) in warnings and tracebacks, under
    loggers of their own. A record factory, not a filter: a filter holds for its own logger only."""
    factory = logging.getLogRecordFactory()
    if not getattr(factory, "cuts_lines", False):
        logging.setLogRecordFactory(_cutting(factory))


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

# A worker that ends without closing its websockets (killed, out of memory) renews nothing: their
# places in the shared count free themselves this long after its last renewal.
SHARED_LEASE_SECONDS = 60.0
RENEW_EVERY_SECONDS = SHARED_LEASE_SECONDS / 3
RENEW_BATCH = 500  # places renewed per script call

# Per client key a sorted set in Redis: one member per open websocket of any worker, scored with
# the time (Redis's clock, ms) its lease ends. Claiming drops the ended leases, then adds one if
# there is room, all as one script: two workers never both take the last place.
_CLAIM = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
# Extends the leases of places still held (XX: one released meanwhile is not added back).
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i, key in ipairs(KEYS) do
  if redis.call('ZADD', key, 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[i + 1]) == 1 then
    redis.call('PEXPIRE', key, ARGV[1])
  end
end
return 0
"""
_RELEASE = "return redis.call('ZREM', KEYS[1], ARGV[1])"


class SharedOpenSockets:
    """The open websockets per client key across all workers, in Redis (settings.redis_url). Each
    place is leased: this worker renews the leases of its open websockets every RENEW_EVERY_SECONDS,
    so those of a worker that died free themselves within SHARED_LEASE_SECONDS."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._names = (f"{uuid.uuid4().hex}:{n}" for n in itertools.count())  # unique across workers
        self.held: dict[str, str] = {}  # place -> client key: this worker's, to renew
        self._renewer: asyncio.Task | None = None

    @staticmethod
    def redis_key(client: str) -> str:
        return "nb:sockets:" + client

    async def claim(self, client: str, cap: int) -> str | None:
        """A place for one more websocket of `client` (its name), or None when `client` has `cap`
        open across the workers. RedisError when Redis does not answer."""
        self._keep_renewing()
        place = next(self._names)
        lease_ms = int(SHARED_LEASE_SECONDS * 1000)
        if not await shared.run_script_async(self.url, _CLAIM, [self.redis_key(client)], [place, cap, lease_ms]):
            return None
        self.held[place] = client
        return place

    async def release(self, place: str) -> None:
        client = self.held.pop(place)
        await shared.run_script_async(self.url, _RELEASE, [self.redis_key(client)], [place])

    async def renew(self) -> None:
        held = list(self.held.items())
        lease_ms = int(SHARED_LEASE_SECONDS * 1000)
        for start in range(0, len(held), RENEW_BATCH):
            batch = held[start : start + RENEW_BATCH]
            keys = [self.redis_key(client) for _, client in batch]
            await shared.run_script_async(self.url, _RENEW, keys, [lease_ms, *(place for place, _ in batch)])

    def _keep_renewing(self) -> None:
        """One renewing task on this event loop (a worker has one; the tests start several)."""
        loop = asyncio.get_running_loop()
        if self._renewer is None or self._renewer.done() or self._renewer.get_loop() is not loop:
            self._renewer = loop.create_task(self._renew_forever())

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(RENEW_EVERY_SECONDS)
            try:
                await self.renew()
            except RedisError:
                # The places stay counted until their leases end; a later renewal extends them again.
                _shared_outage.failed(get_settings())
            else:
                _shared_outage.answered()


_shared_outage = Outage("websocket count storage", "websockets counted in each worker only", log)
_shared_state: tuple[Settings, SharedOpenSockets] | None = None


def shared_open_sockets(settings: Settings) -> SharedOpenSockets | None:
    """The shared count of these settings (None without REDIS_URL)."""
    global _shared_state
    if not settings.redis_url:
        return None
    if _shared_state is None or _shared_state[0] is not settings:
        _shared_state = (settings, SharedOpenSockets(settings.redis_url))
    return _shared_state[1]


async def claim_shared(counter: SharedOpenSockets, client: str, settings: Settings) -> str | Literal[False] | None:
    """The shared place of a new websocket of `client`: its name, False when the workers have
    SOCKET_MAX_PER_IP of `client`'s open, None while Redis is out (each worker keeps to the cap on
    its own meanwhile)."""
    if _shared_outage.skipping(settings):
        return None
    try:
        place = await counter.claim(client, settings.socket_max_per_ip)
    except RedisError:
        _shared_outage.failed(settings)
        return None
    _shared_outage.answered()
    return False if place is None else place


_releasing: set[asyncio.Task] = set()  # referenced until done (the loop keeps only weak references)


def release_shared(counter: SharedOpenSockets, place: str) -> None:
    """Frees the place in a task of its own, so that it is not lost when the connection's task is
    cancelled (a server that stops, a test client that closes)."""

    async def release() -> None:
        try:
            await counter.release(place)
        except RedisError:
            pass  # its lease ends by itself: no more renewals

    task = asyncio.get_running_loop().create_task(release())
    _releasing.add(task)
    task.add_done_callback(_releasing.discard)


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
        try:
            await asyncio.to_thread(ratelimit.hit, "socket_open", client)  # Redis's client blocks: a thread
        except AppError:
            _warn("websocket from %s refused: over RATE_LIMIT_SOCKET_OPEN", client)
            await self._refuse(receive, send)
            return
        if not open_sockets.add(client, settings.socket_max_per_ip):
            _warn("websocket from %s refused: SOCKET_MAX_PER_IP open in this worker", client)
            await self._refuse(receive, send)
            return
        counter = shared_open_sockets(settings)
        place = await claim_shared(counter, client, settings) if counter else None
        if place is False:
            open_sockets.remove(client)
            _warn("websocket from %s refused: SOCKET_MAX_PER_IP open in all workers", client)
            await self._refuse(receive, send)
            return
        bucket = TokenBucket(settings.socket_event_rate, settings.socket_event_burst, time.monotonic())
        closed = False

        async def limited_receive() -> Message:
            nonlocal closed
            if closed:
                return {"type": "websocket.disconnect", "code": POLICY_VIOLATION}
            message = await receive()
            if message["type"] != "websocket.receive":
                return message
            if not bucket.take(time.monotonic()):
                why = "over SOCKET_EVENT_BURST/SOCKET_EVENT_RATE"
            elif not is_page_frame(message):
                why = "a frame the page never sends"
            else:
                return message
            closed = True
            _warn(f"websocket from %s closed: {why}", client)
            await send({"type": "websocket.close", "code": POLICY_VIOLATION})
            # The app sees the client gone (engine.io and Reflex clean up as for any disconnect).
            return {"type": "websocket.disconnect", "code": POLICY_VIOLATION}

        async def guarded_send(message: Message) -> None:
            if not closed:  # after our close, the app's last frames and its own close go nowhere
                await send(message)

        try:
            await self.app({**scope, "headers": kept_headers(scope["headers"])}, limited_receive, guarded_send)
        finally:
            open_sockets.remove(client)
            if counter and place:
                release_shared(counter, place)

    @staticmethod
    async def _refuse(receive: Receive, send: Send) -> None:
        await receive()  # websocket.connect
        await send({"type": "websocket.close", "code": POLICY_VIOLATION})
