"""Issue 14 item 6 in Chromium at 390x844 on anvil: a customer pays a link built by
services.merchant_links with the merchant's order ref, and the merchant, with no session, confirms
it from the chain (GET /api/v1/merchant/payments?ref=): the amount, token, payer and itself.
A link whose ref is malformed says so and cannot be paid."""

from __future__ import annotations

import uuid

from eth_account import Account
from playwright.sync_api import expect
from web3 import Web3

from tests.e2e.flows import create_wallet, expect_alert, new_email
from tests.e2e.flows_payment import chain_web3, enter_pin, erc20_balance, token_address, wait_for_balance
from wallet_app.services.merchant_links import order_ref, payment_link

AMOUNT_UNITS = 1_250_000  # 1.25 tUSD (6 decimals)


def test_a_merchant_confirms_a_linked_payment_from_the_chain(page, app_server, pw, browser_issues):
    payer = create_wallet(page, new_email("order"))
    token = token_address(page, "tUSD")
    wait_for_balance(page, "tUSD", AMOUNT_UNITS)
    merchant, ref = Account.create().address, order_ref(f"order-{uuid.uuid4()}")
    lookup = f"/api/v1/merchant/payments?ref={ref}"
    merchant_request = pw.request.new_context(base_url=app_server.base_url)  # another party: no session
    r = merchant_request.get(lookup)
    assert (r.status, r.json()) == (404, {"detail": "payment_not_found"})

    page.goto(payment_link("", merchant, 31337, token, "1.25", ref=ref, lang="en"))
    expect(page.locator("#pay-amount")).to_have_text("1.25")
    page.get_by_role("button", name="Pay", exact=True).click()
    enter_pin(page, "Sign the payment")  # tUSD has permit: Permit and Pay under one PIN, no approve
    page.wait_for_url("**/activity**", timeout=60_000)
    expect_alert(page, "Payment complete.", title="Notice")

    r = merchant_request.get(lookup)
    assert r.ok, r.text()
    body = r.json()
    (paid,) = body["payments"]
    assert body["ref"] == ref
    assert (paid["chain_id"], paid["amount"], paid["token"], paid["payer"], paid["merchant"]) == (
        31337, str(AMOUNT_UNITS), Web3.to_checksum_address(token), Web3.to_checksum_address(payer), merchant)
    assert paid["confirmations"] >= 1
    w3 = chain_web3(app_server)
    assert erc20_balance(w3, token, merchant) == AMOUNT_UNITS
    assert w3.eth.get_transaction_receipt(paid["tx_hash"])["blockNumber"] == paid["block_number"]
    merchant_request.dispose()
    browser_issues.assert_clean()


def test_a_link_with_a_malformed_ref_cannot_be_paid(page, app_server, browser_issues):
    create_wallet(page, new_email("badref"))
    token = token_address(page, "tUSD")
    link = payment_link("", Account.create().address, 31337, token, "1", lang="en") + "&ref=0x1234"
    page.goto(link)
    expect(page.locator("#pay-error")).to_have_text("The payment reference is invalid.")
    expect(page.get_by_role("button", name="Pay", exact=True)).to_be_disabled()
    browser_issues.assert_clean()
