"""/api/v1/auth: Google sign-in (ID token or popup code) and logout."""

from typing import Any

from fastapi import Depends, Request, Response
from starlette.concurrency import run_in_threadpool

from wallet_app.api.deps import session_token, v1_router
from wallet_app.api.schemas import GoogleCodeIn, GoogleIdTokenIn, LoginAttemptOut, MeOut, OkOut
from wallet_app.core import ratelimit
from wallet_app.core.config import get_settings
from wallet_app.errors import AppError
from wallet_app.models import stored_id
from wallet_app.services import accounts, google, sessions

router = v1_router("/auth", tags=["auth"])

_AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "token or code refused"},
    502: {"description": "provider unreachable"},
    **ratelimit.RESPONSE_429,
}
_SIGN_IN_LIMIT = [Depends(ratelimit.by_client_ip("sign_in"))]  # per client IP (core.ratelimit)


def _cookie_secure() -> bool:
    s = get_settings()
    return s.https or not s.dev_mode  # only development over http goes without Secure


def set_session_cookie(response: Response, raw_token: str) -> None:
    """Host-only (no Domain), Path=/: what the __Host- name of https requires."""
    response.set_cookie(
        sessions.session_cookie_name(),
        raw_token,
        max_age=get_settings().session_lifetime_seconds,
        path="/",
        httponly=True,
        samesite="lax",
        secure=_cookie_secure(),
    )


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(
        sessions.session_cookie_name(), path="/", httponly=True, samesite="lax", secure=_cookie_secure()
    )


def _login(identity: google.Identity, locale: str, request: Request, response: Response) -> dict:
    user = accounts.login_user(identity.sub, identity.email, locale)
    if old := session_token(request):
        sessions.revoke_session(old)  # a new login replaces the session this browser had
    set_session_cookie(response, sessions.create_session(stored_id(user)))
    return accounts.me_payload(user)


# One sign-in attempt: its nonce (the ID token's `nonce` claim, or the code flow's `state`)
# rides in a short-lived HttpOnly cookie, so a token or code obtained for another page or
# browser is refused. Every sign-in request consumes it, accepted or not.
ATTEMPT_COOKIE = "nb_login_attempt"
_ATTEMPT_PATH = "/api/v1/auth"


def _clear_attempt(response: Response) -> None:
    response.delete_cookie(
        ATTEMPT_COOKIE, path=_ATTEMPT_PATH, httponly=True, samesite="strict", secure=_cookie_secure()
    )


@router.post("/login-attempt", response_model=LoginAttemptOut)
def start_login_attempt(response: Response) -> dict:
    """Starts a sign-in attempt: its nonce goes into the ID token request (or as OAuth state)."""
    nonce = google.new_login_attempt()
    response.set_cookie(
        ATTEMPT_COOKIE,
        nonce,
        max_age=google.ATTEMPT_SECONDS,
        path=_ATTEMPT_PATH,
        httponly=True,
        samesite="strict",
        secure=_cookie_secure(),
    )
    return {"nonce": nonce}


async def _sign_in(verify: Any, locale: str, request: Request, response: Response) -> Any:
    """verify(attempt) -> Identity, then the attempt is spent and the user logged in; the
    attempt cookie is cleared either way."""
    try:
        attempt = await google.require_login_attempt(request.cookies.get(ATTEMPT_COOKIE))
        identity = await verify(attempt)
        await google.spend_login_attempt(attempt, identity.expires_at)
        result = await run_in_threadpool(_login, identity, locale, request, response)
    except AppError as exc:
        from wallet_app.api import app_error_response  # the package imports this module

        refused = await app_error_response(request, exc)
        _clear_attempt(refused)
        return refused
    _clear_attempt(response)
    return result


@router.post("/google", response_model=MeOut, responses=_AUTH_ERRORS, dependencies=_SIGN_IN_LIMIT)
async def login_with_id_token(body: GoogleIdTokenIn, request: Request, response: Response) -> Any:
    """Needs the cookie of POST /auth/login-attempt; the ID token's `nonce` claim must equal it."""

    async def verify(attempt: str) -> google.Identity:
        return await google.verify_id_token(body.id_token, nonce=attempt)

    return await _sign_in(verify, body.locale, request, response)


@router.post("/google/code", response_model=MeOut, responses=_AUTH_ERRORS, dependencies=_SIGN_IN_LIMIT)
async def login_with_code(body: GoogleCodeIn, request: Request, response: Response) -> Any:
    """Needs the cookie of POST /auth/login-attempt; `state` must equal its nonce."""

    async def verify(attempt: str) -> google.Identity:
        google.check_login_attempt(attempt, body.state)  # before the code is spent
        return await google.exchange_code(body.code)

    return await _sign_in(verify, body.locale, request, response)


@router.post("/logout", response_model=OkOut)
def logout(request: Request, response: Response) -> dict:
    """Revokes the session server-side and clears the cookie; idempotent (200 without a session)."""
    accounts.logout(session_token(request))
    clear_session_cookie(response)
    return {"ok": True}
