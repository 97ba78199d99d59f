"""Login sessions: a random 256-bit token in an HttpOnly cookie, only its SHA-256 in the DB."""

import hashlib
import secrets

from wallet_app import crud
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_session
from wallet_app.models import User, now_epoch

SESSION_COOKIE = "nb_session"
# Over https the name carries the __Host- prefix: the browser keeps it only when Secure, Path=/
# and without Domain, so a sibling subdomain can neither plant nor shadow it.
HOST_SESSION_COOKIE = "__Host-" + SESSION_COOKIE


def session_cookie_name() -> str:
    """The session cookie's name: __Host-nb_session when served over https, else nb_session."""
    return HOST_SESSION_COOKIE if get_settings().https else SESSION_COOKIE


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 32 bytes = 256 bits


def hash_token(raw_token: str) -> str:
    return hashlib.sha256(raw_token.encode("utf-8")).hexdigest()


def create_session(user_id: int) -> str:
    """Store a new session for the user; returns the raw token for the cookie (never stored)."""
    raw = new_token()
    expires_at = now_epoch() + get_settings().session_lifetime_seconds
    with get_session() as db:
        crud.add_session(db, user_id, hash_token(raw), expires_at)
        db.commit()
    return raw


def revoke_session(raw_token: str) -> bool:
    """Mark the session revoked. Returns False when there was no such session."""
    if not raw_token:
        return False
    with get_session() as db:
        row = crud.get_session_by_hash(db, hash_token(raw_token))
        if row is None:
            return False
        row.revoked = True
        db.add(row)
        db.commit()
        return True


def lookup_user(raw_token: str | None) -> User | None:
    """The user of a live session (not revoked, not expired), else None."""
    if not raw_token or len(raw_token) > 256:
        return None
    with get_session() as db:
        return crud.active_user_for_hash(db, hash_token(raw_token), now_epoch())


def parse_cookie_header(header: str | None) -> dict[str, str]:
    """Cookie header -> {name: value}; the first of duplicate names wins, junk is skipped.

    First wins because browsers send the cookie with the more specific path first (RFC 6265
    5.4). Not http.cookies.SimpleCookie: it drops every cookie after one it cannot parse; not
    Starlette's request.cookies: there the last one wins.
    """
    cookies: dict[str, str] = {}
    for part in (header or "").split(";"):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            continue
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        cookies.setdefault(name, value)
    return cookies


def token_from_cookie_header(cookie_header: str | None) -> str | None:
    """The session token of a raw Cookie header: the one rule for the API and the Reflex handlers."""
    return parse_cookie_header(cookie_header).get(session_cookie_name()) or None


def user_from_cookie_header(cookie_header: str | None) -> User | None:
    """For Reflex handlers: the signed-in user from the raw Cookie header, else None."""
    return lookup_user(token_from_cookie_header(cookie_header))
