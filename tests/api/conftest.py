import os
import signal
import warnings

import httpx
import pytest

with warnings.catch_warnings():
    # Starlette asks for `httpx2`; the pinned httpx works (and Authlib uses it too).
    warnings.simplefilter("ignore", UserWarning)
    from starlette.testclient import TestClient

from tools.redisserver import RedisServer
from wallet_app import dev
from wallet_app.api import build_api
from wallet_app.core.config import get_settings
from wallet_app.dev import idp
from wallet_app.services import google

ORIGIN = "http://localhost"  # settings_env's PUBLIC_BASE_URL


def make_api():
    """The API as wallet_app.py builds it: dev.install only in development mode."""
    api = build_api()
    if get_settings().dev_mode:
        dev.install(api)
    return api


@pytest.fixture
def app(db):
    api = make_api()
    # The server's calls to the provider (discovery, JWKS, token) go to this same app in-process.
    google.set_transport(httpx.ASGITransport(app=api))
    yield api
    google.set_transport(None)


@pytest.fixture
def client(app):
    with TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN}) as c:
        yield c


def start_attempt(client) -> str:
    """POST /auth/login-attempt: its nonce (the cookie stays in `client`)."""
    resp = client.post("/api/v1/auth/login-attempt")
    assert resp.status_code == 200, resp.text
    return resp.json()["nonce"]


@pytest.fixture
def login(client):
    """login(email, locale): sign in through POST /auth/google with a dev-IdP ID token."""

    def _login(email="alice@example.com", locale="ko") -> httpx.Response:
        token = idp.issue_id_token(email, nonce=start_attempt(client))
        resp = client.post("/api/v1/auth/google", json={"id_token": token, "locale": locale})
        assert resp.status_code == 200, resp.text
        return resp

    return _login


@pytest.fixture
def redis_env(settings_env, monkeypatch):
    """A private Redis of the test's own as REDIS_URL (the tests that stop or pause it)."""
    with RedisServer() as server:
        monkeypatch.setenv("REDIS_URL", server.url)
        get_settings.cache_clear()
        yield server
        if server.proc and server.proc.poll() is None:
            os.kill(server.proc.pid, signal.SIGCONT)  # a stopped process would not stop on SIGTERM
