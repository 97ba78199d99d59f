"""A page of another release than the server it reaches (a deploy: the previous and the new release
serve side by side for a while): Reflex reloads it once by itself, and when the reload lands on the
same mismatch it showed a banner of its own, in English for a Korean user too, over the page's
heading. The page shows its own notice instead, in its language, with a Reload button."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS
from tests.e2e.flows import create_wallet, new_email
from tests.e2e.test_axe import _RUN_AXE, AXE

ANOTHER_SCHEMA = "0" * 32


def as_another_release(ws) -> None:
    """The page's socket, whose connect packet names another state schema than the server's: what
    a page built by the previous release sends to the new one."""
    server = ws.connect_to_server()

    def to_server(message) -> None:
        if isinstance(message, str) and message.startswith("40"):
            message = re.sub(r'"state_schema":"[0-9a-f]*"', f'"state_schema":"{ANOTHER_SCHEMA}"', message)
        server.send(message)

    ws.on_message(to_server)


def test_a_page_of_another_release_says_so_in_its_language(browser, app_server):
    ctx = browser.new_context(base_url=app_server.base_url, locale="ko-KR", **helpers.MOBILE_CONTEXT)
    ctx.set_default_timeout(DEFAULT_TIMEOUT_MS)
    ctx.add_init_script(helpers.SOCKET_WATCH)
    ctx.add_init_script(path=str(AXE))
    try:
        page = ctx.new_page()
        page.route_web_socket("**/_event**", as_another_release)
        loads = []
        page.on("load", lambda p: loads.append(p.url))
        page.goto("/")
        notice = page.locator("#new-version-notice")
        expect(notice).to_be_visible(timeout=30_000)
        assert len(loads) == 2, loads  # Reflex's own reload, once, then the notice
        expect(notice).to_have_attribute("role", "alert")
        expect(notice.locator("span")).to_have_text("지갑의 새 버전이 나왔습니다.")
        expect(notice.get_by_role("button")).to_have_text("새로고침")
        expect(page.locator("#reflex-new-version-banner")).to_have_count(0)
        expect(page.get_by_text("A new version of this app is available.")).to_have_count(0)
        for theme in ("light", "dark"):  # axe-core finds nothing, in either theme
            page.emulate_media(color_scheme=theme)
            page.wait_for_function("(t) => document.documentElement.classList.contains(t)", arg=theme)
            assert page.evaluate(_RUN_AXE) == [], theme
        # The page still works behind it, in its language.
        expect(page.get_by_role("button", name="Google로 계속하기")).to_be_visible()
        # Reload reloads (and the mismatch, still there, shows the notice again, never a loop).
        with page.expect_event("load"):
            notice.get_by_role("button", name="새로고침").click()
        expect(page.locator("#new-version-notice")).to_be_visible(timeout=30_000)
        assert len(loads) == 3, loads
    finally:
        helpers.close_context(ctx)


def test_the_notice_stays_when_the_user_moves_to_another_page(page, app_server):
    """The mismatch is told once, when the socket connects; a move to another page of the app (no
    new connection) must not take the notice away: the page is still of the other release."""
    create_wallet(page, new_email("newversion-nav"))
    page.route_web_socket("**/_event**", as_another_release)
    page.reload()
    notice = page.locator("#new-version-notice")
    expect(notice).to_be_visible(timeout=30_000)
    page.get_by_role("navigation").get_by_role("link", name="Activity", exact=True).click()
    page.wait_for_url("**/activity**")
    expect(page.get_by_role("heading", name="Activity", exact=True)).to_be_visible()
    expect(notice).to_be_visible()
    expect(notice.locator("span")).to_have_text("A new version of the wallet is available.")
