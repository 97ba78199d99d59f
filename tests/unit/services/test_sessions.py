import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlmodel import select

from wallet_app.core.db import get_session
from wallet_app.models import UserSession
from wallet_app.services import accounts, sessions
from wallet_app.services.sessions import SESSION_COOKIE


def over_socket(cookie_header: str | None) -> tuple[str | None, object]:
    """A websocket opened with this Cookie header, through sessions.SocketCookie: the Cookie header
    Reflex sees, and the user a Reflex handler finds with it while the connection is open."""
    seen: dict = {}

    async def reflex(scope, receive, send):
        header = next((v.decode() for k, v in scope["headers"] if k == b"cookie"), None)
        seen.update(header=header, user=sessions.user_from_socket_cookie(header))

    headers = [(b"host", b"localhost")] + ([(b"cookie", cookie_header.encode())] if cookie_header is not None else [])
    run_apart(sessions.SocketCookie(reflex)({"type": "websocket", "headers": headers}, None, None))
    return seen["header"], seen["user"]


def run_apart(coroutine) -> None:
    """The coroutine to its end on an event loop of its own thread: the test's thread may be running
    one already (Playwright's sync API, once a browser test of the session has started it)."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coroutine).result()


@pytest.mark.parametrize(
    "header,expected",
    [
        ("", {}),
        (None, {}),
        ("a=1", {"a": "1"}),
        ("a=1; b=2", {"a": "1", "b": "2"}),
        ("a=1;b=2", {"a": "1", "b": "2"}),
        (' a = "quoted" ', {"a": "quoted"}),
        ("a=1; a=2", {"a": "1"}),  # first wins
        ("junk; a=1; =x; b", {"a": "1"}),  # unparseable parts are skipped, not fatal
        ("a=x=y", {"a": "x=y"}),
        ('theme={"x":1}; nb_session=abc', {"theme": '{"x":1}', "nb_session": "abc"}),
    ],
)
def test_parse_cookie_header(header, expected):
    assert sessions.parse_cookie_header(header) == expected


def test_tokens_are_256_bit_and_hashed_with_sha256():
    tokens = {sessions.new_token() for _ in range(50)}
    assert len(tokens) == 50
    assert all(len(t) == 43 and re.fullmatch(r"[A-Za-z0-9_-]+", t) for t in tokens)
    assert sessions.hash_token("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_session_lifecycle(db, settings_env):
    user = accounts.login_user("sub-1", "a@example.com", "ko")
    raw = sessions.create_session(user.id)
    with get_session() as s:
        row = s.exec(select(UserSession)).one()
    assert row.token_hash == sessions.hash_token(raw)
    assert row.expires_at - row.created_at == settings_env.session_lifetime_seconds

    header = f"theme=dark; {SESSION_COOKIE}={raw}; other=1"
    assert over_socket(header)[1].id == user.id
    assert over_socket("theme=dark") == (None, None)  # no session: no Cookie header left at all
    assert over_socket(f"{SESSION_COOKIE}=wrong")[1] is None
    assert sessions.lookup_user("x" * 1000) is None

    assert accounts.logout(raw) is True
    assert over_socket(header)[1] is None
    assert accounts.logout(raw) is True  # still a known session, already revoked
    assert accounts.logout("unknown") is False and accounts.logout(None) is False


def test_the_websocket_carries_a_handle_not_the_token(db):
    """Reflex stores a connection's headers in the client's state (in Redis with REDIS_URL): what it
    sees is a handle that names the token in this process, for the connection's life only."""
    user = accounts.login_user("sub-3", "c@example.com", "en")
    raw = sessions.create_session(user.id)
    header, found = over_socket(f"{SESSION_COOKIE}={raw}; nb_socket=forged")
    assert found.id == user.id
    handle = sessions.parse_cookie_header(header)["nb_socket"]
    assert header == f"nb_socket={handle}" and raw not in header and len(handle) >= 20
    assert sessions.user_from_socket_cookie(header) is None  # the connection is closed: the handle means nothing
    assert over_socket("nb_socket=forged") == (None, None)  # a client's own handle is never read
    assert sessions.user_from_socket_cookie("nb_socket=forged") is None
    # An HTTP request passes untouched (the API reads the real cookie).
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["headers"])

    http = {"type": "http", "headers": [(b"cookie", f"{SESSION_COOKIE}={raw}".encode())]}
    run_apart(sessions.SocketCookie(app)(http, None, None))
    assert seen == [http["headers"]]


def test_a_closed_websocket_is_told_from_one_without_a_session(db):
    """A Reflex event handled after its websocket closed (the page was left) finds no user, as one
    without a session does; socket_closed tells the two apart, so the first is not signed out."""
    user = accounts.login_user("sub-4", "d@example.com", "en")
    raw = sessions.create_session(user.id)
    seen: dict = {}

    async def reflex(scope, receive, send):
        header = next(v.decode() for k, v in scope["headers"] if k == b"cookie")
        seen.update(header=header, closed=sessions.socket_closed(header))

    cookie = [(b"cookie", f"{SESSION_COOKIE}={raw}".encode())]
    run_apart(sessions.SocketCookie(reflex)({"type": "websocket", "headers": cookie}, None, None))
    assert seen["closed"] is False  # open
    assert sessions.socket_closed(seen["header"]) is True  # closed: its handle is gone
    assert sessions.user_from_socket_cookie(seen["header"]) is None
    for no_session in ("", None, "theme=dark"):  # a socket opened without a session has no handle
        assert sessions.socket_closed(no_session) is False


def test_expired_session_is_not_found(db):
    user = accounts.login_user("sub-2", "b@example.com", "en")
    raw = sessions.create_session(user.id)
    with get_session() as s:
        row = s.exec(select(UserSession)).one()
        row.expires_at = row.created_at - 1
        s.add(row)
        s.commit()
    assert sessions.lookup_user(raw) is None
