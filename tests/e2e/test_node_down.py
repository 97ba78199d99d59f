"""The only chain's node stops while a user looks at Home, in Chromium at 390x844: the token list
said "No tokens yet." (a refresh emptied it), as if the wallet had been emptied or a send had
not left. Now the balances shown stay, a notice says in the user's language that that network
could not be read, and a page that has shown nothing yet does not say "No tokens yet."; axe finds
nothing on it in either language. On an app of its own: its chain is stopped for good."""

from __future__ import annotations

import time

import psutil
import pytest
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS, own_app_server
from tests.e2e.flows import create_wallet, new_email
from tests.e2e.flows_send import wait_for_asset
from tests.e2e.test_axe import AXE, Auditor

NOTICE = {
    "en": "Your balances on Newbl Dev (anvil) could not be read just now, so they may be missing or out of date "
    "here. What you hold is not affected. Please try again in a moment.",
    "ko": "지금은 Newbl Dev (anvil)의 잔액을 읽을 수 없어 여기에 빠져 있거나 최신이 아닐 수 있습니다. 보유 자산에는 "
    "영향이 없습니다. 잠시 후 다시 시도해 주세요.",
}


@pytest.fixture(scope="module")
def node_app(tmp_path_factory):
    with own_app_server(tmp_path_factory.mktemp("e2e-nodedown"), "nodedown") as server:
        yield server


def stop_chain(server: helpers.Server) -> None:
    """Stops the anvil the app server started (its only chain's node): its port then refuses."""
    [node] = [p for p in psutil.Process(server.proc.pid).children(recursive=True) if p.name() == "anvil"]
    node.terminate()
    deadline = time.monotonic() + 15
    # Not node.wait(): a child of the server, which reaps it only when it stops (a zombie till then).
    while node.is_running() and node.status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "anvil did not stop"
        time.sleep(0.05)  # polling interval of a wait-for-condition loop


def test_home_says_a_chain_could_not_be_read_and_keeps_its_balances(browser, node_app):
    with helpers.mobile_page(browser, node_app.base_url, DEFAULT_TIMEOUT_MS) as page:
        page.context.add_init_script(path=str(AXE))
        create_wallet(page, new_email("nodedown"))
        wait_for_asset(page, "tUSD")
        page.goto("/home")
        tusd = page.locator(".token-row[data-symbol=tUSD] .token-balance")
        expect(tusd).to_have_text("1,000")
        expect(page.locator("#token-list-unavailable")).to_have_count(0)

        stop_chain(node_app)
        a = Auditor(page)
        page.get_by_role("button", name="Refresh balances").click()
        expect(page.locator("#token-list-unavailable")).to_have_text(NOTICE["en"])
        expect(tusd).to_have_text("1,000")  # what was shown stays
        expect(page.locator("#token-list-empty")).to_have_count(0)
        a.check("home-chain-down")

        a.set_locale("ko")
        page.goto("/home")  # a load of the same tab: its rows are still the page's
        expect(page.locator("#token-list-unavailable")).to_have_text(NOTICE["ko"])
        expect(tusd).to_have_text("1,000")
        a.check("home-chain-down")

        # Another tab: nothing shown before, nothing read now. Not "No tokens yet.".
        other = page.context.new_page()
        other.goto("/home")
        expect(other.get_by_role("heading", level=1)).to_have_text("지갑")
        expect(other.locator("#token-list-unavailable")).to_have_text(NOTICE["ko"])
        expect(other.locator("[aria-busy=true]")).to_have_count(0)
        expect(other.locator(".token-row")).to_have_count(0)
        expect(other.locator("#token-list-empty")).to_have_count(0)
        b = Auditor(other, lang="ko")
        b.check("home-chain-down-nothing-shown")
        a.assert_clean()
        b.assert_clean()
