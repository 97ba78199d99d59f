"""Shared route dependencies: same-origin check for writes, and the signed-in user."""

from collections.abc import Collection
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from wallet_app.core.config import get_settings
from wallet_app.errors import AppError
from wallet_app.models import User
from wallet_app.services import sessions

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def origin_allowed(
    method: str, origin: str | None, sec_fetch_site: str | None, allowed_origins: Collection[str]
) -> bool:
    """CSRF guard for cookie-authenticated writes.

    - An Origin header must be exactly one of the app's origins (settings.allowed_origins:
      PUBLIC_BASE_URL's, and in development its loopback aliases); "null" and others are refused.
    - No Origin: browsers always send one on fetch/form POST, PATCH, PUT and DELETE, so its
      absence means a non-browser client (curl, a merchant's server, tests), which cannot
      carry a victim's cookie; allowed. One exception: a browser that reports fetch metadata
      (Sec-Fetch-Site) from another site but no Origin is refused.
    """
    if method.upper() not in STATE_CHANGING:
        return True
    if origin is not None:
        return origin.strip().rstrip("/").lower() in {o.rstrip("/").lower() for o in allowed_origins}
    return sec_fetch_site in (None, "same-origin", "none")


async def require_same_origin(request: Request) -> None:  # async: pure, so no thread hop per request
    if not origin_allowed(
        request.method,
        request.headers.get("origin"),
        request.headers.get("sec-fetch-site"),
        get_settings().allowed_origins,
    ):
        raise HTTPException(status_code=403, detail="foreign_origin")


def session_token(request: Request) -> str | None:
    # Not request.cookies (last duplicate wins): the Reflex handlers' rule, first wins.
    return sessions.token_from_cookie_header(request.headers.get("cookie"))


async def current_user(request: Request) -> User:
    user = await sessions.api_user(session_token(request))
    if user is None:
        raise AppError("not_authenticated", "no live session")
    return user


CurrentUser = Annotated[User, Depends(current_user)]
