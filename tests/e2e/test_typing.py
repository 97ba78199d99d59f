"""What a person types and pastes on a phone, in Chromium at 390x844: an IME composing the PIN's
digits (Japanese and Chinese IMEs compose digits, full-width by default; Korean's full-width
mode), driven through the DevTools protocol the way an IME drives the page
(Input.imeSetComposition, then Input.insertText to commit); an address pasted with an invisible
character in it and a full-width amount on /send (services.typed)."""

from __future__ import annotations

from eth_account import Account
from playwright.sync_api import Locator, expect

from tests.e2e import helpers
from tests.e2e.flows import PIN, create_wallet, new_email, pin_field
from tests.e2e.flows_send import KDF_TIMEOUT_MS, fill_send, send_to_sign, wait_for_asset

NETWORK = "Newbl Dev (anvil)"
BULLET = "\u2022"
FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def test_pin_typed_through_an_ime_composition_signs(page, browser_issues):
    create_wallet(page, new_email("ime-pin"))
    send_to_sign(page)
    page.get_by_role("button", name="Confirm").click()
    dialog = page.get_by_role("dialog", name="Enter your PIN")
    field = pin_field(dialog)
    expect(field).to_be_focused()
    cdp = page.context.new_cdp_session(page)

    # The IME shows its growing composition ("1", "13", …), then commits it whole: the first three
    # digits in ASCII, the last three full-width. Before the fix the field was rewritten after each
    # step and the IME sent its whole text again ("1", "13" made 113…: every PIN so typed was
    # refused as wrong), and full-width digits were dropped.
    for part in (PIN[:3], PIN[3:].translate(FULL_WIDTH)):
        for n in range(1, len(part) + 1):
            cdp.send("Input.imeSetComposition", {"text": part[:n], "selectionStart": n, "selectionEnd": n})
        cdp.send("Input.insertText", {"text": part})
    expect(dialog.get_by_test_id("pin-progress")).to_have_text("6 of 6 digits")
    expect(field).to_have_value(BULLET * 6)

    dialog.get_by_role("button", name="Confirm", exact=True).click()
    alert = page.get_by_role("alertdialog")
    expect(alert.get_by_role("heading")).to_have_text("Notice", timeout=KDF_TIMEOUT_MS)
    expect(alert.get_by_role("alert")).to_contain_text("Transaction submitted.")
    browser_issues.assert_clean()


def test_send_takes_a_pasted_address_with_an_invisible_character_and_a_full_width_amount(page, browser_issues):
    """A recipient pasted from a chat app with a zero-width space in it, and an amount typed in an
    IME's full-width mode: they looked right and were refused ('Invalid recipient address: it must
    be 0x followed by 40 hex characters.', 'amount format error: invalid amount'). /sign shows
    the address and amount the person saw."""
    create_wallet(page, new_email("pasted"))
    wait_for_asset(page, "tUSD")
    recipient = Account.create().address
    page.goto("/send")
    fill_send(page, network=NETWORK)
    # The keyboards offered: for an address no autofill, capitals, corrections or spelling; digits
    # for the amount.
    address_field = {"autocomplete": "off", "autocapitalize": "off", "autocorrect": "off",
                     "spellcheck": "false"}
    expect_attributes(page.get_by_label("Recipient address"), address_field)
    expect_attributes(page.get_by_label("Amount"), {"inputmode": "decimal", "autocomplete": "off"})
    for label, var, text in (("Recipient address", "recipient", f"{recipient[:12]}\u200b{recipient[12:]}\u200b"),
                             ("Amount", "amount", "１２．５")):
        since = helpers.received_frames(page)
        page.get_by_label(label).focus()
        page.keyboard.insert_text(text)  # as a paste or an IME's commit puts it in
        helpers.wait_for_state(page, since, var, text)
    page.get_by_role("button", name="Next").click()
    page.wait_for_url("**/sign?tx=**")
    expect(page.locator("#sign-recipient")).to_have_text(recipient)
    expect(page.locator("#sign-amount")).to_have_text("12.5 tUSD")

    page.goto("/home")
    page.get_by_role("button", name="Add token").click()
    expect_attributes(page.get_by_role("dialog").locator("#add-token-address"), address_field)
    browser_issues.assert_clean()


def expect_attributes(field: Locator, attributes: dict[str, str]) -> None:
    for name, value in attributes.items():
        expect(field).to_have_attribute(name, value)
