"""Production mode (DEV_MODE off, Google configured): Google's issuer, a Secure `__Host-` cookie
over https, no /dev-idp.

accounts.google.com is unreachable here, so an httpx transport plays Google's three
endpoints (discovery, JWKS, token) with a locally generated RSA key: the signature
checks, claim checks and Authlib's token request are the real ones.
"""

import json
import time
from urllib.parse import parse_qs

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.testclient import TestClient

from tests.api.conftest import make_api, start_attempt
from tests.conftest import PRODUCTION_CLIENT_ID as CLIENT_ID
from tests.conftest import PRODUCTION_CLIENT_SECRET as CLIENT_SECRET
from tests.conftest import PRODUCTION_ORIGIN as ORIGIN
from wallet_app.services import google


class FakeGoogle:
    def __init__(self):
        self.keys = [self._key()]
        self.token_requests: list[dict] = []
        self.id_token_for_code: dict[str, str] = {}
        self.down = False

    @staticmethod
    def _key() -> RSAKey:
        key = RSAKey.generate_key(2048, private=True)
        key.ensure_kid()
        return key

    def rotate(self) -> None:
        self.keys = [self._key()]

    def id_token(self, key: RSAKey | None = None, **claims) -> str:
        now = int(time.time())
        body = {
            "iss": "https://accounts.google.com",
            "aud": CLIENT_ID,
            "azp": CLIENT_ID,
            "sub": "109876543210987654321",
            "email": "zoe@gmail.com",
            "email_verified": True,
            "iat": now,
            "exp": now + 3600,
            **claims,
        }
        key = key or self.keys[0]
        return jwt.encode({"alg": "RS256", "kid": key.kid}, body, key, algorithms=["RS256"])

    def handler(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            raise httpx.ConnectError("unreachable", request=request)
        url = str(request.url)
        if url == "https://accounts.google.com/.well-known/openid-configuration":
            return httpx.Response(
                200,
                json={
                    "issuer": "https://accounts.google.com",
                    "token_endpoint": "https://oauth2.googleapis.com/token",
                    "jwks_uri": "https://www.googleapis.com/oauth2/v3/certs",
                },
            )
        if url == "https://www.googleapis.com/oauth2/v3/certs":
            return httpx.Response(200, json={"keys": [k.as_dict(private=False) for k in self.keys]})
        if url == "https://oauth2.googleapis.com/token" and request.method == "POST":
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            self.token_requests.append(form)
            id_token = self.id_token_for_code.pop(form.get("code", ""), None)
            if id_token is None:
                return httpx.Response(400, json={"error": "invalid_grant"})
            return httpx.Response(
                200,
                json={
                    "access_token": "ya29.secret",
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "scope": "openid email profile",
                    "id_token": id_token,
                },
            )
        return httpx.Response(404)


@pytest.fixture
def fake_google(db, production_env):
    fake = FakeGoogle()
    google.set_transport(httpx.MockTransport(fake.handler))
    yield fake
    google.set_transport(None)


@pytest.fixture
def gclient(fake_google):
    with TestClient(make_api(), base_url=ORIGIN, headers={"Origin": ORIGIN}) as c:
        yield c


def test_login_sets_secure_cookie_and_works_over_https(gclient, fake_google):
    resp = gclient.post(
        "/api/v1/auth/google", json={"id_token": fake_google.id_token(nonce=start_attempt(gclient)), "locale": "en"}
    )
    assert resp.status_code == 200, resp.text
    set_cookie = resp.headers["set-cookie"]
    assert set_cookie.startswith("__Host-nb_session=")  # over https: Secure, Path=/, no Domain
    attrs = set_cookie.lower()
    assert "; secure" in attrs and "; httponly" in attrs and "samesite=lax" in attrs and "; path=/" in attrs
    assert "domain=" not in attrs
    assert gclient.get("/api/v1/me").json() == {"address": None, "locale": "en", "hasBackup": False}


def test_short_issuer_form_is_accepted(gclient, fake_google):
    token = fake_google.id_token(iss="accounts.google.com", nonce=start_attempt(gclient))
    assert gclient.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"}).status_code == 200


@pytest.mark.parametrize(
    "claims",
    [
        {"iss": "https://wallet.test/dev-idp"},
        {"aud": "newbl-dev-client"},
        {"exp": int(time.time()) - 3600},
        {"email_verified": False},
    ],
)
def test_refused_tokens(gclient, fake_google, claims):
    resp = gclient.post(
        "/api/v1/auth/google",
        json={"id_token": fake_google.id_token(nonce=start_attempt(gclient), **claims), "locale": "en"},
    )
    assert resp.status_code == 401


def test_rotated_keys_are_refetched(gclient, fake_google, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(google.time, "monotonic", lambda: clock[0])
    assert (
        gclient.post(
            "/api/v1/auth/google", json={"id_token": fake_google.id_token(nonce=start_attempt(gclient)), "locale": "en"}
        ).status_code
        == 200
    )
    fake_google.rotate()  # JWKS was cached with the old key; the new kid forces one refetch
    clock[0] += google.JWKS_REFRESH_SECONDS  # (at most once a minute)
    assert (
        gclient.post(
            "/api/v1/auth/google", json={"id_token": fake_google.id_token(nonce=start_attempt(gclient)), "locale": "en"}
        ).status_code
        == 200
    )
    stranger = FakeGoogle._key()
    assert (
        gclient.post(
            "/api/v1/auth/google",
            json={"id_token": fake_google.id_token(key=stranger, nonce=start_attempt(gclient)), "locale": "en"},
        ).status_code
        == 401
    )


def test_code_exchange_uses_postmessage_and_client_secret(gclient, fake_google):
    fake_google.id_token_for_code["4/0abc"] = fake_google.id_token(email="yan@gmail.com", sub="42")
    state = start_attempt(gclient)
    resp = gclient.post("/api/v1/auth/google/code", json={"code": "4/0abc", "state": state, "locale": "ko"})
    assert resp.status_code == 200, resp.text
    form = fake_google.token_requests[-1]
    assert form["grant_type"] == "authorization_code" and form["code"] == "4/0abc"
    assert form["redirect_uri"] == "postmessage"
    assert form["client_id"] == CLIENT_ID and form["client_secret"] == CLIENT_SECRET
    assert "ya29.secret" not in json.dumps(resp.json()) + resp.headers.get("set-cookie", "")
    state = start_attempt(gclient)
    refused = gclient.post("/api/v1/auth/google/code", json={"code": "4/0abc", "state": state, "locale": "ko"})
    assert refused.status_code == 401


def test_provider_down_is_502(gclient, fake_google):
    fake_google.down = True
    resp = gclient.post(
        "/api/v1/auth/google", json={"id_token": fake_google.id_token(nonce=start_attempt(gclient)), "locale": "en"}
    )
    assert resp.status_code == 502 and resp.json() == {"detail": "identity_provider_error"}


def test_no_dev_idp_and_google_helpers(gclient):
    for path in ("/dev-idp/.well-known/openid-configuration", "/dev-idp/gsi/client", "/dev-idp/jwks"):
        assert gclient.get(path).status_code == 404
    assert google.browser_client_id() == CLIENT_ID
    assert google.gsi_script_url() == "https://accounts.google.com/gsi/client"
    assert google.issuer() == "https://accounts.google.com"


def test_login_attempt_cookie_is_secure_and_strict(gclient):
    resp = gclient.post("/api/v1/auth/login-attempt")
    set_cookie = resp.headers["set-cookie"].lower()
    assert set_cookie.startswith("nb_login_attempt=") and "; secure" in set_cookie and "; httponly" in set_cookie
    assert "samesite=strict" in set_cookie and "path=/api/v1/auth" in set_cookie
