"""Starting prints no deprecation. A lost connection: with the server stopped under open pages, each page shows
the short notice in its own language (not Reflex's developer text); with the server started again on the same port,
the notice goes by itself and the page works without a reload."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS, RESULTS_DIR, save_screenshot
from tests.e2e.flows import new_email, sign_in

NOTICE = {"en": "Reconnecting…", "ko": "다시 연결하는 중…"}
SIGN_IN = {"en": "Continue with Google", "ko": "Google로 계속하기"}


@pytest.fixture
def own_server(tmp_path_factory):
    """A throw-away app of this test's own: the test stops and restarts it."""
    workdir = tmp_path_factory.mktemp("e2e-reconnect")
    log_path = RESULTS_DIR / "e2e-reconnect-app-server.log"
    log_path.unlink(missing_ok=True)
    servers = [helpers.start_wallet_app(helpers.module_server_port(), workdir, log_path)]
    try:
        helpers.wait_until_up(servers[0])

        def restart():
            servers.append(helpers.start_wallet_app(servers[0].port, workdir, log_path))
            helpers.wait_until_up(servers[-1])

        yield servers[0], restart
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    finally:
        for server in servers:
            helpers.stop_server(server)


def test_reconnecting_notice_comes_and_goes(browser, own_server):
    server, restart = own_server
    pages, console = {}, {}
    for lang, locale in (("en", "en-US"), ("ko", "ko-KR")):
        ctx = browser.new_context(base_url=server.base_url, locale=locale, **helpers.MOBILE_CONTEXT)
        ctx.set_default_timeout(DEFAULT_TIMEOUT_MS)
        pages[lang] = ctx.new_page()
        console[lang] = []
        pages[lang].on("console", lambda m, lines=console[lang]: lines.append(f"{time.monotonic():.1f} {m.text}"))
    try:
        for lang, page in pages.items():
            page.goto("/")
            expect(page.get_by_role("button", name=SIGN_IN[lang])).to_be_visible()
            expect(page.locator("#connection-notice")).to_have_count(0)
            # The notice's live region is there, empty, before the drop: text put into it is announced.
            expect(page.get_by_role("status").and_(page.locator("#connection-status"))).to_have_text("")
            # Reflex's own overlay is gone: its pulser is always in the page, titled 'Connection Error: …'.
            expect(page.locator("[title^='Connection Error']")).to_have_count(0)

        helpers.stop_server(server)
        stopped = time.monotonic()
        for lang, page in pages.items():
            try:
                expect(page.locator("#connection-notice-text")).to_have_text(NOTICE[lang])
                expect(page.get_by_role("status").and_(page.locator("#connection-status"))).to_have_text(NOTICE[lang])
            except AssertionError as e:  # rare in CI: say what the page's socket code logged
                logged = "\n".join(console[lang])
                raise AssertionError(f"{e}\nstopped at {stopped:.1f}; {lang} console:\n{logged}") from None
            expect(page.get_by_text("Cannot connect to server", exact=False)).to_have_count(0)
            save_screenshot(page, f"reconnecting-{lang}")

        restart()
        for page in pages.values():
            expect(page.locator("#connection-notice")).to_have_count(0, timeout=30_000)
        # The same page, never reloaded, talks to the new server: sign-in goes through.
        page = pages["en"]
        sign_in(page, new_email("reconnect"))
        page.wait_for_url("**/onboarding**")
        expect(page.get_by_role("button", name="1", exact=True)).to_be_visible()
        # Neither start printed a Reflex deprecation (e.g. form controls submitted by id).
        starts = server.log_path.read_text(errors="replace")
        assert "DeprecationWarning" not in starts and "has been deprecated" not in starts
    finally:
        for page in pages.values():
            helpers.close_context(page.context)
