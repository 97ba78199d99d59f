"""Google sign-in on the server: verify ID tokens (joserfc) and exchange codes (Authlib).

The provider is accounts.google.com unless core.extensions names another one (development
installs its stand-in served by this same process under /dev-idp). All provider calls are
async: a synchronous call to /dev-idp from inside a request would deadlock the server.
The access token that comes with a code exchange is dropped at once (never stored or logged).
"""

import re
import secrets
import time
import warnings
from dataclasses import dataclass

import httpx
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from redis import RedisError

from wallet_app.core import extensions, shared
from wallet_app.core.config import get_settings
from wallet_app.errors import AppError

with warnings.catch_warnings():
    # Authlib warns on import that it falls back to `httpx` (its `httpx2` is not installed).
    from authlib.deprecate import AuthlibDeprecationWarning

    warnings.simplefilter("ignore", AuthlibDeprecationWarning)
    from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuthError

CACHE_SECONDS = 3600
# An unknown `kid` refetches the JWKS at most this often (else every forged token would).
JWKS_REFRESH_SECONDS = 60
HTTP_TIMEOUT = 10.0
CLOCK_LEEWAY = 60


@dataclass(frozen=True)
class Identity:
    sub: str
    email: str
    name: str | None = None
    expires_at: float = 0  # the ID token's exp (epoch seconds)


def provider() -> extensions.IdentityProvider:
    s = get_settings()
    return extensions.identity_provider(s.google_client_id or "", s.google_client_secret or "")


def issuer() -> str:
    return provider().issuer


def browser_client_id() -> str:
    """The OAuth client id the browser's code/token clients use."""
    return provider().client_id


def gsi_script_url() -> str:
    """Google Identity Services script, or a stand-in with the same API."""
    return provider().gsi_script_url


# --- HTTP and caches --------------------------------------------------------------------

# Tests route provider calls into the app in-process (httpx.ASGITransport); None = network.
_transport: httpx.AsyncBaseTransport | None = None
_discovery_cache: dict[str, tuple[float, dict]] = {}
_jwks_cache: dict[str, tuple[float, KeySet]] = {}


def set_transport(transport: httpx.AsyncBaseTransport | None) -> None:
    global _transport
    _transport = transport
    clear_caches()


def clear_caches() -> None:
    _discovery_cache.clear()
    _jwks_cache.clear()


async def _get_json(url: str) -> dict:
    try:
        async with httpx.AsyncClient(transport=_transport, timeout=HTTP_TIMEOUT) as client:
            resp = await client.get(url)
        resp.raise_for_status()
        data = resp.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise AppError("identity_provider_error", f"GET {url} failed: {type(exc).__name__}") from exc
    if not isinstance(data, dict):
        raise AppError("identity_provider_error", f"GET {url}: not a JSON object")
    return data


async def discovery() -> dict:
    """OpenID configuration of the current issuer (cached for an hour)."""
    iss = issuer()
    hit = _discovery_cache.get(iss)
    if hit and time.monotonic() - hit[0] < CACHE_SECONDS:
        return hit[1]
    meta = await _get_json(iss + "/.well-known/openid-configuration")
    if meta.get("issuer") != iss or not meta.get("jwks_uri") or not meta.get("token_endpoint"):
        raise AppError("identity_provider_error", "discovery document does not match the issuer")
    _discovery_cache[iss] = (time.monotonic(), meta)
    return meta


async def _key_set(jwks_uri: str, refresh: bool = False) -> KeySet:
    hit = _jwks_cache.get(jwks_uri)
    if hit:
        age = time.monotonic() - hit[0]
        if age < (JWKS_REFRESH_SECONDS if refresh else CACHE_SECONDS):
            return hit[1]
    try:
        keys = KeySet.import_key_set(await _get_json(jwks_uri))  # type: ignore[arg-type]
    except JoseError as exc:
        raise AppError("identity_provider_error", "unusable JWKS") from exc
    _jwks_cache[jwks_uri] = (time.monotonic(), keys)
    return keys


# --- ID tokens ----------------------------------------------------------------------------


def _claims_registry(client_id: str) -> jwt.JWTClaimsRegistry:
    return jwt.JWTClaimsRegistry(
        leeway=CLOCK_LEEWAY,
        iss={"essential": True, "values": list(provider().accepted_issuers)},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        email={"essential": True},
    )


# --- login attempts ------------------------------------------------------------------------
# A sign-in attempt is a random value kept in the browser's HttpOnly cookie (api/auth.py) and
# sent to the provider as the ID token's nonce or the code flow's state. Each signs in once:
# the spent ones are remembered (core.shared "spent_login" marks: in Redis with REDIS_URL, so on
# every worker) until they would have expired anyway (only successful sign-ins are recorded, so
# made-up cookies cannot fill this). Without that memory a replay cannot be told apart: when Redis
# cannot answer, sign-in is refused (shared_state_unavailable), not let through. A spent attempt is
# remembered while its ID token could still be accepted (Google's live an hour): the cookie is the
# client's own, so a replay of a used token only needs its nonce, which the token carries.
ATTEMPT_SECONDS = 600


def new_login_attempt() -> str:
    return secrets.token_urlsafe(32)


async def require_login_attempt(attempt: str | None) -> str:
    """The attempt's value; a missing (or expired) or already spent attempt is refused."""
    if not attempt:
        raise AppError("login_attempt_expired", "no login attempt (missing or expired)")
    try:
        spent = await shared.marks("spent_login").left_async(attempt) > 0
    except RedisError as e:
        raise AppError("shared_state_unavailable", f"spent login attempts: {e}") from None
    if spent:
        raise AppError("login_attempt_expired", "login attempt already spent")
    return attempt


async def spend_login_attempt(attempt: str, token_expires_at: float = 0) -> None:
    """Marks the attempt used by a successful sign-in; a second use is refused (atomically, on
    every worker) until the attempt and its ID token (`token_expires_at`) have both expired."""
    seconds = max(ATTEMPT_SECONDS, token_expires_at + CLOCK_LEEWAY - time.time())
    try:
        new = await shared.marks("spent_login").add_new_async(attempt, seconds)
    except RedisError as e:
        raise AppError("shared_state_unavailable", f"spent login attempts: {e}") from None
    if not new:
        raise AppError("login_attempt_expired", "login attempt already spent")


def check_login_attempt(expected: str, presented: object) -> None:
    """The presented nonce/state must equal the attempt's value (constant time)."""
    if not isinstance(presented, str) or not secrets.compare_digest(
        presented.encode("utf-8", "surrogatepass"), expected.encode()
    ):
        raise AppError("login_attempt_mismatch", "nonce/state does not match the login attempt")


async def verify_id_token(id_token: str, *, nonce: str | None) -> Identity:
    """Check signature (issuer's JWKS, RS256), iss, aud, azp, exp, email_verified and that the
    `nonce` claim equals the login attempt's nonce (None: the code flow, bound by its state)."""
    if not isinstance(id_token, str) or not id_token or len(id_token) > 8192:
        raise AppError("invalid_id_token", "empty or oversized token")
    meta = await discovery()
    try:
        try:
            token = jwt.decode(id_token, await _key_set(meta["jwks_uri"]), algorithms=["RS256"])
        except InvalidKeyIdError:
            # Unknown kid: the provider may have rotated its keys since we cached them.
            token = jwt.decode(id_token, await _key_set(meta["jwks_uri"], refresh=True), algorithms=["RS256"])
        claims = token.claims
        client_id = browser_client_id()
        _claims_registry(client_id).validate(claims)
    except JoseError as exc:
        raise AppError("invalid_id_token", f"{type(exc).__name__}: {exc}") from exc
    # OpenID Connect Core 3.1.3.7: azp names the client the token was issued to; with several
    # audiences it must be there (ours may be only one of them, the token another client's).
    several = isinstance(claims["aud"], list) and len(claims["aud"]) > 1
    if ("azp" in claims or several) and claims.get("azp") != client_id:
        raise AppError("invalid_id_token", "azp is not this client")
    if nonce is not None:
        check_login_attempt(nonce, claims.get("nonce"))
    # Google sends a boolean; older tokens carried the string "true".
    if claims.get("email_verified") not in (True, "true"):
        raise AppError("email_not_verified", "email_verified is not true")
    if not isinstance(claims["email"], str):
        raise AppError("invalid_id_token", "email is not a string")
    name = claims.get("name")
    return Identity(
        sub=claims["sub"],
        email=claims["email"],
        name=name if isinstance(name, str) else None,
        expires_at=claims["exp"],
    )


_CODE_RE = re.compile(r"[\x21-\x7e]+")


async def exchange_code(code: str) -> Identity:
    """Popup code flow (redirect_uri 'postmessage'): code -> tokens -> verified identity."""
    if not isinstance(code, str) or not code or len(code) > 2048:
        raise AppError("invalid_code", "empty or oversized code")
    if not _CODE_RE.fullmatch(code):
        # Codes are printable ASCII; others cannot be form-encoded (Authlib raises
        # UnicodeEncodeError, which must not pass for the provider being down).
        raise AppError("code_exchange_refused", "code is not printable ASCII")
    meta = await discovery()
    idp = provider()
    try:
        async with AsyncOAuth2Client(
            client_id=idp.client_id,
            client_secret=idp.client_secret,
            token_endpoint_auth_method="client_secret_post",
            redirect_uri="postmessage",
            transport=_transport,
            timeout=HTTP_TIMEOUT,
        ) as client:
            token = await client.fetch_token(meta["token_endpoint"], grant_type="authorization_code", code=code)
    except OAuthError as exc:
        # e.g. invalid_grant: a used, expired or foreign code.
        raise AppError("code_exchange_refused", str(exc.error)) from exc
    except (httpx.HTTPError, ValueError) as exc:
        raise AppError("identity_provider_error", f"token endpoint failed: {type(exc).__name__}") from exc
    id_token = token.get("id_token")
    if not id_token:
        raise AppError("code_exchange_refused", "no id_token in the token response")
    return await verify_id_token(id_token, nonce=None)
