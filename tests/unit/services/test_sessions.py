import re

import pytest
from sqlmodel import select

from wallet_app.core.db import get_session
from wallet_app.models import UserSession
from wallet_app.services import accounts, sessions
from wallet_app.services.sessions import SESSION_COOKIE


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
    assert sessions.user_from_cookie_header(header).id == user.id
    assert sessions.user_from_cookie_header("theme=dark") is None
    assert sessions.user_from_cookie_header(f"{SESSION_COOKIE}=wrong") is None
    assert sessions.lookup_user("x" * 1000) is None

    assert accounts.logout(raw) is True
    assert sessions.user_from_cookie_header(header) is None
    assert accounts.logout(raw) is True  # still a known session, already revoked
    assert accounts.logout("unknown") is False and accounts.logout(None) is False


def test_expired_session_is_not_found(db):
    user = accounts.login_user("sub-2", "b@example.com", "en")
    raw = sessions.create_session(user.id)
    with get_session() as s:
        row = s.exec(select(UserSession)).one()
        row.expires_at = row.created_at - 1
        s.add(row)
        s.commit()
    assert sessions.lookup_user(raw) is None
