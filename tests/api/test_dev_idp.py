"""The development identity provider end to end: authorize popup -> code -> /auth/google/code."""

import html
import json
import re

import pytest
from joserfc import jwt

from tests.api.conftest import start_attempt
from wallet_app.dev import idp
from wallet_app.services import google
from wallet_app.services.sessions import SESSION_COOKIE

DRIVE = "https://www.googleapis.com/auth/drive.appdata"


def authorize_params(**extra) -> dict:
    return {
        "client_id": idp.DEV_CLIENT_ID,
        "redirect_uri": "postmessage",
        "response_type": "code",
        "scope": "openid email profile",
        **extra,
    }


def meta(page: str, name: str) -> str | None:
    m = re.search(rf'<meta name="{name}" content="([^"]*)">', page)
    return html.unescape(m.group(1)) if m else None


def popup_message(page: str) -> dict:
    """What popup.js would postMessage to the opener."""
    raw = meta(page, "nb-idp-result")
    assert raw is not None, page
    return json.loads(raw)


def assert_strict_csp_friendly(page: str) -> None:
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.S)
    assert scripts and all(body.strip() == "" for body in scripts)  # no inline code
    assert all("src=" in tag for tag in re.findall(r"<script[^>]*>", page))
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", page, flags=re.I)  # no onclick=… handlers


def test_discovery_and_jwks(client):
    conf = client.get("/dev-idp/.well-known/openid-configuration").json()
    assert conf["issuer"] == "http://localhost/dev-idp"
    assert conf["token_endpoint"] == "http://localhost/dev-idp/token"
    keys = client.get("/dev-idp/jwks").json()["keys"]
    assert len(keys) == 1 and keys[0]["kty"] == "RSA" and keys[0]["kid"]
    assert "d" not in keys[0] and "p" not in keys[0]  # public part only


def test_signing_key_survives_restart(settings_env):
    first = idp.signing_key()
    idp._keys.clear()  # a new process reads the same file
    assert idp.signing_key().as_dict() == first.as_dict()
    assert oct(settings_env.dev_idp_key_file.stat().st_mode & 0o777) == "0o600"


def code_for(client, email: str, state: str, **extra) -> str:
    page = client.get("/dev-idp/authorize", params=authorize_params(login_hint=email, state=state, **extra))
    return popup_message(page.text)["code"]


def test_code_flow_end_to_end(client):
    state = start_attempt(client)
    page = client.get("/dev-idp/authorize", params=authorize_params(login_hint="Carol@Example.com", state=state))
    assert page.status_code == 200
    assert_strict_csp_friendly(page.text)
    msg = popup_message(page.text)
    assert set(msg) >= {"code", "scope", "authuser", "prompt"} and msg["state"] == state
    assert msg["scope"] == "openid email profile"

    resp = client.post("/api/v1/auth/google/code", json={"code": msg["code"], "state": msg["state"], "locale": "en"})
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"address": None, "locale": "en", "hasBackup": False}
    assert resp.cookies.get(SESSION_COOKIE)
    assert client.get("/api/v1/me").status_code == 200

    # A code works once (a new attempt, so that the code is what is refused).
    again = client.post(
        "/api/v1/auth/google/code", json={"code": msg["code"], "state": start_attempt(client), "locale": "en"}
    )
    assert again.status_code == 401 and again.json() == {"detail": "code_exchange_refused"}


def test_same_email_same_account_through_both_routes(client):
    state = start_attempt(client)
    code = code_for(client, "dan@example.com", state)
    client.post("/api/v1/auth/google/code", json={"code": code, "state": state, "locale": "ko"})
    client.post("/api/v1/me/address", json={"address": "0x" + "cd" * 20})
    client.cookies.clear()
    token = idp.issue_id_token("dan@example.com", nonce=start_attempt(client))
    resp = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    assert resp.json() == {"address": "0x" + "cd" * 20, "locale": "ko", "hasBackup": False}


@pytest.mark.parametrize("code", ["dev-code-made-up", "garbage code", "\u00e9\u2028", "x" * 2048])
def test_unknown_or_malformed_code_is_the_clients_error(client, code):
    """Issue 12 item 7: a garbage code answered 502 (Authlib's UnicodeEncodeError was taken for
    the provider being down); any code the provider cannot accept is a 401."""
    resp = client.post("/api/v1/auth/google/code", json={"code": code, "state": start_attempt(client), "locale": "ko"})
    assert resp.status_code == 401 and resp.json() == {"detail": "code_exchange_refused"}
    assert client.get("/api/v1/me").status_code == 401


def test_code_flow_state_must_match_the_attempt(client):
    state = start_attempt(client)
    missing = client.post(
        "/api/v1/auth/google/code", json={"code": code_for(client, "f@example.com", state), "locale": "ko"}
    )
    assert missing.status_code == 422  # state is required

    wrong = client.post(
        "/api/v1/auth/google/code",
        json={"code": code_for(client, "f@example.com", state), "state": "other", "locale": "ko"},
    )
    assert wrong.status_code == 401 and wrong.json() == {"detail": "login_attempt_mismatch"}
    # The refused request used the attempt up: the right state no longer works either.
    reused = client.post(
        "/api/v1/auth/google/code",
        json={"code": code_for(client, "f@example.com", state), "state": state, "locale": "ko"},
    )
    assert reused.status_code == 401 and reused.json() == {"detail": "login_attempt_expired"}

    state = start_attempt(client)
    ok = client.post(
        "/api/v1/auth/google/code",
        json={"code": code_for(client, "f@example.com", state), "state": state, "locale": "ko"},
    )
    assert ok.status_code == 200, ok.text
    assert "nb_login_attempt" not in client.cookies  # consumed
    replay = client.post(
        "/api/v1/auth/google/code",
        json={"code": code_for(client, "f@example.com", state), "state": state, "locale": "ko"},
    )
    assert replay.status_code == 401 and replay.json() == {"detail": "login_attempt_expired"}


def test_nonce_of_the_authorization_request_is_in_the_id_token(client):
    code = code_for(client, "g@example.com", "s", nonce="n-123")
    form = {
        "grant_type": "authorization_code",
        "redirect_uri": "postmessage",
        "client_id": idp.DEV_CLIENT_ID,
        "client_secret": idp.DEV_CLIENT_SECRET,
    }
    body = client.post("/dev-idp/token", data={**form, "code": code}).json()
    claims = jwt.decode(body["id_token"], idp.signing_key()).claims
    assert claims["nonce"] == "n-123" and claims["email"] == "g@example.com"
    plain = client.post("/dev-idp/token", data={**form, "code": code_for(client, "g@example.com", "s")}).json()
    assert "nonce" not in jwt.decode(plain["id_token"], idp.signing_key()).claims


def test_form_page_without_hint_then_submit(client):
    page = client.get("/dev-idp/authorize", params=authorize_params(state="xyz"))
    assert page.status_code == 200
    assert 'type="email"' in page.text and 'id="cancel"' in page.text
    assert meta(page.text, "nb-idp-result") is None
    assert_strict_csp_friendly(page.text)

    bad = client.post("/dev-idp/authorize", data={**authorize_params(state="xyz"), "email": "not-an-email"})
    assert 'role="alert"' in bad.text and meta(bad.text, "nb-idp-result") is None

    state = start_attempt(client)
    done = client.post("/dev-idp/authorize", data={**authorize_params(state=state), "email": "erin@example.com"})
    msg = popup_message(done.text)
    assert msg["state"] == state
    resp = client.post("/api/v1/auth/google/code", json={"code": msg["code"], "state": state, "locale": "ko"})
    assert resp.status_code == 200


def test_select_account_shows_the_page_despite_hint(client):
    page = client.get(
        "/dev-idp/authorize", params=authorize_params(login_hint="a@example.com", prompt="select_account")
    )
    assert meta(page.text, "nb-idp-result") is None and 'type="email"' in page.text


def test_remembered_account_is_used_like_a_hint(client):
    client.get("/dev-idp/authorize", params=authorize_params(login_hint="frank@example.com"))
    # The token client asks later, with no hint, for Drive access: no page, same subject.
    page = client.get(
        "/dev-idp/authorize", params=authorize_params(response_type="token", scope=DRIVE, prompt="consent")
    )
    msg = popup_message(page.text)
    account = (idp.subject_for_email("frank@example.com"), "frank@example.com")
    assert idp.account_for_access_token(msg["access_token"], DRIVE) == account


def test_prompt_none_without_account_reports_interaction_required(client):
    page = client.get("/dev-idp/authorize", params=authorize_params(prompt="none"))
    assert popup_message(page.text)["error"] == "interaction_required"


def test_token_client_access_token(client):
    page = client.get(
        "/dev-idp/authorize",
        params=authorize_params(response_type="token", scope=DRIVE, login_hint="gina@example.com"),
    )
    msg = popup_message(page.text)
    assert msg["token_type"] == "Bearer" and msg["scope"] == DRIVE and msg["expires_in"] > 0
    assert "code" not in msg and "id_token" not in msg
    account = (idp.subject_for_email("gina@example.com"), "gina@example.com")
    assert idp.account_for_access_token(msg["access_token"], DRIVE) == account
    assert idp.account_for_access_token(msg["access_token"], "https://www.googleapis.com/auth/drive") is None
    assert idp.account_for_access_token("dev-at-made-up", DRIVE) is None


def test_token_endpoint_checks_client_and_issues_id_token(client):
    def code():
        page = client.get(
            "/dev-idp/authorize", params=authorize_params(scope=f"openid email {DRIVE}", login_hint="h@example.com")
        )
        return popup_message(page.text)["code"]

    form = {"grant_type": "authorization_code", "redirect_uri": "postmessage", "client_id": idp.DEV_CLIENT_ID}
    wrong = client.post("/dev-idp/token", data={**form, "code": code(), "client_secret": "wrong"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"

    ok = client.post("/dev-idp/token", data={**form, "code": code(), "client_secret": idp.DEV_CLIENT_SECRET})
    body = ok.json()
    assert ok.status_code == 200 and body["token_type"] == "Bearer" and body["id_token"]
    assert ok.headers["cache-control"] == "no-store"
    account = (idp.subject_for_email("h@example.com"), "h@example.com")
    assert idp.account_for_access_token(body["access_token"], DRIVE) == account

    basic = client.post(
        "/dev-idp/token",
        data={"grant_type": "authorization_code", "code": code(), "redirect_uri": "postmessage"},
        auth=(idp.DEV_CLIENT_ID, idp.DEV_CLIENT_SECRET),
    )
    assert basic.status_code == 200


@pytest.mark.parametrize(
    "params",
    [
        authorize_params(client_id="someone-else"),
        authorize_params(redirect_uri="https://evil.example/cb"),
        authorize_params(response_type="id_token"),
        authorize_params(scope=""),
    ],
)
def test_bad_authorize_requests(client, params):
    page = client.get("/dev-idp/authorize", params={**params, "login_hint": "a@example.com"})
    assert page.status_code == 400 and meta(page.text, "nb-idp-result") is None


def test_scripts_are_served_as_javascript(client):
    for path in ("/dev-idp/gsi/client", "/dev-idp/static/popup.js"):
        resp = client.get(path)
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/javascript")
    assert "initCodeClient" in client.get("/dev-idp/gsi/client").text
    assert client.get("/dev-idp/static/../idp.py").status_code == 404
    assert client.get("/dev-idp/static/idp.py").status_code == 404


def test_browser_facing_helpers_in_dev(app):  # the app: built with dev.install
    assert google.browser_client_id() == idp.DEV_CLIENT_ID
    assert google.gsi_script_url() == "/dev-idp/gsi/client"
    assert google.issuer() == "http://localhost/dev-idp"
