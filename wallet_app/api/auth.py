"""/api/v1/auth: Google sign-in (ID token or popup code) and logout."""

from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from wallet_app.api.deps import session_token
from wallet_app.api.schemas import GoogleCodeIn, GoogleIdTokenIn, MeOut, OkOut
from wallet_app.core.config import get_settings
from wallet_app.models import stored_id
from wallet_app.services import accounts, google, sessions

router = APIRouter(prefix="/auth", tags=["auth"])

_AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "token or code refused"},
    502: {"description": "provider unreachable"},
}


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


@router.post("/google", response_model=MeOut, responses=_AUTH_ERRORS)
async def login_with_id_token(body: GoogleIdTokenIn, request: Request, response: Response) -> dict:
    identity = await google.verify_id_token(body.id_token)
    return await run_in_threadpool(_login, identity, body.locale, request, response)


@router.post("/google/code", response_model=MeOut, responses=_AUTH_ERRORS)
async def login_with_code(body: GoogleCodeIn, request: Request, response: Response) -> dict:
    identity = await google.exchange_code(body.code)
    return await run_in_threadpool(_login, identity, body.locale, request, response)


@router.post("/logout", response_model=OkOut)
def logout(request: Request, response: Response) -> dict:
    """Revokes the session server-side and clears the cookie; idempotent (200 without a session)."""
    accounts.logout(session_token(request))
    clear_session_cookie(response)
    return {"ok": True}
