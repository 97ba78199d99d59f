"""Issue 11 item 5 in Chromium at 390x844 on anvil: the PIN dialog of /sign shows the recipient
and the native value that the browser decoded from the very transaction it then signs (the
mined transaction has exactly them); for an ERC-20 transfer call also the token's recipient and
amount decoded from its data, in the token's decimals and symbol (the page's token is the called
contract), reached through a /sign link and through Send (the mined transfer moved exactly them);
for an approval call its spender and amount (the mined approve set exactly that allowance)."""

from __future__ import annotations

import re

from eth_account import Account
from playwright.sync_api import expect
from web3 import Web3

from tests.e2e.flows import PIN, create_wallet, new_email
from tests.e2e.flows_send import fill_send, sign_link, token_balance, wait_for_asset, web3_of

VALUE_WEI = 1_234_000_000_000_000  # 0.001234 ETH
TOKEN_UNITS = 1_234_500  # 1.2345 tUSD (6 decimals)


def test_sign_pin_dialog_shows_what_it_signs(page, app_server, screenshot, browser_issues):
    sender = Web3.to_checksum_address(create_wallet(page, new_email("pinsummary")))
    wait_for_asset(page, "tUSD")  # the faucet's gas came before its tokens
    w3 = web3_of(app_server)
    target = Account.create().address
    tx = {"chain_id": "31337", "to": target.lower(), "data": "0x", "value": str(VALUE_WEI),
          "nonce": str(w3.eth.get_transaction_count(sender, "pending")), "gas_limit": "21000",
          "gas_price": str(w3.eth.gas_price)}

    page.goto(sign_link(tx))
    page.get_by_role("button", name="Confirm", exact=True).click()
    dialog = page.get_by_role("dialog")
    # Decoded in the browser from the link's payload: EIP-55 recipient, value in ETH.
    expect(dialog.get_by_test_id("pin-summary").locator("p")).to_have_text(
        [f"To: {target}", "Sends 0.001234 ETH"])
    screenshot("sign-pin-summary")
    dialog.get_by_label("PIN").fill(PIN)
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.locator("#sign-tx-hash")).to_have_text(re.compile(r"^0x[0-9a-f]{64}$"), timeout=60_000)
    mined = w3.eth.get_transaction(page.locator("#sign-tx-hash").inner_text())
    assert (mined["to"], mined["value"], mined["from"]) == (target, VALUE_WEI, sender)
    browser_issues.assert_clean()


def transfer_data(recipient: str, units: int) -> str:
    """ERC-20 transfer(recipient, units) calldata."""
    return "0xa9059cbb" + recipient[2:].lower().rjust(64, "0") + f"{units:064x}"


def signed_as_shown(page, w3, lines: list[str], screenshot, name: str, sender: str, to: str, data: str) -> None:
    """On /sign: Confirm; the PIN dialog's lines, exactly (decoded in the browser from the
    transaction it signs); the PIN; the mined transaction is from `sender` to `to` with no native
    value and exactly `data`."""
    page.get_by_role("button", name="Confirm", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_test_id("pin-summary").locator("p")).to_have_text(lines, timeout=30_000)
    screenshot(name)
    dialog.get_by_label("PIN").fill(PIN)
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.locator("#sign-tx-hash")).to_have_text(re.compile(r"^0x[0-9a-f]{64}$"), timeout=60_000)
    tx_hash = page.locator("#sign-tx-hash").inner_text()
    assert w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)["status"] == 1
    mined = w3.eth.get_transaction(tx_hash)
    assert (mined["to"], mined["value"], mined["from"]) == (to, 0, sender)
    assert "0x" + bytes(mined["input"]).hex().removeprefix("0x") == data


def _token_transfer_signed(page, w3, token: str, sender: str, recipient: str, units: int, amount_text: str,
                           screenshot, name: str) -> None:
    """On /sign: the PIN dialog names the call's contract and native value as before, then the
    token's recipient (EIP-55) and amount from the transfer call's data, in the page's token's
    decimals; the mined transfer moved exactly `units` from `sender` to `recipient`."""
    before, sender_before = token_balance(w3, token, recipient), token_balance(w3, token, sender)
    lines = [f"To: {token}", "Sends 0 ETH", f"Token recipient: {recipient}", f"Token amount: {amount_text} tUSD"]
    signed_as_shown(page, w3, lines, screenshot, name, sender, token, transfer_data(recipient, units))
    assert token_balance(w3, token, recipient) - before == units
    assert sender_before - token_balance(w3, token, sender) == units


def test_sign_pin_dialog_shows_the_token_transfer_it_signs(page, app_server, screenshot, browser_issues):
    sender = Web3.to_checksum_address(create_wallet(page, new_email("pintoken")))
    token = Web3.to_checksum_address(wait_for_asset(page, "tUSD")["token_address"])
    w3 = web3_of(app_server)
    recipient = Account.create().address
    tx = {"chain_id": "31337", "to": token.lower(), "data": transfer_data(recipient, TOKEN_UNITS), "value": "0",
          "nonce": str(w3.eth.get_transaction_count(sender, "pending")), "gas_limit": "100000",
          "gas_price": str(w3.eth.gas_price)}

    page.goto(sign_link(tx))
    _token_transfer_signed(page, w3, token, sender, recipient, TOKEN_UNITS, "1.2345", screenshot,
                           "sign-pin-summary-token")
    browser_issues.assert_clean()


def test_send_pin_dialog_shows_the_token_transfer_it_signs(page, app_server, screenshot, browser_issues):
    sender = Web3.to_checksum_address(create_wallet(page, new_email("pinsend")))
    token = Web3.to_checksum_address(wait_for_asset(page, "tUSD")["token_address"])
    w3 = web3_of(app_server)
    recipient = Account.create().address

    page.goto("/send")
    fill_send(page, network="Newbl Dev (anvil)")
    expect(page.get_by_role("combobox", name="Token")).to_have_text("tUSD · Newbl Test USD")
    fill_send(page, recipient=recipient, amount="0.75")
    page.get_by_role("button", name="Next").click()
    page.wait_for_url(re.compile(r".*/sign\?tx=[A-Za-z0-9_-]+$"))
    _token_transfer_signed(page, w3, token, sender, recipient, 750_000, "0.75", screenshot,
                           "send-pin-summary-token")
    browser_issues.assert_clean()


def test_sign_pin_dialog_shows_the_approval_it_signs(page, app_server, screenshot, browser_issues):
    """An unlimited approve through a /sign link: the dialog said "To: <token>", "Sends 0 ETH" and
    nothing of who may take the token (an audit); the mined approve sets exactly the allowance shown."""
    sender = Web3.to_checksum_address(create_wallet(page, new_email("pinapprove")))
    token = Web3.to_checksum_address(wait_for_asset(page, "tUSD")["token_address"])
    w3 = web3_of(app_server)
    spender = Account.create().address
    data = "0x095ea7b3" + spender[2:].lower().rjust(64, "0") + "f" * 64
    tx = {"chain_id": "31337", "to": token.lower(), "data": data, "value": "0",
          "nonce": str(w3.eth.get_transaction_count(sender, "pending")), "gas_limit": "100000",
          "gas_price": str(w3.eth.gas_price)}

    page.goto(sign_link(tx))
    lines = [f"To: {token}", "Sends 0 ETH", f"Approves spender: {spender}",
             "Approved amount: unlimited (it can take all of this token)"]
    signed_as_shown(page, w3, lines, screenshot, "sign-pin-summary-approve", sender, token, data)
    allowance = w3.eth.call({"to": token, "data": "0xdd62ed3e" + sender[2:].lower().rjust(64, "0")
                             + spender[2:].lower().rjust(64, "0")})
    assert int.from_bytes(allowance, "big") == 2**256 - 1
    browser_issues.assert_clean()
