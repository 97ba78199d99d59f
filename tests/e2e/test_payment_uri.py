"""Issue 14 item 5 in Chromium at 390x844 on the app's anvil: EIP-681 payment URIs. Receive shows
a payment request QR for a token and an amount (the address QR stays the default); a scanned
request QR (fake camera fed a Y4M) and a pasted one fill the Send form; a request this wallet
cannot fill says why."""

import json
import re
from pathlib import Path

import psutil
from eth_account import Account
from playwright.sync_api import expect
from web3 import Web3

from tests.e2e.flows import create_wallet, decode_qr_png, expect_alert, new_email
from tests.e2e.flows_send import page_with_camera, pick

NETWORK = "Newbl Dev (anvil)"
KDF_TIMEOUT_MS = 60_000


def deployed_tokens(app_server) -> dict[str, str]:
    """symbol -> address of the test tokens the app server's chain runs (its DEPLOYMENTS_DIR)."""
    workdir = Path(psutil.Process(app_server.proc.pid).environ()["DEPLOYMENTS_DIR"])
    return json.loads((workdir / "deployments-31337.json").read_text())["tokens"]


def expect_send_form(page, network, token, recipient, amount):
    expect(page.get_by_role("combobox", name="Network")).to_have_text(network)
    expect(page.get_by_role("combobox", name="Token")).to_have_text(token)
    expect(page.get_by_label("Recipient address")).to_have_value(recipient)
    expect(page.get_by_label("Amount")).to_have_value(amount)


def test_receive_shows_a_payment_request_qr(page, screenshot, browser_issues):
    address = create_wallet(page, new_email("request"))
    tusd = next(t for t in page.request.get("/api/v1/tokens").json() if t["token_symbol"] == "tUSD")
    page.get_by_role("button", name="Receive").click()
    dialog = page.get_by_role("dialog", name="Receive")
    image = dialog.locator("img")
    # The default: the plain address QR.
    expect(dialog.locator("#receive-text")).to_have_text(address)
    expect(image).to_have_attribute("alt", address)
    assert decode_qr_png(image.screenshot()) == address
    expect(dialog.get_by_role("combobox", name="Token")).to_have_text("Address only")
    expect(dialog.get_by_label("Amount (optional)")).to_have_count(0)

    # A token: a request without an amount; then with one.
    dialog.get_by_role("combobox", name="Token").click()
    # The native coin is not offered: this wallet's own Send refuses it.
    expect(page.get_by_role("option")).to_have_text(["Address only", f"tUSD · {NETWORK}", f"tKRW · {NETWORK}"])
    page.get_by_role("option", name=f"tUSD · {NETWORK}").click()
    base = f"ethereum:{tusd['token_address']}@31337/transfer?address={Web3.to_checksum_address(address)}"
    expect(dialog.locator("#receive-text")).to_have_text(base)
    expect(dialog.locator("#receive-summary")).to_have_text(
        f"Requesting tUSD on {NETWORK}; the payer enters the amount")
    dialog.get_by_label("Amount (optional)").fill("12.5")
    uri = f"{base}&uint256=12500000"
    expect(dialog.locator("#receive-text")).to_have_text(uri)
    expect(dialog.locator("#receive-summary")).to_have_text(f"Requesting 12.5 tUSD on {NETWORK}")
    expect(image).to_have_attribute("alt", uri)
    assert decode_qr_png(image.screenshot()) == uri
    screenshot("receive-request")

    # A bad amount: its reason, and no request QR (the address one) until it is fixed.
    dialog.get_by_label("Amount (optional)").fill("1.1234567")
    expect(dialog.get_by_role("alert")).to_have_text("max 6 decimal places")
    expect(dialog.locator("#receive-text")).to_have_text(address)
    expect(dialog.locator("#receive-summary")).to_have_count(0)
    dialog.get_by_label("Amount (optional)").fill("0.5")
    expect(dialog.get_by_role("alert")).to_have_count(0)
    expect(dialog.locator("#receive-text")).to_have_text(f"{base}&uint256=500000")

    # Closed and opened again: the address QR again.
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_have_count(0)
    page.get_by_role("button", name="Receive").click()
    expect(dialog.locator("#receive-text")).to_have_text(address)
    expect(dialog.get_by_role("combobox", name="Token")).to_have_text("Address only")
    browser_issues.assert_clean()


def test_a_scanned_eip681_qr_fills_the_send_form(pw, app_server, tmp_path, screenshot):
    tusd = deployed_tokens(app_server)["tUSD"]
    payee = Account.create().address
    # As other wallets write it: "pay-", a lowercase token address, the amount in scientific notation.
    request = f"ethereum:pay-{tusd.lower()}@31337/transfer?address={payee}&uint256=1.25e7"
    with page_with_camera(pw, app_server, request, tmp_path) as page:
        create_wallet(page, new_email("scan681"))
        page.goto("/send")
        expect(page.get_by_label("Recipient address")).to_have_value("")
        page.get_by_role("button", name="Scan QR code").click()
        expect(page.get_by_label("Recipient address")).to_have_value(payee, timeout=10_000)
        expect(page.get_by_role("dialog")).to_have_count(0)  # closed after the scan
        expect_send_form(page, NETWORK, "tUSD · Newbl Test USD", payee, "12.5")
        screenshot("send-scanned-request", page)
        page.get_by_role("button", name="Next").click()
        page.wait_for_url(re.compile(r".*/sign\?tx=[A-Za-z0-9_-]+$"))
        expect(page.locator("#sign-amount")).to_have_text("12.5 tUSD", timeout=KDF_TIMEOUT_MS)
        expect(page.locator("#sign-recipient")).to_have_text(payee)


def test_a_pasted_payment_uri_fills_the_send_form_or_says_why_not(page, app_server, browser_issues, screenshot):
    create_wallet(page, new_email("paste681"))
    tokens = {t["token_symbol"]: t["token_address"] for t in page.request.get("/api/v1/tokens").json()}
    payee = Account.create().address
    page.goto("/send")
    field = page.get_by_label("Recipient address")
    error = page.locator("#send-uri-error")

    # Not in the user's list: the reason under the field, the pasted text kept, nothing else filled.
    stranger = Account.create().address
    pasted = f"ethereum:{stranger}@31337/transfer?address={payee}&uint256=1"
    field.fill(pasted)
    expect(error).to_have_text(f"This payment request is for a token that is not in your list on {NETWORK}"
                               f" ({stranger}). Add it on Home first.")
    expect(field).to_have_value(pasted)
    expect(page.get_by_role("combobox", name="Token")).to_be_disabled()
    # Another chain; a native coin request; junk amounts.
    field.fill(f"ethereum:{tokens['tUSD']}@1/transfer?address={payee}&uint256=1")
    expect(error).to_have_text("This payment request is for a network this wallet does not support (chain ID 1).")
    field.fill(f"ethereum:{payee}@31337?value=1e18")
    expect(error).to_have_text("Sending the native coin is blocked: its decimals are unknown.")
    for amount in ("-1", "1.5", str(2**256)):
        field.fill(f"ethereum:{tokens['tUSD']}@31337/transfer?address={payee}&uint256={amount}")
        expect(error).to_have_text("This payment request (an ethereum: link or QR code) is not valid.")
    screenshot("send-pasted-request-refused")

    # A request the wallet can fill: every field at once, the reason gone.
    pick(page, "Network", NETWORK)
    field.fill(f"ethereum:{tokens['tKRW']}/transfer?address={payee.lower()}&uint256=2.014e9")
    expect(error).to_have_count(0)
    expect_send_form(page, NETWORK, "tKRW · Newbl Test KRW", payee, "2014")
    # An address alone ("ethereum:<address>", as many wallets' Receive QR codes write it): the
    # recipient only, the token and amount kept.
    friend = Account.create().address
    field.fill(f"ethereum:{friend.lower()}")
    expect(error).to_have_count(0)
    expect_send_form(page, NETWORK, "tKRW · Newbl Test KRW", friend, "2014")
    # Submitting a kept, refused URI says what is wrong with the recipient. Its reason first: the
    # reason's box moves Next down, and a click pressed before and released after that lands nowhere.
    field.fill(f"ethereum:{tokens['tUSD']}@1/transfer?address={payee}&uint256=1")
    expect(error).to_have_text("This payment request is for a network this wallet does not support (chain ID 1).")
    page.get_by_role("button", name="Next").click()
    expect_alert(page, "Invalid recipient address: it must be 0x followed by 40 hex characters.")
    browser_issues.assert_clean()
