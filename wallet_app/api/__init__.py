"""The REST API (/api/v1) as a FastAPI app; Reflex mounts itself under it via api_transformer."""

import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wallet_app.api import (
    activity,
    assets,
    auth,
    backup,
    chains,
    docs,
    health,
    me,
    merchant,
    payment,
    tokens,
    tx,
)
from wallet_app.api.deps import API_PREFIX, SameOriginWrites, add_routes
from wallet_app.core import ratelimit
from wallet_app.core.proxy import ForwardedFrom
from wallet_app.core.sockets import SocketLimits
from wallet_app.core.startup import restore_recursion_limit
from wallet_app.errors import (
    AppError,
    database_trouble,
    node_trouble,
    node_trouble_line,
    outage_line,
    unexpected_code,
)
from wallet_app.services import sessions

log = logging.getLogger(__name__)

DATABASE_RETRY_SECONDS = 2  # Retry-After of database_unavailable: a restart or failover is seconds
# The largest /api/v1 body: the biggest a route takes is a signed transaction (tx.SubmitIn, 300,000 hex digits).
MAX_BODY_BYTES = 1_000_000


def body_over_limit() -> AppError:
    return AppError("invalid_request", "body over MAX_BODY_BYTES")  # like a body its route's schema refuses


def refusal_key(request: Request) -> tuple[str, str, str]:
    """What a rate_limited refusal is remembered by: the route and the session (else the IP). The
    session by its token's hash, as everywhere it is kept: with REDIS_URL this is a Redis key."""
    token = sessions.token_from_cookie_header(request.headers.get("cookie"))
    client = sessions.hash_token(token) if token else "ip:" + ratelimit.client_key(request)
    return (request.method, request.url.path, client)


def rate_limited_response(retry_after: int) -> JSONResponse:
    return JSONResponse({"detail": "rate_limited"}, status_code=429, headers={"Retry-After": str(retry_after)})


async def app_error_response(request: Request, exc: Exception) -> JSONResponse:
    """Every refused operation: {"detail": code} with the code's status (wallet_app.errors.REGISTRY);
    rate_limited and the payment quotas also say when to come back (Retry-After, integer seconds)."""
    assert isinstance(exc, AppError)
    if exc.code == "rate_limited":
        retry_after = int(exc.params.get("retry_after", 1))
        await ratelimit.remember_refusal(refusal_key(request), retry_after)
        return rate_limited_response(retry_after)
    # Other refusals that know when to come back (the payment quotas) say so too.
    retry = exc.params.get("retry_after")
    headers = {"Retry-After": str(int(retry))} if retry is not None else None
    return JSONResponse({"detail": exc.code}, status_code=exc.spec.status, headers=headers)


class RefuseWhileLimited:
    """Answers a request its route refused as rate_limited a moment ago with the same 429 at once,
    until Retry-After has passed (the limiter would refuse it too): a flood of refused requests
    then costs no session lookup, thread or route, and the other users' requests stay fast.

    Only the rate-limited routes (those documenting a 429, ratelimit.RESPONSE_429) are looked up:
    no other route is ever refused, so /me and the like cost no lookup (a Redis round trip with
    REDIS_URL)."""

    def __init__(self, app: ASGIApp, openapi: Callable[[], dict[str, Any]]):
        self.app = app
        self._openapi = openapi
        self._limited: list[tuple[str, re.Pattern[str]]] | None = None

    def limited(self, method: str, path: str) -> bool:
        if self._limited is None:  # from the OpenAPI document: every route is included by now
            self._limited = [
                (m.upper(), re.compile(re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(p)) + "$"))
                for p, operations in self._openapi()["paths"].items()
                for m, operation in operations.items()
                if "429" in operation.get("responses", {})
            ]
        return any(m == method and regex.match(path) for m, regex in self._limited)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"].startswith(API_PREFIX)
            and self.limited(scope["method"], scope["path"])
            and (wait := await ratelimit.refused_for(refusal_key(Request(scope))))
        ):
            await rate_limited_response(wait)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuses an /api/v1 request whose body is over MAX_BODY_BYTES (invalid_request, like a body its
    route's schema refuses) before anything holds it: Starlette reads a body whole into memory, and
    one request of 400 MB took a worker from 160 MB to 1.3 GB. A declared Content-Length is refused
    unread (the server passes on no more than it declares); a body without one (chunked) is counted
    as the route reads it, and refused at the first part past the limit. Not read ahead: most
    requests (every GET) have no body, and each receive() is a hop to the server's I/O thread and
    back (pre-reading it cost GET /api/v1/me a third of its throughput)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(API_PREFIX):
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is None:
            await self.app(scope, self.counted(receive), send)
        elif declared.isascii() and declared.isdigit() and int(declared) <= MAX_BODY_BYTES:
            await self.app(scope, receive, send)
        else:
            response = await app_error_response(Request(scope), body_over_limit())
            await response(scope, receive, send)

    @staticmethod
    def counted(receive: Receive) -> Receive:
        size = 0

        async def receive_counted() -> Message:
            nonlocal size
            message = await receive()
            size += len(message.get("body", b""))
            if size > MAX_BODY_BYTES:  # in FastAPI's body read: answered as a body it cannot parse
                raise body_over_limit()
            return message

        return receive_counted


class HeadAsGet:
    """Answers HEAD of an /api/v1 route as its GET without the body (RFC 9110 9.3.2): uptime
    monitors and some load balancers check /api/v1/health that way. FastAPI's routes take GET
    only, so HEAD fell through to the pages' mount under the API and got its 404 page."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD" or not scope["path"].startswith(API_PREFIX):
            await self.app(scope, receive, send)
            return

        async def send_without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}  # the headers (Content-Length too) stay the GET's
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_without_body)


async def validation_error_response(_request: Request, _exc: Exception) -> JSONResponse:
    """A body or parameter the route's schema refuses: one code like every other error (FastAPI's
    default answers a list of pydantic errors, which echo the input back)."""
    return await app_error_response(_request, AppError("invalid_request"))


async def http_error_response(request: Request, exc: Exception) -> Response:
    """FastAPI's own refusals. A body it could not parse (400: nested too deep, an integer of over
    4300 digits) answers invalid_request like one the schema refuses, not FastAPI's English
    sentence; the others (the docs' 404) as FastAPI answers them."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400:
        return await validation_error_response(request, exc)
    return await http_exception_handler(request, exc)


async def unexpected_error_response(request: Request, exc: Exception) -> JSONResponse:
    """Whatever no route turned into an AppError (Starlette's ServerErrorMiddleware logs it with
    its traceback after this answer): one code like every other error, never the exception's
    text. A database out of reach says when to come back."""
    code = unexpected_code(exc)
    if code == "database_unavailable":
        return await app_error_response(request, AppError(code, retry_after=DATABASE_RETRY_SECONDS))
    return await app_error_response(request, AppError(code))


OUTAGE_LOG_SECONDS = 60.0  # while the database is out of reach: at most one line this often per worker


class _OutageLog:
    """The requests answered database_unavailable: one warning line for the first and then at most
    one every OUTAGE_LOG_SECONDS with how many there were. Through unexpected_error_response each
    was logged by the server with its traceback (about 180 lines; a PostgreSQL restart under
    ordinary traffic wrote thousands of them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0.0  # time.monotonic() from which the next line may be written
        self._count = 0  # refused since the last line

    def refused(self, request: Request, exc: Exception) -> None:
        with self._lock:
            self._count += 1
            now = time.monotonic()
            if now < self._next:
                return
            count, self._count, self._next = self._count, 0, now + OUTAGE_LOG_SECONDS
        log.warning(
            "%s %s: out of reach (%s); %s request(s) answered 503 database_unavailable since the last such line",
            request.method,
            request.url.path,
            outage_line(exc),
            count,
        )


_outage_log = _OutageLog()


async def database_trouble_response(request: Request, exc: Exception) -> JSONResponse:
    """The database (or Redis) out of reach: database_unavailable with Retry-After, as
    unexpected_error_response answers it, logged by _OutageLog instead of a traceback per request."""
    _outage_log.refused(request, exc)
    return await app_error_response(request, AppError("database_unavailable", retry_after=DATABASE_RETRY_SECONDS))


async def node_trouble_response(request: Request, exc: Exception) -> JSONResponse:
    """A chain node's trouble that no service turned into rpc_unavailable (a refusal no route
    expected, such as a provider's quota): that code, and one log line instead of the traceback
    Starlette's ServerErrorMiddleware would write for every such request."""
    log.warning("%s %s: the chain node: %s", request.method, request.url.path, node_trouble_line(exc))
    return await app_error_response(request, AppError("rpc_unavailable"))


def build_api() -> FastAPI:
    restore_recursion_limit()  # every web worker builds the API, after its imports (core.startup)
    app = FastAPI(
        title="Newbl Wallet API",
        version="1",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # our own page (api.docs): FastAPI's loads Swagger UI from a CDN
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        # The wallet exports no telemetry (no OpenTelemetry SDK is set up). On FastAPI's default
        # every request looked up the three global providers to find that out: 8 % of the CPU of
        # GET /api/v1/me in-process.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.add_exception_handler(AppError, app_error_response)
    app.add_middleware(SameOriginWrites)  # every /api/v1 write must come from the app's own origin
    app.add_middleware(RefuseWhileLimited, openapi=app.openapi)
    app.add_middleware(BodyLimit)
    # Reflex's websocket (mounted under the API) has limits of its own; after ForwardedFrom: the real client.
    app.add_middleware(SocketLimits)
    app.add_middleware(HeadAsGet)  # before the rest: limits and routes see the GET it stands for
    app.add_middleware(ForwardedFrom)  # added last, runs first: everything after sees the real client
    app.add_exception_handler(RequestValidationError, validation_error_response)
    app.add_exception_handler(HTTPException, http_error_response)
    for trouble in node_trouble():
        app.add_exception_handler(trouble, node_trouble_response)
    for trouble in database_trouble():
        app.add_exception_handler(trouble, database_trouble_response)
    app.add_exception_handler(Exception, unexpected_error_response)
    for module in (auth, me, backup, payment, merchant, health, chains, assets, tokens, tx, activity, docs):
        add_routes(app, module.router)
    return app


class PagesMount(Mount):
    """Reflex's app (its pages, assets and websocket) mounted at "" under the API, and tried first:
    every path whose first segment is none of the API's routes' (/api, and in development /dev-idp,
    /dev-drive) is Reflex's. A page, an asset or the websocket then costs one check instead of a
    walk past every API route (about 1 µs each, 40 µs in all); and a path under /api/v1 that no
    route takes is answered by the API (404, 405 for a method its route does not take) instead of
    by a page."""

    def __init__(self, app: ASGIApp, api_segments: frozenset[str]):
        super().__init__("", app=app)
        self.api_segments = api_segments

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] in ("http", "websocket") and first_segment(scope["path"]) in self.api_segments:
            return Match.NONE, {}
        return super().matches(scope)


def first_segment(path: str) -> str:
    """ "/api/v1/me": "api"; "" for "/" and for a path without one ("*", OPTIONS's whole server)."""
    return path[1:].partition("/")[0] if path.startswith("/") else ""


def first_segments(routes: list[BaseRoute]) -> frozenset[str]:
    """The first path segment of each route."""
    segments = frozenset(first_segment(path) for route in routes if (path := getattr(route, "path", "")))
    assert "" not in segments, "a route at the root would take every page's path from Reflex"
    return segments


def in_front_of_reflex(api: FastAPI) -> Callable[[ASGIApp], ASGIApp]:
    """The api_transformer that serves `api` with Reflex's own routes mounted under it (PagesMount).
    Not `api` itself in the list: for a Starlette app Reflex does the same mount but first adds a
    CORSMiddleware to it, a copy of the one it wraps around everything anyway (every response
    then passed two, and said "Vary: Origin, Origin"): 6 % of GET /api/v1/me's CPU in-process."""

    def transform(reflex_app: ASGIApp) -> ASGIApp:
        api.router.routes.insert(0, PagesMount(reflex_app, first_segments(api.router.routes)))
        return api

    return transform
