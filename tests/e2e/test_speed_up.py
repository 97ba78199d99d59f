"""Issue 14 item 4 in Chromium at 390x844 on the app's anvil with mining paused: a pending send is
sped up (or cancelled) from Activity through /sign and the PIN; the chain mines one transaction
of the nonce, the funds move once (or not at all), and Activity marks the other one replaced
(or cancelled). A replacement of a send mined meanwhile is refused in the user's language."""

from __future__ import annotations

import base64
import json
import re

from eth_account import Account
from playwright.sync_api import Page, expect
from web3 import Web3
from web3.exceptions import TransactionNotFound

from tests.anvil_mining import mine, mining_paused
from tests.e2e.flows import PIN, create_wallet, expect_alert, new_email, pin_field, set_language
from tests.e2e.flows_send import KDF_TIMEOUT_MS, confirm_with_pin, token_balance, wait_for_asset, web3_of
from tests.e2e.test_activity import submit_transfer
from tests.e2e.test_keyboard_a11y import tab_to
from wallet_app.services.amounts import format_balance

AMOUNT = 2_500_000  # 2.5 tUSD


def short(h: str) -> str:
    return f"{h[:6]}…{h[-4:]}"


def fee(tx: dict) -> str:
    return f"{format_balance(int(tx['gas_limit']) * int(tx['gas_price']), 18, max_decimals=18)} ETH"


def link_tx(page: Page) -> dict:
    link = re.search(r"tx=([A-Za-z0-9_-]+)", page.url).group(1)  # type: ignore[union-attr]
    return json.loads(base64.urlsafe_b64decode(link + "=" * (-len(link) % 4)))


def start(page: Page, app_server, prefix: str) -> tuple[str, dict, Web3, str]:
    address = create_wallet(page, new_email(prefix))
    wait_for_asset(page, "tUSD")
    tusd = next(t for t in page.request.get("/api/v1/tokens").json() if t["token_symbol"] == "tUSD")
    return address, tusd, web3_of(app_server), Account.create().address


def pending_entry(page: Page, tx_hash: str):
    """The Activity card of `tx_hash` (found by its short hash)."""
    return page.locator(".activity-entry").filter(has=page.locator(f"code[title='{tx_hash}']"))


def sign_with_pin(page: Page) -> str:
    tx_hash, alert = confirm_with_pin(page)
    alert.get_by_role("button", name="OK").click()
    page.wait_for_url("**/activity")
    return tx_hash


def assert_never_mined(w3: Web3, tx_hash: str) -> None:
    try:
        w3.eth.get_transaction_receipt(tx_hash)  # type: ignore[arg-type]
    except TransactionNotFound:
        return
    raise AssertionError(f"{tx_hash} was mined")


def test_pending_send_is_sped_up_and_confirms_once(page: Page, app_server, screenshot, browser_issues):
    address, tusd, w3, recipient = start(page, app_server, "speedup")
    before = token_balance(w3, tusd["token_address"], recipient)
    with mining_paused(w3):
        old_hash = submit_transfer(page, address, tusd, AMOUNT, to=recipient)
        old = w3.eth.get_transaction(old_hash)  # type: ignore[arg-type]
        page.goto("/activity")
        entry = pending_entry(page, old_hash)
        expect(entry.locator(".activity-status")).to_have_text("Pending")
        screenshot("activity-pending")
        entry.get_by_role("button", name="Speed up").click()

        page.wait_for_url(re.compile(r".*/sign\?tx=[A-Za-z0-9_-]+&replace=\d+$"))
        tx = link_tx(page)
        assert (int(tx["nonce"]), tx["to"].lower(), tx["data"]) == (
            old["nonce"], old["to"].lower(), old["input"].to_0x_hex())
        assert int(tx["gas_price"]) * 100 >= old["gasPrice"] * 110
        expect(page.locator("#sign-replacing")).to_have_text(
            f"Speed up: replaces pending transaction {short(old_hash)} (nonce {old['nonce']}) with the same "
            "transaction at a higher network fee.")
        expect(page.locator("#sign-amount")).to_have_text("2.5 tUSD")
        old_fee = fee({"gas_limit": old["gas"], "gas_price": old["gasPrice"]})
        assert fee(tx) != old_fee
        expect(page.locator("#sign-fee")).to_have_text(fee(tx))
        expect(page.locator("#sign-fee-was")).to_have_text(old_fee)
        screenshot("sign-speed-up", full_page=True)
        new_hash = sign_with_pin(page)
        assert new_hash != old_hash
        assert w3.eth.get_transaction(new_hash)["nonce"] == old["nonce"]  # type: ignore[arg-type]
        mine(w3)
    mine(w3)  # the original may not come back in a later block

    assert w3.eth.get_transaction_receipt(new_hash)["status"] == 1  # type: ignore[arg-type]
    assert_never_mined(w3, old_hash)
    assert token_balance(w3, tusd["token_address"], recipient) - before == AMOUNT  # moved once
    page.goto("/activity")
    expect(pending_entry(page, new_hash).locator(".activity-status")).to_have_text("Confirmed")
    expect(pending_entry(page, new_hash).locator(".activity-replaces")).to_have_text(f"Replaces {short(old_hash)}")
    expect(pending_entry(page, old_hash).locator(".activity-status")).to_have_text("Replaced")
    expect(page.get_by_role("button", name="Speed up")).to_have_count(0)
    screenshot("activity-sped-up")
    browser_issues.assert_clean()


def test_pending_send_is_cancelled(page: Page, app_server, screenshot, browser_issues):
    address, tusd, w3, recipient = start(page, app_server, "cancel")
    sender_before = token_balance(w3, tusd["token_address"], address)
    with mining_paused(w3):
        old_hash = submit_transfer(page, address, tusd, AMOUNT, to=recipient)
        page.goto("/activity")
        cancel_button = pending_entry(page, old_hash).get_by_role("button", name="Cancel")
        tab_to(page, cancel_button)  # the keyboard reaches it and Enter presses it
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r".*/sign\?tx=[A-Za-z0-9_-]+&replace=\d+$"))
        tx = link_tx(page)
        assert (tx["to"].lower(), tx["value"], tx["data"]) == (address.lower(), "0", "0x")
        nonce = w3.eth.get_transaction(old_hash)["nonce"]  # type: ignore[arg-type]
        expect(page.locator("#sign-replacing")).to_have_text(
            f"Cancel: replaces pending transaction {short(old_hash)} (nonce {nonce}) with 0 ETH sent to yourself "
            "at a higher network fee.")
        expect(page.locator("#sign-target")).to_have_text(Web3.to_checksum_address(address))
        expect(page.locator(".sign-warning")).to_have_count(0)  # yourself is no first-time recipient
        screenshot("sign-cancel", full_page=True)
        cancel_hash = sign_with_pin(page)
        mine(w3)
    mine(w3)

    assert w3.eth.get_transaction_receipt(cancel_hash)["status"] == 1  # type: ignore[arg-type]
    assert_never_mined(w3, old_hash)
    assert token_balance(w3, tusd["token_address"], recipient) == 0
    assert token_balance(w3, tusd["token_address"], address) == sender_before
    page.goto("/activity")
    cancel = pending_entry(page, cancel_hash)
    expect(cancel.locator(".activity-type")).to_have_text("Cancel")
    expect(cancel.locator(".activity-summary")).to_have_text(f"Cancel of {short(old_hash)}")
    expect(cancel.locator(".activity-status")).to_have_text("Confirmed")
    expect(pending_entry(page, old_hash).locator(".activity-status")).to_have_text("Cancelled")
    screenshot("activity-cancelled")
    browser_issues.assert_clean()


def test_speed_up_of_a_send_mined_meanwhile_is_refused_in_korean(page: Page, app_server, screenshot):
    address, tusd, w3, recipient = start(page, app_server, "mined")
    set_language(page, "한국어", "ko")
    refused = "이 거래는 이미 완료되어 더 이상 가속하거나 취소할 수 없습니다."
    with mining_paused(w3):
        old_hash = submit_transfer(page, address, tusd, AMOUNT, to=recipient)
        page.goto("/activity")
        pending_entry(page, old_hash).get_by_role("button", name="가속하기").click()
        page.wait_for_url(re.compile(r".*/sign\?tx=.*&replace=\d+$"))
        sign_url = page.url
        expect(page.locator("#sign-replacing")).to_be_visible()
        mine(w3)  # the original is mined while the page is open
    # Confirming now: refused before anything is broadcast.
    page.get_by_role("button", name="확인").click()
    dialog = page.get_by_role("dialog")
    pin_field(dialog, "PIN 번호").fill(PIN)
    dialog.get_by_role("button", name="확인").click()
    expect_alert(page, refused, title="오류", ok="확인", timeout=KDF_TIMEOUT_MS)
    screenshot("sign-speed-up-already-mined-ko")
    # Opening the link again: the alert on Activity, where the send shows as confirmed.
    page.goto(sign_url)
    page.wait_for_url("**/activity")
    expect_alert(page, refused, title="오류", ok="확인")
    expect(pending_entry(page, old_hash).locator(".activity-status")).to_have_text("완료")
    assert w3.eth.get_transaction_count(Web3.to_checksum_address(address)) == 1
