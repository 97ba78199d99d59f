"""A network fee that rose between Send's Next and the PIN, in Chromium at 390x844 on the app's anvil
(anvil_setNextBlockBaseFeePerGas): the tUSD send built before is priced below the next block's base
fee and can no longer be mined at its price. Left open, the page's Confirm and PIN then say so in
the catalogue's words (it was 'The network rejected the transaction.' from the node, after the
PIN); loaded again, the page refuses it before the PIN dialog. Nothing reaches the chain."""

import re

from eth_account import Account
from playwright.sync_api import expect
from web3 import Web3

from tests.e2e.flows import create_wallet, expect_alert, new_email
from tests.e2e.flows_payment import chain_web3, deployed_token, merchant_link, wait_for_chain_balance
from tests.e2e.flows_send import KDF_TIMEOUT_MS, pin_entered, send_to_sign, web3_of
from tests.waits import wait_until

OUTDATED = ("The network fee has gone up since this transaction was prepared, so it would not go through. "
            "Go back and prepare it again.")
FAILS_NOW = ("This transaction would now fail: something changed since this page was loaded, such as your balance. "
             "Nothing was sent.")


def rpc(w3: Web3, method: str, *params) -> None:
    answer = w3.provider.make_request(method, list(params))  # type: ignore[arg-type]
    assert "error" not in answer, answer


def test_a_fee_that_rose_before_the_pin_is_said_in_words_and_nothing_is_sent(page, app_server, screenshot,
                                                                             browser_issues):
    owner = Web3.to_checksum_address(create_wallet(page, new_email("feerise")))
    send_to_sign(page)
    w3 = web3_of(app_server)
    confirm = page.get_by_role("button", name="Confirm")
    expect(page.locator("#sign-fee")).to_have_text(re.compile(r"^[0-9.]+ ETH$"))
    expect(page.locator("#sign-refusal")).to_have_count(0)
    expect(confirm).to_be_enabled()
    nonce = w3.eth.get_transaction_count(owner, "pending")
    before = w3.eth.get_block("latest")["baseFeePerGas"]
    try:
        rpc(w3, "anvil_setNextBlockBaseFeePerGas", hex(w3.eth.gas_price * 3))
        # The page was left open: the PIN is asked, and the send refused before it is broadcast.
        pin_entered(page)
        expect_alert(page, OUTDATED, timeout=KDF_TIMEOUT_MS, ok=None)
        screenshot("fee-rise-after-pin")
        page.get_by_role("alertdialog").get_by_role("button", name="OK").click()
        # Loaded again: refused before the PIN dialog.
        page.reload()
        expect(page.locator("#sign-refusal")).to_have_text(OUTDATED)
        expect(confirm).to_be_disabled()
        screenshot("fee-rise-refused", full_page=True)
        assert w3.eth.get_transaction_count(owner, "pending") == nonce
    finally:
        rpc(w3, "anvil_setNextBlockBaseFeePerGas", hex(before))
        rpc(w3, "evm_mine")
    browser_issues.assert_clean()


def test_a_payment_whose_approve_the_native_coin_cannot_pay_says_so_before_the_pin(page, app_server, screenshot,
                                                                                   browser_issues):
    """A payer with tEUR (no permit: an approve to send first) and no ETH. The approve's PIN dialog
    opened, and after the PIN the node refused the approve ('The network rejected the
    transaction.')."""
    payer = Web3.to_checksum_address(create_wallet(page, new_email("nofee")))
    token = deployed_token(app_server, "tEUR")
    w3 = chain_web3(app_server)
    wait_for_chain_balance(w3, token, payer, 1_500_000)
    wait_until(lambda: w3.eth.get_balance(payer) > 0, timeout=60)  # the faucet's ETH, then none of it
    rpc(w3, "anvil_setBalance", payer, "0x0")
    page.goto(merchant_link(Account.create().address, token, "1.5"))
    expect(page.locator("#pay-amount")).to_have_text("1.5")
    page.get_by_role("button", name="Pay", exact=True).click()
    expect_alert(page, "Not enough ETH for the network fee.", ok=None)
    expect(page.get_by_role("dialog", name="Approve the token")).to_have_count(0)
    screenshot("pay-approve-unaffordable")
    page.get_by_role("alertdialog").get_by_role("button", name="OK").click()
    assert w3.eth.get_transaction_count(payer, "pending") == 0
    browser_issues.assert_clean()


def test_a_send_of_the_whole_balance_that_another_tab_spent_meanwhile_is_not_broadcast(page, app_server, screenshot,
                                                                                       browser_issues):
    """All 1,000 tUSD, previewed as '-1,000 tUSD'; before the PIN 1 tUSD leaves the account without
    its nonce, as a gasless payment in another tab does (the relayer sends it): here the owner's
    account, impersonated on anvil, its nonce set back after. The signed transfer was broadcast,
    mined and reverted: the fee paid for nothing."""
    owner = Web3.to_checksum_address(create_wallet(page, new_email("wholebalance")))
    w3 = web3_of(app_server)
    tusd = deployed_token(app_server, "tUSD")
    wait_for_chain_balance(w3, tusd, owner, 1_000 * 10**6)
    send_to_sign(page, amount="1000")
    expect(page.locator("#sign-changes .sign-change")).to_have_text(["-1,000 tUSD"])
    nonce = w3.eth.get_transaction_count(owner, "pending")
    rpc(w3, "anvil_impersonateAccount", owner)
    try:
        other_tab = w3.eth.send_transaction({"from": owner, "to": tusd, "data": "0xa9059cbb" + "00" * 12
                                             + Account.create().address[2:].lower() + format(1, "064x")})
        assert w3.eth.wait_for_transaction_receipt(other_tab, timeout=30)["status"] == 1
    finally:
        rpc(w3, "anvil_stopImpersonatingAccount", owner)
    rpc(w3, "anvil_setNonce", owner, hex(nonce))
    pin_entered(page)
    expect_alert(page, FAILS_NOW, timeout=KDF_TIMEOUT_MS, ok=None)
    screenshot("sign-fails-now")
    page.get_by_role("alertdialog").get_by_role("button", name="OK").click()
    assert w3.eth.get_transaction_count(owner, "pending") == nonce  # nothing sent
