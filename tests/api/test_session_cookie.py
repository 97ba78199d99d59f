"""The session cookie: its name (__Host- over https), HSTS over https, and one rule for a
duplicated cookie (first wins) in the API and in the Reflex handlers alike."""

import pytest
from starlette.testclient import TestClient

from tests.api.conftest import make_api
from tests.conftest import PRODUCTION_ORIGIN
from tests.unit.services.test_sessions import over_socket
from wallet_app.core.security import SecurityHeaders
from wallet_app.services import accounts, sessions

ME = "/api/v1/me"


def two_users() -> tuple[str, str]:
    """Session tokens of two different users."""
    a = accounts.login_user("sub-a", "a@example.com", "en")
    b = accounts.login_user("sub-b", "b@example.com", "ko")
    return sessions.create_session(a.id), sessions.create_session(b.id)


def me_locale(client: TestClient, cookie_header: str) -> str | int:
    resp = client.get(ME, headers={"Cookie": cookie_header})
    return resp.json()["locale"] if resp.status_code == 200 else resp.status_code


def check_first_wins(client: TestClient, name: str) -> None:
    a, b = two_users()
    for header, locale in [
        (f"{name}={a}; {name}={b}", "en"),
        (f"{name}={b}; {name}={a}", "ko"),
        (f"theme=dark; {name}={a}; other=1; {name}=forged", "en"),
    ]:
        assert me_locale(client, header) == locale  # the API (api.deps.session_token)
        assert over_socket(header)[1].locale == locale  # the Reflex handlers
    assert me_locale(client, f"{name}=forged; {name}={a}") == 401
    assert over_socket(f"{name}=forged; {name}={a}")[1] is None


def test_development_over_http(db, client, login):
    set_cookie = login().headers["set-cookie"]
    assert set_cookie.startswith("nb_session=") and "secure" not in set_cookie.lower()
    assert sessions.session_cookie_name() == "nb_session"
    check_first_wins(client, "nb_session")
    assert "strict-transport-security" not in TestClient(SecurityHeaders(make_api())).get(ME).headers


@pytest.fixture
def https_client(db, production_env):
    app = SecurityHeaders(make_api())
    with TestClient(app, base_url=PRODUCTION_ORIGIN, headers={"Origin": PRODUCTION_ORIGIN}) as c:
        yield c


def test_over_https_the_cookie_is_host_prefixed(https_client):
    assert sessions.session_cookie_name() == "__Host-nb_session"
    check_first_wins(https_client, "__Host-nb_session")
    a, _ = two_users()
    assert me_locale(https_client, f"nb_session={a}") == 401  # the unprefixed name (e.g. planted) is not read
    resp = https_client.post("/api/v1/auth/logout", headers={"Cookie": f"__Host-nb_session={a}"})
    cleared = resp.headers["set-cookie"]
    assert cleared.startswith('__Host-nb_session=""') and "; Secure" in cleared and "Path=/" in cleared
    assert "domain=" not in cleared.lower()
    assert me_locale(https_client, f"__Host-nb_session={a}") == 401


@pytest.mark.parametrize("path", [ME, "/api/v1/openapi.json", "/no-such-page"])
def test_hsts_on_every_response_over_https(https_client, path):
    assert https_client.get(path).headers["strict-transport-security"] == "max-age=63072000; includeSubDomains"
