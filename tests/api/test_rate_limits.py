"""Rate limits through /api/v1 (issue 12 item 3): after N calls a limited route answers 429 with
Retry-After (integer seconds) and {"detail": "rate_limited"}; limits count per signed-in user
(per client IP for sign-in); the token list holds at most 50 tokens."""

import time

import pytest
from eth_account import Account

from wallet_app import crud
from wallet_app.core import ratelimit
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_session
from wallet_app.dev import idp
from wallet_app.models import stored_id
from wallet_app.services import sessions
from wallet_app.services.eth import ZERO_ADDRESS

API = "/api/v1"
LIMIT = 2
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"

# kind -> one request of the action (bad or good input alike: the attempt is what counts)
ROUTES = {
    "token_metadata": ("GET", "/token/metadata", {"params": {"chain_id": 31337, "token_address": ZERO_ADDRESS}}),
    "token_add": ("POST", "/tokens", {"json": {"chain_id": 31337, "token_address": ZERO_ADDRESS}}),
    "tx_build": ("POST", "/tx/build", {"json": {"chain_id": 31337, "token_address": TOKEN,
                                                "to": ZERO_ADDRESS, "amount": "1"}}),
    "tx_submit": ("POST", "/tx/submit", {"json": {"raw_tx": "0x12"}}),
    "balances": ("GET", "/assets", {}),
    "address": ("POST", "/me/address", {"json": {"address": "0x1234"}}),
    "payment_quote": ("GET", "/payment/available", {"params": {"chain_id": 31337, "token_address": "0x12",
                                                               "amount": "1"}}),
    "payment_execute": ("POST", "/payment/execute", {"json": {
        "chain_id": 31337, "merchant_address": "0x12", "token_address": TOKEN, "amount": "1",
        "payment_id": "0x12", "deadline": 1, "signature": "0x12"}}),
}


def limit(monkeypatch, kind: str, spec: str = f"{LIMIT}/minute") -> None:
    monkeypatch.setenv(f"RATE_LIMIT_{kind.upper()}", spec)
    get_settings.cache_clear()


def assert_limited(resp) -> None:
    assert resp.status_code == 429, resp.text
    assert resp.json() == {"detail": "rate_limited"}
    assert 1 <= int(resp.headers["Retry-After"]) <= 60


@pytest.mark.parametrize("kind", sorted(ROUTES))
def test_a_limited_route_answers_429_per_user(kind, chain_env, client, login, monkeypatch):
    method, path, kwargs = ROUTES[kind]
    login("first@example.com")
    limit(monkeypatch, kind)
    for _ in range(LIMIT):
        assert client.request(method, API + path, **kwargs).status_code != 429
    assert_limited(client.request(method, API + path, **kwargs))
    # Another user has their own count.
    login("second@example.com")
    assert client.request(method, API + path, **kwargs).status_code != 429


def test_sign_in_is_limited_per_client_ip(chain_env, client, login, monkeypatch):
    limit(monkeypatch, "sign_in")
    login()
    assert client.post(f"{API}/auth/google", json={"id_token": "garbage", "locale": "en"}).status_code == 401
    token = idp.issue_id_token("later@example.com")
    assert_limited(client.post(f"{API}/auth/google", json={"id_token": token, "locale": "en"}))
    assert_limited(client.post(f"{API}/auth/google/code", json={"code": "abc", "locale": "en"}))


def test_the_token_list_holds_at_most_50_tokens(chain_env, client, login):
    login()
    assert len(client.get(f"{API}/tokens").json()) == 3  # the configured tUSD and tKRW, and the native ETH
    user_id = stored_id(sessions.lookup_user(client.cookies.get(sessions.SESSION_COOKIE)))
    with get_session() as db:
        for _ in range(47):
            crud.add_user_token(db, user_id, 31337, Account.create().address, "JNK", "Junk", 18)
        db.commit()
    assert len(client.get(f"{API}/tokens").json()) == 50
    native = client.post(f"{API}/tokens", json={"chain_id": 31337, "token_address": ZERO_ADDRESS})
    assert native.status_code == 200, native.text  # listed from the start: answered at the cap too
    refused = client.post(f"{API}/tokens", json={"chain_id": 31337, "token_address": TOKEN.lower()[:-1] + "b"})
    assert (refused.status_code, refused.json()) == (400, {"detail": "too_many_tokens"})
    # A token already in the list is still answered (adding is idempotent).
    again = client.post(f"{API}/tokens", json={"chain_id": 31337, "token_address": ZERO_ADDRESS})
    assert (again.status_code, again.json()) == (200, native.json())
    assert len(client.get(f"{API}/tokens").json()) == 50


def test_openapi_documents_429_on_the_limited_routes(app):
    paths = app.openapi()["paths"]
    documented = {(m.upper(), p.removeprefix(API)) for p, ops in paths.items() for m, op in ops.items()
                  if "429" in op["responses"]}
    limited = {(method, path) for method, path, _ in ROUTES.values()}
    per_ip = {("POST", "/auth/google"), ("POST", "/auth/google/code"), ("GET", "/merchant/payments")}
    also_tx_build = {("POST", "/tx/replace")}  # counted with /tx/build
    assert documented == limited | per_ip | also_tx_build


def test_a_refused_client_is_answered_at_once_until_retry_after(chain_env, client, login, monkeypatch):
    """After a 429 the same session's requests to that route are refused before the session lookup
    and the route (api.RefuseWhileLimited) until Retry-After has passed; others are not."""
    login("flood@example.com")
    limit(monkeypatch, "token_metadata", "1/second")
    get = lambda: client.get(f"{API}/token/metadata", params={"chain_id": 31337, "token_address": ZERO_ADDRESS})  # noqa: E731
    assert get().status_code == 200
    assert_limited(get())
    calls = []
    real_lookup = sessions.api_user

    async def counted_lookup(token):
        calls.append(token)
        return await real_lookup(token)

    monkeypatch.setattr(sessions, "api_user", counted_lookup)
    refused = get()
    assert_limited(refused)
    assert refused.headers["Retry-After"] == "1"
    assert calls == []  # answered without looking the session up
    assert client.get(f"{API}/me").status_code == 200  # other routes of this session are served
    assert calls
    deadline = time.monotonic() + 5
    while (answer := get()).status_code == 429:  # the window passes
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert answer.status_code == 200


def test_only_rate_limited_routes_look_up_refusals(chain_env, client, login, monkeypatch):
    """The middleware's lookup (a Redis round trip with REDIS_URL) is made only for the routes that
    document a 429; the others are never refused, so /me and /tokens skip it."""
    login("lookups@example.com")
    looked_up = []
    real = ratelimit.refused_for

    async def counted(key):
        looked_up.append(key[:2])
        return await real(key)

    monkeypatch.setattr(ratelimit, "refused_for", counted)
    assert client.get(f"{API}/me").status_code == 200
    assert client.get(f"{API}/tokens").status_code == 200
    assert looked_up == []
    client.get(f"{API}/token/metadata", params={"chain_id": 31337, "token_address": ZERO_ADDRESS})
    client.post(f"{API}/me/address", json={"address": Account.create().address})
    client.get(f"{API}/assets")
    assert looked_up == [("GET", f"{API}/token/metadata"), ("POST", f"{API}/me/address"), ("GET", f"{API}/assets")]
