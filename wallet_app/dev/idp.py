"""Development identity provider under /dev-idp (mounted only in development mode, DEV_MODE).

A small OpenID provider with Google's shapes: discovery, JWKS, an authorize popup where one
types an e-mail, a token endpoint (RS256 ID tokens via joserfc, opaque access tokens), a
revoke endpoint and a script at /dev-idp/gsi/client offering google.accounts.oauth2
initCodeClient/initTokenClient/revoke.

Codes and access tokens live in this process's memory (the app runs one backend worker
without Redis); a restart forgets them, and the browser simply asks for new ones.
The signing key is kept in settings.dev_idp_key_file so restarts keep it.
"""

import base64
import dataclasses
import hashlib
import html
import json
import os
import re
import secrets
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from urllib.parse import parse_qs, unquote

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.concurrency import run_in_threadpool

from wallet_app.core import shared
from wallet_app.core.config import get_settings

PREFIX = "/dev-idp"
DEV_CLIENT_ID = "newbl-dev-client"
DEV_CLIENT_SECRET = "newbl-dev-secret"
CODE_SECONDS = 120
TOKEN_SECONDS = 3600
# Remembers the last account in the popup, like Google's own sign-in cookie.
ACCOUNT_COOKIE = "nb_dev_idp_account"
HERE = Path(__file__).resolve().parent
_EMAIL_RE = re.compile(r"[^@\s]{1,64}@[^@\s]{1,190}\.[^@\s]{1,60}")
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def issuer() -> str:
    return get_settings().public_origin + PREFIX


# --- signing key ---------------------------------------------------------------------------

_keys: dict[Path, RSAKey] = {}
_key_lock = threading.Lock()


def signing_key() -> RSAKey:
    """The RS256 key, created once and stored (0600) in settings.dev_idp_key_file."""
    path = Path(get_settings().dev_idp_key_file)
    with _key_lock:
        if path not in _keys:
            if not path.exists():
                _create_key_file(path)
            _keys[path] = RSAKey.import_key(json.loads(path.read_text()))
        return _keys[path]


def _create_key_file(path: Path) -> None:
    key = RSAKey.generate_key(2048, parameters={"use": "sig", "alg": "RS256"}, private=True)
    key.ensure_kid()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(key.as_dict(private=True), f)
    try:
        os.link(tmp, path)  # fails if another process created it first: theirs wins
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def jwks() -> dict:
    return {"keys": [signing_key().as_dict(private=False)]}


# --- users, codes and tokens ------------------------------------------------------------------


def subject_for_email(email: str) -> str:
    """A stable, Google-like numeric subject per e-mail (same account across restarts)."""
    digest = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    return str(int(digest, 16) % 10**21).rjust(21, "1")


def issue_id_token(
    email: str,
    aud: str = DEV_CLIENT_ID,
    *,
    nonce: str | None = None,
    now: int | None = None,
    overrides: dict | None = None,
) -> str:
    """An RS256 ID token like Google's, with `nonce` when the request had one.
    `overrides` replace claims, None drops one (for tests)."""
    now = int(time.time()) if now is None else now
    email = email.strip().lower()
    claims = {
        "iss": issuer(),
        "aud": aud,
        "azp": aud,
        "sub": subject_for_email(email),
        "email": email,
        "email_verified": True,
        "name": email.split("@")[0],
        "iat": now,
        "exp": now + TOKEN_SECONDS,
    }
    if nonce:
        claims["nonce"] = nonce
    for name, value in (overrides or {}).items():
        if value is None:
            claims.pop(name, None)
        else:
            claims[name] = value
    key = signing_key()
    return jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key, algorithms=["RS256"])


@dataclass
class _Grant:
    sub: str
    email: str
    scope: str
    client_id: str
    expires_at: float
    nonce: str = ""  # the authorization request's nonce, echoed in the ID token


# Codes and access tokens in core.shared (Redis with REDIS_URL): with several workers, the code
# exchange or a Drive call may reach another worker than the one that granted them.
def _put(store: str, key: str, grant: _Grant) -> None:
    shared.marks(store).put(key, json.dumps(dataclasses.asdict(grant)), max(0.001, grant.expires_at - time.time()))


def _grant_of(value: str | None) -> _Grant | None:
    grant = _Grant(**json.loads(value)) if value else None
    return grant if grant and grant.expires_at > time.time() else None


def _new_code(grant: _Grant) -> str:
    code = "dev-code-" + secrets.token_urlsafe(24)
    _put("dev_idp_code", code, grant)
    return code


def _take_code(code: str) -> _Grant | None:
    """One-time use: the code is gone after this, valid or not."""
    return _grant_of(shared.marks("dev_idp_code").take(code))


def _new_access_token(sub: str, email: str, scope: str, client_id: str) -> str:
    token = "dev-at-" + secrets.token_urlsafe(32)
    _put("dev_idp_token", token, _Grant(sub, email, scope, client_id, time.time() + TOKEN_SECONDS))
    return token


def account_for_access_token(token: str, scope: str) -> tuple[str, str] | None:
    """(subject, e-mail) of a live access token that was granted `scope`, else None (Drive stand-in)."""
    grant = _grant_of(shared.marks("dev_idp_token").get(token))
    if grant is None or scope not in grant.scope.split():
        return None
    return grant.sub, grant.email


def revoke_token(token: str) -> bool:
    """Revoke an access token (Google's POST /revoke); False for an unknown or expired one."""
    return _grant_of(shared.marks("dev_idp_token").take(token)) is not None


# --- authorize popup ---------------------------------------------------------------------------

_AUTH_PARAMS = ("client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "login_hint", "prompt")


def _page(title: str, body: str, metas: dict[str, str] | None = None, status: int = 200) -> HTMLResponse:
    head_metas = "".join(
        f'<meta name="{html.escape(k)}" content="{html.escape(v, quote=True)}">' for k, v in (metas or {}).items()
    )
    doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>{head_metas}
<link rel="stylesheet" href="{PREFIX}/static/popup.css">
<script src="{PREFIX}/static/popup.js" defer></script>
</head><body><main>{body}</main></body></html>"""
    return HTMLResponse(doc, status_code=status, headers=_NO_STORE)


def _error_page(message: str) -> HTMLResponse:
    return _page(
        "Development sign-in", f'<h1>Development sign-in</h1><p role="alert">{html.escape(message)}</p>', status=400
    )


def _form_page(params: dict[str, str], error: str | None = None) -> HTMLResponse:
    hidden = "".join(
        f'<input type="hidden" name="{k}" value="{html.escape(params.get(k, ""), quote=True)}">' for k in _AUTH_PARAMS
    )
    alert = f'<p role="alert" class="error">{html.escape(error)}</p>' if error else ""
    scope = html.escape(params.get("scope", ""))
    body = f"""<h1>Development sign-in</h1>
<p>This is the local stand-in for Google. Type any e-mail address to sign in as that account.</p>
<p class="scope">Requested scope: <code>{scope}</code></p>
{alert}
<form method="post" action="{PREFIX}/authorize">{hidden}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" required autofocus autocomplete="email"
 value="{html.escape(params.get("login_hint", ""), quote=True)}">
<div class="actions"><button type="submit" id="continue">Continue</button>
<button type="button" id="cancel">Cancel</button></div>
</form>"""
    return _page(
        "Development sign-in",
        body,
        metas={"nb-idp-state": params.get("state", "")},
    )


def _result_page(message: dict) -> HTMLResponse:
    """The popup hands `message` to the opener (popup.js: window.opener.postMessage)."""
    return _page(
        "Development sign-in",
        '<h1>Development sign-in</h1><p id="status" role="status">Signed in. You can close this window.</p>',
        # popup.js posts it to its own origin: the opener's, at localhost or 127.0.0.1 alike.
        metas={"nb-idp-result": json.dumps(message, separators=(",", ":"))},
    )


def _check_request(params: dict[str, str]) -> str | None:
    """Why the authorization request is unusable, or None."""
    if params.get("client_id") != DEV_CLIENT_ID:
        return "Unknown client_id."
    if params.get("redirect_uri", "postmessage") != "postmessage":
        return "Only redirect_uri=postmessage (popup mode) is supported."
    if params.get("response_type") not in ("code", "token"):
        return "response_type must be code or token."
    if not params.get("scope", "").strip():
        return "scope is required."
    return None


def _grant(params: dict[str, str], email: str) -> HTMLResponse:
    """Sign `email` in: deliver a code or an access token (the shapes Google's callbacks get)."""
    email = email.strip().lower()
    sub = subject_for_email(email)
    scope = " ".join(params["scope"].split())
    prompt = params.get("prompt", "")
    if params["response_type"] == "code":
        grant = _Grant(sub, email, scope, params["client_id"], time.time() + CODE_SECONDS, params.get("nonce", ""))
        code = _new_code(grant)
        message: dict[str, str | int] = {"code": code, "scope": scope, "authuser": "0", "prompt": prompt or "none"}
    else:
        token = _new_access_token(sub, email, scope, params["client_id"])
        message = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": TOKEN_SECONDS,
            "scope": scope,
            "authuser": "0",
            "prompt": prompt or "none",
        }
    if params.get("state"):
        message["state"] = params["state"]
    resp = _result_page(message)
    resp.set_cookie(
        ACCOUNT_COOKIE,
        email,
        max_age=30 * 24 * 3600,
        path=PREFIX,
        httponly=True,
        samesite="lax",
        secure=get_settings().public_origin.startswith("https://"),
    )
    return resp


# --- routes -------------------------------------------------------------------------------------


def build_router() -> APIRouter:
    router = APIRouter(prefix=PREFIX, tags=["dev-idp"], include_in_schema=False)

    @router.get("/.well-known/openid-configuration")
    async def openid_configuration() -> JSONResponse:
        iss = issuer()
        return JSONResponse(
            {
                "issuer": iss,
                "authorization_endpoint": iss + "/authorize",
                "token_endpoint": iss + "/token",
                "revocation_endpoint": iss + "/revoke",
                "jwks_uri": iss + "/jwks",
                "response_types_supported": ["code", "token"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "scopes_supported": ["openid", "email", "profile"],
                "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
                "claims_supported": ["aud", "email", "email_verified", "exp", "iat", "iss", "name", "nonce", "sub"],
                "grant_types_supported": ["authorization_code"],
            }
        )

    @router.get("/jwks")
    def get_jwks() -> JSONResponse:  # sync (threadpool): the key may be read from its file
        return JSONResponse(jwks())

    @router.get("/authorize")
    async def authorize(request: Request) -> HTMLResponse:
        params = {k: request.query_params.get(k, "") for k in _AUTH_PARAMS}
        if problem := _check_request(params):
            return _error_page(problem)
        prompt = params["prompt"].split()
        # A hint (or the remembered account) skips the page unless the user must choose.
        hint = params["login_hint"] or request.cookies.get(ACCOUNT_COOKIE, "")
        if hint and _EMAIL_RE.fullmatch(hint) and "select_account" not in prompt:
            return _grant(params, hint)
        if "none" in prompt:
            message = {"error": "interaction_required", "error_description": "No signed-in account."}
            if params["state"]:
                message["state"] = params["state"]
            return _result_page(message)
        return _form_page(params)

    @router.post("/authorize")
    async def authorize_submit(request: Request) -> HTMLResponse:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode("utf-8", "replace")).items()}
        params = {k: form.get(k, "") for k in _AUTH_PARAMS}
        if problem := _check_request(params):
            return _error_page(problem)
        email = form.get("email", "").strip()
        if not _EMAIL_RE.fullmatch(email):
            return _form_page(params, error="Type an e-mail address such as alice@example.com.")
        return _grant(params, email)

    @router.post("/token")
    async def token(request: Request) -> JSONResponse:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode("utf-8", "replace")).items()}
        client_id, client_secret = form.get("client_id", ""), form.get("client_secret", "")
        basic = _basic_credentials(request.headers.get("authorization", ""))
        if basic:
            client_id, client_secret = basic
        if client_id != DEV_CLIENT_ID or not secrets.compare_digest(client_secret, DEV_CLIENT_SECRET):
            return _oauth_error("invalid_client", 401)
        if form.get("grant_type") != "authorization_code":
            return _oauth_error("unsupported_grant_type")
        if form.get("redirect_uri", "postmessage") != "postmessage":
            return _oauth_error("invalid_grant", description="redirect_uri mismatch")
        grant = _take_code(form.get("code", ""))
        if grant is None or grant.client_id != client_id:
            return _oauth_error("invalid_grant", description="unknown, used or expired code")
        body = {
            "access_token": _new_access_token(grant.sub, grant.email, grant.scope, client_id),
            "token_type": "Bearer",
            "expires_in": TOKEN_SECONDS,
            "scope": grant.scope,
        }
        if "openid" in grant.scope.split():
            # Off the event loop: the signing key may be read from its file.
            body["id_token"] = await run_in_threadpool(
                partial(issue_id_token, grant.email, client_id, nonce=grant.nonce or None)
            )
        return JSONResponse(body, headers=_NO_STORE)

    @router.post("/revoke")
    async def revoke(request: Request) -> JSONResponse:
        """Like https://oauth2.googleapis.com/revoke: `token` in the form (or the query)."""
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode("utf-8", "replace")).items()}
        token = form.get("token") or request.query_params.get("token", "")
        if not revoke_token(token):
            return _oauth_error("invalid_token", description="Token expired or revoked")
        return JSONResponse({}, headers=_NO_STORE)

    @router.get("/gsi/client")
    async def gsi_client() -> FileResponse:
        return _static("gsi_client.js")

    @router.get("/static/{name}", response_model=None)
    async def static(name: str) -> FileResponse | JSONResponse:
        if name not in ("popup.js", "popup.css"):
            return JSONResponse({"detail": "not_found"}, status_code=404)
        return _static(name)

    return router


def _static(name: str) -> FileResponse:
    media = "text/javascript; charset=utf-8" if name.endswith(".js") else "text/css; charset=utf-8"
    return FileResponse(HERE / name, media_type=media, headers={"Cache-Control": "no-cache"})


def _basic_credentials(header: str) -> tuple[str, str] | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic" or not value:
        return None
    try:
        user, sep, password = base64.b64decode(value, validate=True).decode().partition(":")
    except ValueError:
        return None
    return (unquote(user), unquote(password)) if sep else None


def _oauth_error(error: str, status: int = 400, description: str | None = None) -> JSONResponse:
    body = {"error": error}
    if description:
        body["error_description"] = description
    return JSONResponse(body, status_code=status, headers=_NO_STORE)
