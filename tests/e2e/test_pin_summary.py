"""Issue 11 item 5 in Chromium at 390x844 on anvil: the PIN dialog of /sign shows the recipient
and the native value that the browser decoded from the very transaction it then signs (the
mined transaction has exactly them)."""

from __future__ import annotations

import re

from eth_account import Account
from playwright.sync_api import expect
from web3 import Web3

from tests.e2e.flows import PIN, create_wallet, new_email
from tests.e2e.flows_send import sign_link, wait_for_asset, web3_of

VALUE_WEI = 1_234_000_000_000_000  # 0.001234 ETH


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
