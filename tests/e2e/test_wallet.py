"""Issue 3 in Chromium at 390x844: onboarding creates the wallet in the browser; the
materials decrypt with independent Python crypto; Receive QR; device check; PIN pad rules."""

import base64
import json
import re

from cryptography.exceptions import InvalidTag
from eth_account import Account
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.flows import (
    PIN,
    create_wallet,
    decode_qr_png,
    expect_alert,
    local_materials,
    me,
    new_email,
    press_pin,
    sign_in,
    sign_in_to_onboarding,
)
from tests.e2e.vault_py import recover_phrase


def test_onboarding_creates_wallet_that_python_can_recover(page, screenshot, browser_issues):
    address = create_wallet(page, new_email())
    assert re.fullmatch(r"0x[0-9a-f]{40}", address)
    short = f"{address[:6]}…{address[-4:]}"
    expect(page.locator("#home-address")).to_have_text(short)
    screenshot("home")

    materials = local_materials(page, address)
    assert all(materials.values()), materials
    assert json.loads(materials["kdfParams"]) == {"t": 3, "m": 262144, "p": 1}
    assert len(base64.b64decode(materials["kdfSaltB"])) == 16
    assert len(base64.b64decode(materials["devSecret"])) == 32
    assert len(base64.b64decode(materials["lwrapIv"])) == 12
    words = recover_phrase(materials, PIN)
    assert len(words.split(" ")) == 12
    assert Account.from_mnemonic(words, account_path="m/44'/60'/0'/0/0").address.lower() == address
    try:
        recover_phrase(materials, "000000" if PIN != "000000" else "111111")
        raise AssertionError("a wrong PIN decrypted the wallet")
    except InvalidTag:
        pass
    browser_issues.assert_clean()


def test_copy_address_and_receive_qr(browser, app_server, screenshot):
    ctx = browser.new_context(base_url=app_server.base_url, viewport={"width": 390, "height": 844})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"])
    try:
        page = ctx.new_page()
        address = create_wallet(page, new_email())
        page.get_by_role("button", name="Copy address").click()
        page.wait_for_function("(a) => navigator.clipboard.readText().then((t) => t === a)", arg=address)
        page.get_by_role("button", name="Receive").click()
        dialog = page.get_by_role("dialog")
        image = dialog.locator("img")
        expect(image).to_have_attribute("width", "220")
        screenshot("receive", page)
        assert decode_qr_png(image.screenshot()) == address
        dialog.get_by_role("button", name="Close").click()
        expect(dialog).to_have_count(0)
    finally:
        helpers.close_context(ctx)


def test_onboarding_left_open_in_another_tab_replaces_no_wallet(page):
    """The session cookie is the browser's, not the tab's. A tab left on /onboarding registered
    its new wallet over the one the account got meanwhile in another tab (no replacement asked),
    and over another Google account's signed in since in the browser: that account then showed a
    wallet the first account's PIN opens."""
    sign_in_to_onboarding(page, new_email("one"))
    other_tab = page.context.new_page()
    other_tab.goto("/onboarding")
    press_pin(other_tab)
    other_tab.wait_for_url("**/home**", timeout=60_000)
    first = me(other_tab)["address"]
    press_pin(page)  # the tab loaded before the account had a wallet
    expect_alert(page, "This account's wallet changed in another tab or browser, so it was not replaced. "
                       "Reload the page.")
    assert me(page)["address"] == first

    # Another Google account signs in in the other tab; this one's wallet is made on the stale page.
    assert page.request.post("/api/v1/auth/logout").ok
    page.goto("/")
    sign_in(page, new_email("two"), button="Sign in with another Google account")
    page.wait_for_url("**/onboarding**")
    other_tab.goto("/onboarding")
    other_tab.get_by_role("button", name="Sign in again").click()
    other_tab.wait_for_url(re.compile(r"^https?://[^/]+/$"))
    sign_in(other_tab, new_email("three"), button="Sign in with another Google account")
    other_tab.wait_for_url("**/onboarding**")
    press_pin(other_tab)
    other_tab.wait_for_url("**/home**", timeout=60_000)
    third = me(other_tab)["address"]
    press_pin(page)
    page.wait_for_url(re.compile(r"^https?://[^/]+/$"), timeout=60_000)  # its own session has ended
    assert me(other_tab)["address"] == third
    other_tab.reload()
    expect(other_tab.locator("#home-address")).to_have_text(f"{third[:6]}…{third[-4:]}")


def test_pin_pad_rules(page):
    sign_in_to_onboarding(page, new_email())
    cont = page.get_by_role("button", name="Continue")
    expect(cont).to_be_disabled()
    press_pin(page, "12345")
    expect(cont).to_be_disabled()
    page.get_by_role("button", name="Delete").click()
    press_pin(page, "9")
    expect(cont).to_be_disabled()  # still 5 digits
    # The PIN is never rendered as text.
    assert "12349" not in page.locator("body").inner_text()
    press_pin(page, "0")  # the sixth digit submits by itself
    page.wait_for_url("**/home**", timeout=60_000)


def test_device_check_without_materials_or_backup_goes_to_onboarding(page):
    address = create_wallet(page, new_email())
    page.evaluate("() => localStorage.clear()")
    page.goto("/settings")
    expect_alert(page, "No backup file on Google Drive. Redirecting to onboarding.", title="Notice")
    page.wait_for_url("**/onboarding**")
    # The account already has an address: a new wallet needs an explicit confirmation.
    expect(page.get_by_role("checkbox")).to_be_visible()
    press_pin(page, PIN)
    expect(page).to_have_url(re.compile(r"/onboarding"))
    assert me(page)["address"] == address


def test_device_check_after_a_move_within_the_app_stays_on_the_new_page(page):
    """The bottom bar moves within the app (no page load). The new page's report went out with the
    previous page's route (Reflex reads the route from a ref its provider updates after the page's
    own effects), so the notice was bound to /home, flashed on /card, and /card's session check
    closed it: the user stayed on a page without the wallet's materials and nothing said so."""
    create_wallet(page, new_email())
    helpers.wait_for_sent(page, '.device_checked","payload":{"status":"present"}')  # /home's own check
    page.evaluate("() => localStorage.clear()")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Card").click()
    page.wait_for_url("**/card**")
    expect_alert(page, "No backup file on Google Drive. Redirecting to onboarding.", title="Notice")
    page.wait_for_url("**/onboarding**")


def test_device_check_runs_when_tab_becomes_visible(page):
    create_wallet(page, new_email())
    page.evaluate("() => localStorage.clear()")
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    expect_alert(page, "No backup file on Google Drive. Redirecting to onboarding.", title="Notice", ok=None)


def test_a_tab_shown_again_after_a_sign_out_elsewhere_goes_to_login(page):
    """A tab left open on the wallet after a sign-out in another tab (or a session ended elsewhere)
    kept showing the account's address, balances and activity when the device was picked up again."""
    address = create_wallet(page, new_email())
    expect(page.locator("#home-address")).to_have_text(f"{address[:6]}…{address[-4:]}")
    assert page.request.post("/api/v1/auth/logout").ok  # the browser's cookie: as another tab's Log out
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    page.wait_for_url(re.compile(r"^https?://[^/]+/$"))
    expect(page.get_by_role("button", name="Continue with Google")).to_be_visible()
    expect(page.locator("#home-address")).to_have_count(0)

