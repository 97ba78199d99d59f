"""/api/v1/docs in real Chromium under the app's own security headers (core.security): Swagger UI
comes from our origin (no CDN, no inline script) and lists the API's operations."""

import shutil

import pytest

from tests.api.conftest import make_api
from tests.e2e.helpers import CHROMIUM, free_port, launch_chromium, serve_asgi_in_thread
from wallet_app.core.config import get_settings
from wallet_app.core.security import SecurityHeaders

pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason="needs Debian chromium")


@pytest.fixture
def server(db, monkeypatch):
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("PUBLIC_BASE_URL", origin)
    get_settings.cache_clear()
    with serve_asgi_in_thread(SecurityHeaders(make_api()), port):
        yield origin


def test_docs_page_shows_the_operations_under_the_csp(server, pw):
    browser = launch_chromium(pw)
    try:
        page = browser.new_context().new_page()
        page.set_default_timeout(20_000)
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
        page.on("response", lambda r: problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None)
        page.on("request", lambda r: None if r.url.startswith(server) else problems.append(f"foreign: {r.url}"))
        page.add_init_script("document.addEventListener('securitypolicyviolation', "
                             "e => console.error('CSP ' + e.violatedDirective + ' ' + e.blockedURI))")
        response = page.goto(server + "/api/v1/docs")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        spec = page.request.get(server + "/api/v1/openapi.json").json()
        expected = sorted(f"{m.upper()} {p}" for p, item in spec["paths"].items() for m in item)
        blocks = page.locator(".opblock-summary")
        blocks.first.wait_for()
        shown = sorted(
            f"{b.locator('.opblock-summary-method').inner_text()} "
            f"{b.locator('.opblock-summary-path').get_attribute('data-path')}"
            for b in blocks.all())
        assert shown == expected
        assert problems == []
    finally:
        browser.close()


def test_docs_serve_only_their_own_files(client):
    for name, kind in [("swagger-ui.css", "text/css"), ("swagger-ui-bundle.js", "javascript"),
                       ("swagger-init.js", "javascript"), ("favicon-32x32.png", "image/png")]:
        resp = client.get(f"/api/v1/docs/{name}")
        assert resp.status_code == 200 and kind in resp.headers["content-type"], name
    for name in ["index.html", "package.json", "swagger-initializer.js", "..%2F..%2F..%2FREADME.md"]:
        assert client.get(f"/api/v1/docs/{name}").status_code == 404, name
