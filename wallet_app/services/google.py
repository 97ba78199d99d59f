"""Google sign-in on the server: verify ID tokens (joserfc) and exchange codes (Authlib).

With GOOGLE_CLIENT_ID set the provider is accounts.google.com; without it, the development
identity provider served by this same process under /dev-idp. All provider calls are
async: a synchronous call to /dev-idp from inside a request would deadlock the server.
The access token that comes with a code exchange is dropped at once (never stored or logged).
"""

import time
import warnings
from dataclasses import dataclass

import httpx
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

from wallet_app.core.config import get_settings
from wallet_app.dev import idp as dev_idp

with warnings.catch_warnings():
    # Authlib warns on import that it falls back to `httpx` (its `httpx2` is not installed).
    from authlib.deprecate import AuthlibDeprecationWarning

    warnings.simplefilter("ignore", AuthlibDeprecationWarning)
    from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuthError

GOOGLE_ISSUER = "https://accounts.google.com"
# Google documents both forms of `iss` in its ID tokens.
GOOGLE_ISSUERS = (GOOGLE_ISSUER, "accounts.google.com")
GOOGLE_GSI_SCRIPT = "https://accounts.google.com/gsi/client"
CACHE_SECONDS = 3600
HTTP_TIMEOUT = 10.0
CLOCK_LEEWAY = 60


class GoogleAuthError(Exception):
    """Base: `code` is a machine-readable reason for API error details."""

    code = "google_auth_failed"

    def __init__(self, code: str | None = None, message: str = ""):
        self.code = code or self.code
        super().__init__(message or self.code)


class InvalidIdToken(GoogleAuthError):
    code = "invalid_id_token"


class ProviderError(GoogleAuthError):
    """The provider could not be reached, answered garbage, or refused the code."""

    code = "identity_provider_error"


@dataclass(frozen=True)
class Identity:
    sub: str
    email: str
    name: str | None = None


def issuer() -> str:
    s = get_settings()
    return GOOGLE_ISSUER if not s.dev_mode else s.public_origin + dev_idp.PREFIX


def _server_credentials() -> tuple[str, str]:
    s = get_settings()
    if s.dev_mode:
        return dev_idp.DEV_CLIENT_ID, dev_idp.DEV_CLIENT_SECRET
    return s.google_client_id or "", s.google_client_secret or ""


def browser_client_id() -> str:
    """The OAuth client id the browser's code/token clients use."""
    return _server_credentials()[0]


def gsi_script_url() -> str:
    """Google Identity Services script, or the development stand-in with the same API."""
    return dev_idp.PREFIX + "/gsi/client" if get_settings().dev_mode else GOOGLE_GSI_SCRIPT


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
        raise ProviderError(message=f"GET {url} failed: {type(exc).__name__}") from exc
    if not isinstance(data, dict):
        raise ProviderError(message=f"GET {url}: not a JSON object")
    return data


async def discovery() -> dict:
    """OpenID configuration of the current issuer (cached for an hour)."""
    iss = issuer()
    hit = _discovery_cache.get(iss)
    if hit and time.monotonic() - hit[0] < CACHE_SECONDS:
        return hit[1]
    meta = await _get_json(iss + "/.well-known/openid-configuration")
    if meta.get("issuer") != iss or not meta.get("jwks_uri") or not meta.get("token_endpoint"):
        raise ProviderError(message="discovery document does not match the issuer")
    _discovery_cache[iss] = (time.monotonic(), meta)
    return meta


async def _key_set(jwks_uri: str, refresh: bool = False) -> KeySet:
    hit = _jwks_cache.get(jwks_uri)
    if hit and not refresh and time.monotonic() - hit[0] < CACHE_SECONDS:
        return hit[1]
    try:
        keys = KeySet.import_key_set(await _get_json(jwks_uri))  # type: ignore[arg-type]
    except JoseError as exc:
        raise ProviderError(message="unusable JWKS") from exc
    _jwks_cache[jwks_uri] = (time.monotonic(), keys)
    return keys


# --- ID tokens ----------------------------------------------------------------------------


def _claims_registry(client_id: str) -> jwt.JWTClaimsRegistry:
    iss_values = list(GOOGLE_ISSUERS) if not get_settings().dev_mode else [issuer()]
    return jwt.JWTClaimsRegistry(
        leeway=CLOCK_LEEWAY,
        iss={"essential": True, "values": iss_values},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        email={"essential": True},
    )


async def verify_id_token(id_token: str) -> Identity:
    """Check signature (issuer's JWKS, RS256), iss, aud, exp and email_verified."""
    if not isinstance(id_token, str) or not id_token or len(id_token) > 8192:
        raise InvalidIdToken(message="empty or oversized token")
    meta = await discovery()
    try:
        try:
            token = jwt.decode(id_token, await _key_set(meta["jwks_uri"]), algorithms=["RS256"])
        except InvalidKeyIdError:
            # Unknown kid: the provider may have rotated its keys since we cached them.
            token = jwt.decode(
                id_token, await _key_set(meta["jwks_uri"], refresh=True), algorithms=["RS256"]
            )
        claims = token.claims
        _claims_registry(browser_client_id()).validate(claims)
    except JoseError as exc:
        raise InvalidIdToken(message=f"{type(exc).__name__}: {exc}") from exc
    # Google sends a boolean; older tokens carried the string "true".
    if claims.get("email_verified") not in (True, "true"):
        raise InvalidIdToken("email_not_verified", "email_verified is not true")
    if not isinstance(claims["email"], str):
        raise InvalidIdToken(message="email is not a string")
    name = claims.get("name")
    return Identity(sub=claims["sub"], email=claims["email"], name=name if isinstance(name, str) else None)


async def exchange_code(code: str) -> Identity:
    """Popup code flow (redirect_uri 'postmessage'): code -> tokens -> verified identity."""
    if not isinstance(code, str) or not code or len(code) > 2048:
        raise ProviderError("invalid_code", "empty or oversized code")
    meta = await discovery()
    client_id, client_secret = _server_credentials()
    try:
        async with AsyncOAuth2Client(
            client_id=client_id,
            client_secret=client_secret,
            token_endpoint_auth_method="client_secret_post",
            redirect_uri="postmessage",
            transport=_transport,
            timeout=HTTP_TIMEOUT,
        ) as client:
            token = await client.fetch_token(
                meta["token_endpoint"], grant_type="authorization_code", code=code
            )
    except OAuthError as exc:
        # e.g. invalid_grant: a used, expired or foreign code.
        raise ProviderError("code_exchange_refused", str(exc.error)) from exc
    except (httpx.HTTPError, ValueError) as exc:
        raise ProviderError(message=f"token endpoint failed: {type(exc).__name__}") from exc
    id_token = token.get("id_token")
    if not id_token:
        raise ProviderError("code_exchange_refused", "no id_token in the token response")
    return await verify_id_token(id_token)
