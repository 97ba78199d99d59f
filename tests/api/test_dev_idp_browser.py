"""The gsi/client stand-in and the authorize popup in real Chromium, under a strict CSP.

A page from the app's origin loads /dev-idp/gsi/client, a click opens the popup, the popup
posts the code back, and the page's own fetch (with the browser's Origin) signs in.
"""

import shutil
import time

import pytest
from fastapi.responses import HTMLResponse

from tests.api.conftest import make_api
from tests.e2e.helpers import CHROMIUM, free_port, launch_chromium, serve_asgi_in_thread
from wallet_app.core.config import get_settings
from wallet_app.dev import idp

pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason="needs Debian chromium")
CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; object-src 'none'"
PAGE = """<!doctype html><html><head><script src="/dev-idp/gsi/client"></script></head>
<body><button id="go">Sign in</button><button id="drive">Drive</button></body></html>"""


@pytest.fixture
def server(db, monkeypatch):
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("PUBLIC_BASE_URL", origin)
    get_settings.cache_clear()
    app = make_api()

    @app.get("/gsi-test")
    def gsi_test_page() -> HTMLResponse:
        return HTMLResponse(PAGE)

    @app.middleware("http")
    async def strict_csp(request, call_next):
        resp = await call_next(request)
        resp.headers["Content-Security-Policy"] = CSP
        return resp

    with serve_asgi_in_thread(app, port):
        yield origin


@pytest.fixture
def page(server, pw):
    browser = launch_chromium(pw)
    context = browser.new_context()
    context.set_default_timeout(15_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.goto(server + "/gsi-test")
    yield pg, errors
    browser.close()


def test_code_client_popup_signs_in(page, server):
    pg, errors = page
    pg.evaluate(
        """async () => {
          const r = await fetch('/api/v1/auth/login-attempt', {method: 'POST', credentials: 'include'});
          window.__nonce = (await r.json()).nonce;
        }"""
    )
    pg.evaluate(
        """([clientId]) => {
          const client = google.accounts.oauth2.initCodeClient({
            client_id: clientId, scope: 'openid email profile', ux_mode: 'popup',
            redirect_uri: 'postmessage', login_hint: 'ivy@example.com', state: window.__nonce,
            callback: (r) => { window.__code = r; },
            error_callback: (e) => { window.__err = e; },
          });
          document.getElementById('go').addEventListener('click', () => client.requestCode());
        }""",
        [idp.DEV_CLIENT_ID],
    )
    with pg.expect_popup() as popup_info:
        pg.click("#go")
    popup = popup_info.value
    pg.wait_for_function("() => window.__code || window.__err")
    result = pg.evaluate("() => window.__code")
    assert result and result["code"].startswith("dev-code-") and result["scope"] == "openid email profile"
    assert result["state"] == pg.evaluate("() => window.__nonce")
    # The library closes the popup once it has the answer (it may already have happened).
    deadline = time.monotonic() + 10
    while not popup.is_closed():
        assert time.monotonic() < deadline, "popup stayed open"
        pg.wait_for_timeout(50)

    me = pg.evaluate(
        """async ([code, state]) => {
          const r = await fetch('/api/v1/auth/google/code', {method: 'POST', credentials: 'include',
            headers: {'Content-Type': 'application/json'}, body: JSON.stringify({code, state, locale: 'ko'})});
          if (!r.ok) return {status: r.status};
          const me = await fetch('/api/v1/me', {credentials: 'include'});
          return {status: me.status, body: await me.json(), cookieVisible: document.cookie.includes('nb_session')};
        }""",
        [result["code"], result["state"]],
    )
    assert me == {"status": 200, "body": {"address": None, "locale": "ko", "hasBackup": False}, "cookieVisible": False}
    assert not [e for e in errors if "Content Security Policy" in e]


def test_token_client_form_popup_and_closing(page, server):
    pg, errors = page
    pg.evaluate(
        """([clientId]) => {
          const client = google.accounts.oauth2.initTokenClient({
            client_id: clientId, scope: 'https://www.googleapis.com/auth/drive.appdata',
            callback: (r) => { window.__tok = r; }, error_callback: (e) => { window.__err = e; },
          });
          document.getElementById('drive').addEventListener(
            'click', () => client.requestAccessToken({prompt: 'consent'}));
        }""",
        [idp.DEV_CLIENT_ID],
    )
    # No account yet: the popup shows the e-mail form; closing it reports popup_closed.
    with pg.expect_popup() as info:
        pg.click("#drive")
    popup = info.value
    popup.wait_for_selector("input[type=email]")
    popup.close()
    pg.wait_for_function("() => window.__err")
    assert pg.evaluate("() => window.__err.type") == "popup_closed"

    with pg.expect_popup() as info:
        pg.click("#drive")
    popup = info.value
    popup.fill("input[type=email]", "jo@example.com")
    popup.click("#continue")
    pg.wait_for_function("() => window.__tok")
    tok = pg.evaluate("() => window.__tok")
    assert tok["token_type"] == "Bearer" and tok["expires_in"] > 0
    assert idp.account_for_access_token(tok["access_token"], tok["scope"]) == (
        idp.subject_for_email("jo@example.com"), "jo@example.com")

    # google.accounts.oauth2.revoke, as Google's: done({successful}); then the token is dead.
    revoke = """(t) => new Promise((done) => google.accounts.oauth2.revoke(t, done))"""
    assert pg.evaluate(revoke, tok["access_token"]) == {"successful": True}
    assert idp.account_for_access_token(tok["access_token"], tok["scope"]) is None
    again = pg.evaluate(revoke, tok["access_token"])
    assert again["successful"] is False and again["error"] == "invalid_token"
    assert not [e for e in errors if "Content Security Policy" in e]
