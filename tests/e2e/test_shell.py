"""Issue 2 in Chromium at 390x844: sign-in, redirects, language, bottom navigation, PWA shell."""

import re
import time

import httpx
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.flows import create_wallet, expect_alert, me, new_email, sign_in, sign_in_to_onboarding
from tests.e2e.flows_send import wait_for_asset

NAV_LABELS = ["Home", "Card", "Activity", "Settings"]
# The login page itself: "/$" alone also matches the pages' own URLs ("/onboarding/", "/home/"),
# so a wait for it passed before any navigation.
LOGIN_URL = re.compile(r"^https?://[^/]+/$")


def nav(page):
    return page.get_by_role("navigation", name="Main")


def test_sign_in_through_dev_provider_lands_on_onboarding(page, browser_issues, screenshot):
    page.goto("/")
    expect(page.get_by_role("heading", name="Newbl Wallet")).to_be_visible()
    expect(page.get_by_text("Non-custodial wallet for mobile browsers")).to_be_visible()
    expect(page.get_by_role("button", name="Sign in with another Google account")).to_be_visible()
    expect(page.get_by_role("button", name="Continue with Google")).to_be_enabled()
    screenshot("login")
    email = new_email()
    sign_in(page, email)
    page.wait_for_url("**/onboarding**")
    expect(page.get_by_role("heading", name="Create your PIN")).to_be_visible()
    expect(page.get_by_role("button", name="Sign in again")).to_be_visible()
    expect(nav(page)).to_have_count(0)
    screenshot("onboarding")
    account = me(page)
    assert account["address"] is None and account["hasBackup"] is False and account["locale"] == "en"
    browser_issues.assert_clean()


def test_logged_out_visits_go_to_login(page):
    for path in ["/home", "/settings", "/onboarding", "/no-such-page"]:
        page.goto(path)
        page.wait_for_url(LOGIN_URL)
        expect(page.get_by_role("button", name="Continue with Google")).to_be_visible()
    assert page.request.get("/api/v1/me").status == 401


def test_unknown_path_goes_home_when_logged_in(page):
    create_wallet(page, new_email())
    page.goto("/no-such-page")
    page.wait_for_url("**/home**")


def test_bottom_navigation_rules(page, screenshot):
    page.goto("/")
    expect(nav(page)).to_have_count(0)
    create_wallet(page, new_email())
    expect(nav(page)).to_be_visible()
    links = nav(page).get_by_role("link")
    expect(links).to_have_count(4)
    for i, label in enumerate(NAV_LABELS):
        expect(links.nth(i)).to_have_text(label)
    nav(page).get_by_role("link", name="Card").click()
    page.wait_for_url("**/card**")
    page.get_by_role("button", name="Issue card").click()
    expect_alert(page, "Not supported yet.", title="Notice")
    screenshot("card")
    nav(page).get_by_role("link", name="Settings").click()
    page.wait_for_url("**/settings**")
    expect(nav(page).get_by_role("link", name="Settings")).to_have_attribute("aria-current", "page")
    screenshot("settings")
    # Mobile layout: nothing is wider than the phone.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_language_switch_survives_reload_and_follows_server_after_login(browser, app_server, page):
    # An English account exists on the server.
    email = new_email("lang")
    sign_in_to_onboarding(page, email)
    assert me(page)["locale"] == "en"

    # A new device in Korean: the stored choice wins over the browser language, across reloads.
    ctx = browser.new_context(base_url=app_server.base_url, viewport={"width": 390, "height": 844},
                              locale="en-US")
    try:
        other = ctx.new_page()
        other.goto("/")
        other.get_by_role("radio", name="한국어").click()
        expect(other.get_by_role("button", name="Google로 계속하기")).to_be_visible()
        other.reload()
        expect(other.get_by_role("button", name="Google로 계속하기")).to_be_visible()
        assert other.evaluate("() => localStorage.getItem('nb.lang')") == "ko"
        # After login the server's locale decides.
        sign_in(other, email, button="Google로 계속하기")
        other.wait_for_url("**/onboarding**")
        expect(other.get_by_role("heading", name="Create your PIN")).to_be_visible()
    finally:
        helpers.close_context(ctx)


def test_korean_browser_defaults_to_korean_and_change_is_saved(browser, app_server):
    ctx = browser.new_context(base_url=app_server.base_url, viewport={"width": 390, "height": 844},
                              locale="ko-KR")
    try:
        page = ctx.new_page()
        page.goto("/")
        expect(page.get_by_role("heading", name="Newbl 지갑")).to_be_visible()
        tagline = page.get_by_text("모바일 브라우저를 위한 비수탁형 지갑")
        expect(tagline).to_be_visible()
        # Korean lines break between words, not between any two syllables (the browser's default).
        assert tagline.evaluate("e => getComputedStyle(e).wordBreak") == "keep-all"
        # A new account takes the language the login page was in.
        sign_in(page, new_email("ko"), button="Google로 계속하기")
        page.wait_for_url("**/onboarding**")
        assert me(page)["locale"] == "ko"
        expect(page.get_by_role("heading", name="PIN 만들기")).to_be_visible()
    finally:
        helpers.close_context(ctx)


def test_settings_language_change_saves_to_server(page):
    create_wallet(page, new_email())
    page.goto("/settings")
    page.get_by_role("radio", name="한국어").click()
    expect(page.get_by_role("heading", name="설정")).to_be_visible()
    expect(page.get_by_role("link", name="홈")).to_be_visible()
    page.wait_for_function("() => localStorage.getItem('nb.lang') === 'ko'")
    assert me(page)["locale"] == "ko"
    page.reload()
    expect(page.get_by_role("heading", name="설정")).to_be_visible()


def test_logout_revokes_session(page):
    create_wallet(page, new_email())
    page.goto("/settings")
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(LOGIN_URL)
    expect(page.get_by_role("button", name="Continue with Google")).to_be_visible()
    assert page.request.get("/api/v1/me").status == 401
    page.goto("/home")
    page.wait_for_url(LOGIN_URL)


def test_sign_out_sends_the_tab_nothing_of_the_account(page):
    """Reflex kept a tab's page state under the token in its sessionStorage across a sign-out: the
    signed-out page (and the next account's, in the same tab) was sent the last account's address,
    balances and token list. After the sign-out no websocket frame carries any of it."""
    address = create_wallet(page, new_email())
    wait_for_asset(page, "tUSD")  # the faucet's tokens (after its gas), which may come late on a loaded machine
    page.goto("/home")
    expect(page.get_by_text("1,000").first).to_be_visible()  # the balances are in the page's state
    page.goto("/settings")
    helpers.wait_for_hydrated(page)  # its socket is open: only those of the signed-out pages are heard
    received: list[str] = []
    page.on("websocket", lambda ws: ws.on(
        "framereceived", lambda payload: received.append(payload if isinstance(payload, str) else "")))
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(LOGIN_URL)
    expect(page.get_by_role("button", name="Continue with Google")).to_be_visible()
    page.goto("/home")  # a signed-in page's state too: it sends the tab to /
    page.wait_for_url(LOGIN_URL)
    expect(page.get_by_role("button", name="Continue with Google")).to_be_visible()
    assert received, "the signed-out page's socket received nothing"
    marks = (address[2:].lower(), '"1,000"')
    leaked = [f.lower()[max(0, f.lower().find(m) - 200):][:300] for f in received for m in marks if m in f.lower()]
    assert leaked == []


def test_relogin_button_on_onboarding_logs_out(page):
    sign_in_to_onboarding(page, new_email())
    page.get_by_role("button", name="Sign in again").click()
    page.wait_for_url(LOGIN_URL)
    expect(page.get_by_role("button", name="Continue with Google")).to_be_visible()
    assert page.request.get("/api/v1/me").status == 401


def test_service_worker_and_manifest(browser, app_server):
    ctx = browser.new_context(base_url=app_server.base_url, viewport={"width": 390, "height": 844})
    try:
        _check_service_worker(ctx.new_page())
    finally:
        helpers.close_context(ctx)


def _check_service_worker(page):
    page.goto("/")
    scope = page.evaluate(
        "() => Promise.race([navigator.serviceWorker.ready.then((r) => r.scope + '|' + r.active.scriptURL),"
        " new Promise((resolve) => setTimeout(() => resolve('not ready after 15 s'), 15000))])"
    )
    assert scope.endswith("/|" + page.url.split("/")[0] + "//" + page.url.split("/")[2] + "/sw.js")
    manifest = page.request.get("/manifest.webmanifest").json()
    assert manifest["display"] == "standalone"
    assert {i["sizes"] for i in manifest["icons"]} >= {"192x192", "512x512"}
    # The worker never caches API answers.
    cached = page.evaluate(
        "async () => { const out = []; for (const k of await caches.keys()) {"
        " const c = await caches.open(k); for (const r of await c.keys()) out.push(new URL(r.url).pathname); }"
        " return out; }"
    )
    assert "/" in cached
    assert not [p for p in cached if p.startswith("/api/")]
    # A page is kept under its path alone: a query (a transaction to sign, a payment link) is not
    # stored on the device, one entry per link.
    page.goto("/payment?merchant=0x1111111111111111111111111111111111111111&amount=5")
    _wait_for_caches(
        page,
        "async () => { for (const k of await caches.keys()) { const c = await caches.open(k);"
        " if ((await c.keys()).some((r) => new URL(r.url).pathname.startsWith('/payment'))) return true; }"
        " return false; }"
    )
    urls = page.evaluate(
        "async () => { const out = []; for (const k of await caches.keys()) {"
        " const c = await caches.open(k); for (const r of await c.keys()) out.push(r.url); } return out; }"
    )
    assert [u for u in urls if "?" in u] == []


_CACHED_PATHS = (
    "async () => { const out = []; for (const k of await caches.keys()) {"
    " const c = await caches.open(k); for (const r of await c.keys()) out.push(new URL(r.url).pathname); }"
    " return out; }"
)


def _wait_for_caches(page, script: str, arg=None, timeout: float = 15) -> None:
    """Wait until the async `script` (it reads Cache Storage) answers true: wait_for_function takes
    the promise an async function returns for a true answer."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(script, arg):
        assert time.monotonic() < deadline, f"not true within {timeout} s: {script}"
        page.wait_for_timeout(100)  # polling interval of the condition above


def test_service_worker_drops_the_chunks_of_an_earlier_build(browser, app_server):
    """sw.js does not change with a deploy, so neither did its cache's name: the chunks of every
    build the phone ever ran were kept. A page of a new build drops those no cached page names; the
    chunks a cached page of the earlier build names stay (offline, that page would break)."""
    ctx = browser.new_context(base_url=app_server.base_url, viewport={"width": 390, "height": 844})
    try:
        page = ctx.new_page()
        page.goto("/")
        page.evaluate("() => navigator.serviceWorker.ready")
        page.reload()  # now through the worker: it notes the build
        _wait_for_caches(page, "async () => !!(await caches.match('/__newbl-build'))")
        current = page.evaluate("async () => (await caches.match('/__newbl-build')).text()")
        assert re.fullmatch(r"/assets/manifest-[0-9a-f]+\.js", current), current
        # What a phone holds after an earlier build: its chunks, a page of it still cached (/send
        # naming one of them), and that build noted as the last one.
        page.evaluate(
            """async () => { const c = await caches.open('newbl-shell-v2');
               await c.put('/assets/old-build-chunk-AAAAAAAA.js', new Response('old'));
               await c.put('/assets/old-build-named-BBBBBBBB.js', new Response('old, named'));
               await c.put('/send', new Response(
                 '<html><script type="module" src="/assets/old-build-named-BBBBBBBB.js"></script></html>',
                 {headers: {'Content-Type': 'text/html'}}));
               await c.put('/__newbl-build', new Response('/assets/manifest-00000000.js')); }"""
        )
        kept = [p for p in page.evaluate(_CACHED_PATHS) if p.startswith("/assets/") and "old-build" not in p]
        assert kept
        page.reload()
        _wait_for_caches(page, "async (build) => (await (await caches.match('/__newbl-build')).text()) === build",
                         current)
        _wait_for_caches(page, "async () => !(await caches.match('/assets/old-build-chunk-AAAAAAAA.js'))")
        html = page.request.get("/").text()
        still = [p for p in page.evaluate(_CACHED_PATHS) if p.startswith("/assets/")]
        assert {p for p in kept if p in html} <= set(still)  # the page's own chunks stay
        # The chunk the earlier build's cached /send names stays: offline, /send still opens.
        assert "/assets/old-build-named-BBBBBBBB.js" in still, still
    finally:
        helpers.close_context(ctx)


def test_security_headers(page):
    scripts = []
    page.on("response", lambda r: scripts.append(r) if r.request.resource_type == "script" else None)
    response = page.goto("/")
    csp = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp
    assert "unsafe-eval" not in csp.replace("wasm-unsafe-eval", "")
    assert "script-src 'self' 'sha256-" in csp
    assert response.headers["cross-origin-opener-policy"] == "same-origin-allow-popups"
    assert response.headers["permissions-policy"] == "camera=(self), microphone=(), geolocation=()"
    # The page's scripts: the short policy (a browser ignores a script's own), no document-only headers.
    page.wait_for_load_state("networkidle")
    chunks = [r for r in scripts if "/assets/" in r.url]
    assert len(chunks) > 5
    for r in chunks:
        headers = r.all_headers()
        assert headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'", r.url
        assert headers["x-content-type-options"] == "nosniff", r.url
        assert "cross-origin-opener-policy" not in headers and "permissions-policy" not in headers, r.url
    # Workers take their policy from their own script: the full one.
    for path in ("/sw.js", "/kdf-worker.js"):
        worker_csp = page.request.get(path).headers["content-security-policy"]
        assert "script-src 'self' 'sha256-" in worker_csp and "frame-ancestors 'none'" in worker_csp, path
    assert "'wasm-unsafe-eval'" in page.request.get("/kdf-worker.js").headers["content-security-policy"]


def test_api_answers_carry_cors_headers_once(page, app_server):
    """One CORSMiddleware answers for the API and the pages alike (Reflex's): a cross-origin read
    from the app's own origin is allowed once, and a preflight is answered."""
    origin = app_server.base_url.rstrip("/")
    answer = page.request.get("/api/v1/health", headers={"Origin": origin})
    headers = [(h["name"].lower(), h["value"]) for h in answer.headers_array]
    assert [v for k, v in headers if k == "access-control-allow-origin"] == [origin]
    assert [v for k, v in headers if k == "vary"] == ["Origin"]
    preflight = page.request.fetch("/api/v1/me/locale", method="OPTIONS", headers={
        "Origin": origin, "Access-Control-Request-Method": "PATCH"})
    assert (preflight.status, preflight.headers["access-control-allow-origin"]) == (200, origin)


def test_head_of_an_api_route_is_answered_as_its_get(app_server):
    """Uptime monitors and some load balancers check health with HEAD: through the served app (the
    pages mounted under the API) it got the pages' 404 page; now the GET's status and headers."""
    with httpx.Client(base_url=app_server.base_url, timeout=30) as client:
        for path, status in (("/api/v1/health", 200), ("/api/v1/me", 401)):
            got, head = client.get(path), client.head(path)
            assert (head.status_code, head.content) == (status, b""), path
            assert got.status_code == status, path
            assert head.headers["content-type"] == got.headers["content-type"] == "application/json", path
            assert head.headers["content-length"] == got.headers["content-length"], path
