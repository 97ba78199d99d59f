"""Sign-in, session cookie, logout and origin checks through the real app and SQLite."""

import base64
import json
import re
import threading

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey
from sqlmodel import select

from tests.api.conftest import start_attempt
from tests.conftest import needs_pg
from wallet_app.core.db import get_session
from wallet_app.dev import idp
from wallet_app.errors import AppError
from wallet_app.models import User, UserSession
from wallet_app.services import accounts, google
from wallet_app.services.sessions import SESSION_COOKIE

ME = "/api/v1/me"


def cookie_attrs(set_cookie: str) -> dict[str, str]:
    parts = [p.strip() for p in set_cookie.split(";")]
    attrs = {"_pair": parts[0]}
    for p in parts[1:]:
        k, _, v = p.partition("=")
        attrs[k.lower()] = v
    return attrs


def session_set_cookie(resp) -> str:
    (line,) = [c for c in resp.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE + "=")]
    return line


def test_good_id_token_logs_in_and_sets_dev_cookie(client, settings_env):
    token = idp.issue_id_token("alice@example.com", nonce=start_attempt(client))
    resp = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "ko"})
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"address": None, "locale": "ko", "hasBackup": False}
    attrs = cookie_attrs(session_set_cookie(resp))
    name, _, value = attrs["_pair"].partition("=")
    assert name == SESSION_COOKIE and len(value) >= 43  # 256 bits, base64url
    assert "httponly" in attrs
    assert attrs["samesite"].lower() == "lax"
    assert attrs["path"] == "/"
    assert attrs["max-age"] == str(settings_env.session_lifetime_seconds)
    assert "secure" not in attrs  # dev mode runs on plain http://localhost
    assert client.get(ME).json() == {"address": None, "locale": "ko", "hasBackup": False}


def test_only_the_token_hash_is_stored(client, login):
    raw = login().cookies[SESSION_COOKIE]
    with get_session() as db:
        rows = db.exec(select(UserSession)).all()
    assert len(rows) == 1
    assert rows[0].token_hash != raw and re.fullmatch(r"[0-9a-f]{64}", rows[0].token_hash)


def _other_key_token(nonce: str) -> str:
    other = RSAKey.generate_key(2048, private=True)
    other.ensure_kid()
    signing_kid = idp.signing_key().kid  # claim to be the provider's key
    import time

    now = int(time.time())
    claims = {
        "iss": idp.issuer(),
        "aud": idp.DEV_CLIENT_ID,
        "sub": "1",
        "email": "eve@example.com",
        "email_verified": True,
        "iat": now,
        "exp": now + 600,
        "nonce": nonce,
    }
    return jwt.encode({"alg": "RS256", "kid": signing_kid}, claims, other, algorithms=["RS256"])


BAD_TOKENS = {
    "bad_signature": lambda n: _other_key_token(n),
    "wrong_aud": lambda n: idp.issue_id_token("eve@example.com", aud="someone-else", nonce=n),
    "wrong_iss": lambda n: idp.issue_id_token(
        "eve@example.com", nonce=n, overrides={"iss": "https://evil.example/dev-idp"}
    ),
    "expired": lambda n: idp.issue_id_token("eve@example.com", nonce=n, now=1_000_000),
    "email_unverified": lambda n: idp.issue_id_token("eve@example.com", nonce=n, overrides={"email_verified": False}),
    "no_email": lambda n: idp.issue_id_token("eve@example.com", nonce=n, overrides={"email": None}),
    "email_unverified_string": lambda n: idp.issue_id_token(
        "eve@example.com", nonce=n, overrides={"email_verified": "false"}
    ),
    "no_sub": lambda n: idp.issue_id_token("eve@example.com", nonce=n, overrides={"sub": None}),
    "no_exp": lambda n: idp.issue_id_token("eve@example.com", nonce=n, overrides={"exp": None}),
    "alg_none": lambda n: _unsigned(idp.issue_id_token("eve@example.com", nonce=n)),
    "garbage": lambda n: "not.a.jwt",
    "tampered_payload": lambda n: _tamper(idp.issue_id_token("eve@example.com", nonce=n)),
    # issue 12 item 5: the nonce binds the token to this browser's login attempt
    "no_nonce": lambda n: idp.issue_id_token("eve@example.com"),
    "other_nonce": lambda n: idp.issue_id_token("eve@example.com", nonce=start_attempt_elsewhere()),
    "nonce_prefix": lambda n: idp.issue_id_token("eve@example.com", nonce=n[:-1]),
}


def _unsigned(token: str) -> str:
    import base64

    head = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
    return f"{head}.{token.split('.')[1]}."


def _tamper(token: str) -> str:
    import base64
    import json

    head, payload, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["email"] = "admin@example.com"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{sig}"


def start_attempt_elsewhere() -> str:
    """A nonce another browser got: as random as ours, never issued to this client."""
    from wallet_app.services import google

    return google.new_login_attempt()


@pytest.mark.parametrize("case", sorted(BAD_TOKENS))
def test_bad_id_tokens_are_refused(client, case):
    token = BAD_TOKENS[case](start_attempt(client))
    resp = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    assert resp.status_code == 401, resp.text
    assert isinstance(resp.json()["detail"], str)
    if "nonce" in case:
        assert resp.json() == {"detail": "login_attempt_mismatch"}
    assert not [c for c in resp.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE)]
    assert "nb_login_attempt" not in client.cookies  # a refused sign-in uses the attempt up
    assert client.get(ME).status_code == 401


def test_id_token_sign_in_needs_the_attempt_cookie(client):
    nonce = start_attempt(client)
    resp = client.post("/api/v1/auth/login-attempt")
    attrs = cookie_attrs(resp.headers["set-cookie"])
    assert attrs["_pair"].startswith("nb_login_attempt=") and "httponly" in attrs
    assert attrs["path"] == "/api/v1/auth" and attrs["samesite"] == "strict" and int(attrs["max-age"]) <= 600
    assert resp.json()["nonce"] != nonce and len(resp.json()["nonce"]) >= 43  # 256 random bits

    # The older nonce was replaced by the newer one.
    stale = client.post(
        "/api/v1/auth/google", json={"id_token": idp.issue_id_token("a@example.com", nonce=nonce), "locale": "en"}
    )
    assert stale.status_code == 401 and stale.json() == {"detail": "login_attempt_mismatch"}

    # No attempt at all (or one already used): refused before the token is looked at.
    token = idp.issue_id_token("a@example.com", nonce=start_attempt(client))
    client.cookies.clear()
    missing = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    assert missing.status_code == 401 and missing.json() == {"detail": "login_attempt_expired"}

    nonce = start_attempt(client)
    token = idp.issue_id_token("a@example.com", nonce=nonce)
    ok = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    assert ok.status_code == 200, ok.text
    assert "nb_login_attempt" not in client.cookies
    # A client that kept the cookie cannot replay the attempt: each nonce signs in once.
    client.cookies.clear()
    set_attempt_cookie(client, nonce)
    replay = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    assert replay.status_code == 401 and replay.json() == {"detail": "login_attempt_expired"}


def set_attempt_cookie(client, value: str) -> None:
    """The attempt cookie as a client that sets it itself would (the jar's domain for localhost)."""
    client.cookies.set("nb_login_attempt", value, domain="localhost.local", path="/api/v1/auth")


def test_me_requires_a_session(client):
    resp = client.get(ME)
    assert resp.status_code == 401
    assert resp.json() == {"detail": "not_authenticated"}
    client.cookies.set(SESSION_COOKIE, "made-up-token")
    assert client.get(ME).status_code == 401


def test_expired_session_is_401(client, login):
    login()
    with get_session() as db:
        row = db.exec(select(UserSession)).one()
        row.expires_at = 1
        db.add(row)
        db.commit()
    assert client.get(ME).status_code == 401


def test_logout_revokes_server_side_and_clears_cookie(client, login):
    raw = login().cookies[SESSION_COOKIE]
    resp = client.post("/api/v1/auth/logout")
    assert resp.status_code == 200
    attrs = cookie_attrs(resp.headers["set-cookie"])
    assert attrs["_pair"].startswith(SESSION_COOKIE + "=") and attrs["max-age"] == "0"
    # The old cookie, replayed, no longer works: the session is revoked in the DB.
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, raw)
    assert client.get(ME).status_code == 401
    with get_session() as db:
        assert db.exec(select(UserSession)).one().revoked is True
    # Logging out again is harmless.
    assert client.post("/api/v1/auth/logout").status_code == 200


def test_new_login_revokes_the_previous_session_of_this_browser(client, login):
    first = login().cookies[SESSION_COOKIE]
    login()
    with get_session() as db:
        rows = db.exec(select(UserSession).order_by(UserSession.id)).all()
    assert [r.revoked for r in rows] == [True, False]
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, first)
    assert client.get(ME).status_code == 401


def test_locale_seeds_a_new_user_only(client, login):
    assert login("bob@example.com", "ko").json()["locale"] == "ko"
    assert client.patch(f"{ME}/locale", json={"locale": "en"}).json()["locale"] == "en"
    # The stored locale wins over the login body from now on.
    assert login("bob@example.com", "ko").json()["locale"] == "en"


def test_users_are_separate(client, login):
    login("a@example.com")
    client.post(f"{ME}/address", json={"address": "0x" + "ab" * 20})
    assert login("b@example.com").json()["address"] is None
    assert login("a@example.com").json()["address"] == "0x" + "ab" * 20


STATE_CHANGING = [
    ("post", "/api/v1/auth/google", {"id_token": "x", "locale": "ko"}),
    ("post", "/api/v1/auth/google/code", {"code": "x", "state": "x", "locale": "ko"}),
    ("post", "/api/v1/auth/login-attempt", None),
    ("post", "/api/v1/auth/logout", None),
    ("post", "/api/v1/me/address", {"address": "0x" + "11" * 20}),
    ("patch", "/api/v1/me/locale", {"locale": "en"}),
    ("post", "/api/v1/tx/submit", {"chain_id": 31337, "raw_tx": "0x00"}),
    ("post", "/api/v1/payment/execute", {}),
    ("delete", "/api/v1/no-such-route", None),  # refused before any route is looked for
]


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://localhost.evil.example", "https://localhost"])
@pytest.mark.parametrize("method,path,body", STATE_CHANGING)
def test_foreign_origin_is_refused_on_writes(client, login, method, path, body, origin):
    login()
    resp = client.request(method, path, json=body, headers={"Origin": origin})
    assert resp.status_code == 403, resp.text
    assert resp.json() == {"detail": "foreign_origin"}
    assert client.get(ME, headers={"Origin": origin}).status_code == 200  # reads are not checked
    assert client.get(ME).json()["locale"] == "ko"  # nothing changed


def test_missing_origin_allowed_for_non_browser_clients_but_not_cross_site_fetches(client, login):
    login()
    no_origin = {k: v for k, v in client.headers.items() if k.lower() != "origin"}
    client.headers.clear()
    client.headers.update(no_origin)
    assert client.patch(f"{ME}/locale", json={"locale": "en"}).status_code == 200
    resp = client.patch(f"{ME}/locale", json={"locale": "ko"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert resp.status_code == 403
    assert client.get(ME).json()["locale"] == "en"


CHECKSUMMED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55 test vector


@pytest.mark.parametrize(
    "address,status,detail",
    [
        ("0x" + "ab" * 20, 200, None),
        (CHECKSUMMED, 200, None),
        (" 0x" + "ab" * 20 + "\n", 200, None),  # surrounding blanks are trimmed (services.eth)
        ("0X" + "ab" * 20, 400, "invalid_address"),
        ("0x" + "ab" * 19, 400, "invalid_address"),
        ("0x" + "ab" * 21, 400, "invalid_address"),
        ("0x" + "g" * 40, 400, "invalid_address"),
        ("ab" * 21, 400, "invalid_address"),
        ("", 400, "invalid_address"),
        ("0x" + "0" * 40, 400, "invalid_address"),
        (CHECKSUMMED[:-1] + "D", 400, "bad_checksum"),
        ("0x" + "ab" * 40, 422, None),  # longer than any address: refused by the body's schema
        (12, 422, None),
        (None, 422, None),
    ],
)
def test_address_validation(client, login, address, status, detail):
    login()
    resp = client.post(f"{ME}/address", json={"address": address})
    assert resp.status_code == status, resp.text
    if status == 200:
        assert resp.json()["address"] == address.strip().lower()
        assert client.get(ME).json()["address"] == address.strip().lower()
    else:
        if detail:
            assert resp.json() == {"detail": detail}
        assert client.get(ME).json()["address"] is None


def test_address_from_a_page_that_knew_another_wallet_is_refused(client, login):
    """A page left open on /onboarding registers its new wallet with the address it knew ('' for
    none): the session cookie is the browser's, so another tab may have given the account a wallet
    since, or signed in another Google account, whose wallet it replaced."""
    login()
    first, second = "0x" + "ab" * 20, "0x" + "cd" * 20
    assert client.post(f"{ME}/address", json={"address": first, "replaces": ""}).status_code == 200
    resp = client.post(f"{ME}/address", json={"address": second, "replaces": ""})
    assert (resp.status_code, resp.json()) == (409, {"detail": "wallet_changed"})
    assert client.get(ME).json()["address"] == first
    resp = client.post(f"{ME}/address", json={"address": second, "replaces": first})
    assert resp.status_code == 200 and resp.json()["address"] == second


@needs_pg
def test_two_pages_registering_at_once_replace_no_wallet(client, login, monkeypatch):
    """Two pages that knew no wallet register theirs at the same moment: each read the account
    before the other wrote, so the second wrote over the first's without the replacement's
    confirmation. Now one is registered and the other refused with wallet_changed."""
    login("race@example.com")
    with get_session() as db:
        user_id = db.exec(select(User).where(User.email == "race@example.com")).one().id
    first, second = "0x" + "ab" * 20, "0x" + "cd" * 20
    real_get_user, outcome = accounts.get_user, {}

    def second_page() -> None:
        try:
            accounts.set_address(user_id, second, "")
            outcome["second"] = "registered"
        except AppError as e:
            outcome["second"] = e.code

    def get_user_then_the_other_page(db, uid):
        user = real_get_user(db, uid)
        if "thread" not in outcome:  # the first page's read; the second page registers now
            outcome["thread"] = threading.Thread(target=second_page)
            outcome["thread"].start()
            outcome["thread"].join(2)  # held by the first page's lock: it goes on after 2 s
        return user

    monkeypatch.setattr(accounts, "get_user", get_user_then_the_other_page)
    accounts.set_address(user_id, first, "")
    outcome["thread"].join(10)
    assert outcome["second"] == "wallet_changed"
    assert client.get(ME).json()["address"] == first


def test_address_needs_a_session(client):
    assert client.post(f"{ME}/address", json={"address": "0x" + "ab" * 20}).status_code == 401


@pytest.mark.parametrize(
    "locale,ok",
    [("ko", True), ("en", True), ("ja", False), ("KO", False), ("ko-KR", False), ("", False), (None, False)],
)
def test_locale_validation(client, login, locale, ok):
    login(locale="en" if locale == "ko" else "ko")
    resp = client.patch(f"{ME}/locale", json={"locale": locale})
    assert resp.status_code == (200 if ok else 422), resp.text
    if ok:
        assert client.get(ME).json()["locale"] == locale


def test_login_locale_is_validated(client):
    token = idp.issue_id_token("a@example.com", nonce=start_attempt(client))
    resp = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "fr"})
    assert resp.status_code == 422


def test_openapi_and_docs_are_served(client):
    spec = client.get("/api/v1/openapi.json")
    assert spec.status_code == 200
    paths = spec.json()["paths"]
    assert {
        "/api/v1/auth/google",
        "/api/v1/auth/google/code",
        "/api/v1/auth/login-attempt",
        "/api/v1/auth/logout",
        "/api/v1/me",
        "/api/v1/me/address",
        "/api/v1/me/locale",
    } <= set(paths)
    assert "patch" in paths["/api/v1/me/locale"]
    assert not any(p.startswith("/dev-idp") for p in paths)
    docs = client.get("/api/v1/docs")
    assert docs.status_code == 200 and "/api/v1/docs/swagger-init.js" in docs.text  # tests/api/test_docs_browser.py


class CountingTransport(httpx.AsyncBaseTransport):
    """The in-process transport to the dev IdP, counting the JWKS downloads."""

    def __init__(self, inner: httpx.AsyncBaseTransport):
        self.inner = inner
        self.jwks_requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/dev-idp/jwks":
            self.jwks_requests += 1
        return await self.inner.handle_async_request(request)


def test_unknown_kid_refetches_the_jwks_at_most_once_a_minute(app, client, monkeypatch):
    """Issue 12 item 3: a forged `kid` must not make every sign-in request download the JWKS."""
    counting = CountingTransport(httpx.ASGITransport(app=app))
    google.set_transport(counting)
    clock = [1000.0]
    monkeypatch.setattr(google.time, "monotonic", lambda: clock[0])

    def forged_kid(n: str) -> str:
        token = idp.issue_id_token("eve@example.com", nonce=n)
        head, rest = token.split(".", 1)
        head = base64.urlsafe_b64encode(json.dumps({"alg": "RS256", "kid": "rotated-" + n[:8]}).encode())
        return head.rstrip(b"=").decode() + "." + rest

    def post(token: str) -> httpx.Response:
        return client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})

    assert post(idp.issue_id_token("a@example.com", nonce=start_attempt(client))).status_code == 200
    assert counting.jwks_requests == 1  # the first verification loads the key set
    for _ in range(5):
        resp = post(forged_kid(start_attempt(client)))
        assert resp.status_code == 401 and resp.json() == {"detail": "invalid_id_token"}
    assert counting.jwks_requests == 1  # the set is younger than a minute: no refetch

    clock[0] += google.JWKS_REFRESH_SECONDS + 1
    for _ in range(5):
        assert post(forged_kid(start_attempt(client))).status_code == 401
    assert counting.jwks_requests == 2  # one refetch for the unknown kid, then the minute starts again
    # Known keys keep working without refetching.
    assert post(idp.issue_id_token("a@example.com", nonce=start_attempt(client))).status_code == 200
    assert counting.jwks_requests == 2


def test_a_spent_id_token_cannot_be_replayed_after_the_attempt_window(client, monkeypatch):
    """The nonce of a used ID token is remembered as long as the token itself is valid (Google's
    live an hour), not only the attempt's 10 minutes: a client sets its attempt cookie itself."""
    from wallet_app.core import shared

    nonce = start_attempt(client)
    token = idp.issue_id_token("victim@example.com", nonce=nonce)
    assert client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"}).status_code == 200

    later = shared.time.monotonic() + google.ATTEMPT_SECONDS + google.CLOCK_LEEWAY + 1
    monkeypatch.setattr(shared.time, "monotonic", lambda: later)
    client.cookies.clear()
    set_attempt_cookie(client, "made-up")  # the cookie does reach the server: another nonce is refused
    made_up = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    assert made_up.status_code == 401 and made_up.json() == {"detail": "login_attempt_mismatch"}
    set_attempt_cookie(client, nonce)
    replay = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    assert replay.status_code == 401 and replay.json() == {"detail": "login_attempt_expired"}
    assert client.get(ME).status_code == 401


@pytest.mark.parametrize(
    "overrides",
    [
        {"aud": [idp.DEV_CLIENT_ID, "other-client"], "azp": "other-client"},  # issued to another client
        {"aud": [idp.DEV_CLIENT_ID, "other-client"], "azp": None},  # several audiences: azp must say whose
        {"azp": "other-client"},
    ],
)
def test_id_token_for_another_authorized_party_is_refused(client, overrides):
    token = idp.issue_id_token("eve@example.com", nonce=start_attempt(client), overrides=overrides)
    resp = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    assert resp.status_code == 401 and resp.json() == {"detail": "invalid_id_token"}
    assert client.get(ME).status_code == 401
