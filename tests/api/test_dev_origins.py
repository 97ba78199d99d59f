"""Writes from the loopback aliases of PUBLIC_BASE_URL are accepted in development only."""

import pytest
from starlette.testclient import TestClient

from tests.api.conftest import make_api
from tests.conftest import PRODUCTION_ORIGIN

ALIASES = ["http://localhost", "http://127.0.0.1", "http://[::1]"]


@pytest.mark.parametrize("origin", ALIASES)
def test_development_accepts_every_loopback_name(client, login, origin):
    login()
    resp = client.patch("/api/v1/me/locale", json={"locale": "en"}, headers={"Origin": origin})
    assert resp.status_code == 200, resp.text


@pytest.mark.parametrize("origin", ALIASES + ["http://127.0.0.1:3000"])
def test_production_accepts_only_its_origin(db, production_env, origin):
    with TestClient(make_api(), base_url=PRODUCTION_ORIGIN) as client:
        resp = client.post("/api/v1/auth/logout", headers={"Origin": origin})
        assert resp.status_code == 403 and resp.json() == {"detail": "foreign_origin"}
        assert client.post("/api/v1/auth/logout", headers={"Origin": PRODUCTION_ORIGIN}).status_code == 200
