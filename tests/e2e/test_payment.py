"""Issue 6 in Chromium at 390x844 on anvil: a faucet-funded user pays a merchant link (approve
with PIN, Pay signed with PIN), the merchant's on-chain balance grows by exactly the amount,
Activity lists it, a repeated execute moves nothing, an expired payment ends as 'Payment failed.',
and the link's validation messages."""

from __future__ import annotations

import pytest
from eth_account import Account
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS, RESULTS_DIR, save_screenshot
from tests.e2e.flows import create_wallet, new_email
from tests.e2e.flows_payment import (
    chain_web3, enter_pin, erc20_balance, merchant_link, payment_rows, token_address, wait_for_balance,
)

AMOUNT_UNITS = 1_500_000  # 1.5 tUSD (6 decimals)
RELAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"  # anvil #1, the dev relayer key
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
MERCHANT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


# ---------------------------------------------------------------- in the browser


def test_pay_merchant_link(page, app_server, screenshot, browser_issues):
    payer = create_wallet(page, new_email("payer"))
    token = token_address(page, "tUSD")
    start = wait_for_balance(page, "tUSD", AMOUNT_UNITS)
    merchant = Account.create().address
    w3 = chain_web3(app_server)
    assert erc20_balance(w3, token, merchant) == 0

    page.goto(merchant_link(merchant, token, "1.5"))
    expect(page.locator("#pay-amount")).to_have_text("1.5")
    expect(page.locator("#pay-token")).to_have_text("tUSD")
    expect(page.locator("#pay-network")).to_have_text("Newbl Dev (anvil)")
    expect(page.locator("#pay-merchant")).to_have_text(f"{merchant[:6]}…{merchant[-4:]}")
    expect(page.locator("#pay-merchant")).to_have_attribute("title", merchant)
    screenshot("payment")

    page.get_by_role("button", name="Pay", exact=True).click()
    enter_pin(page, "Approve the token")
    # The approve hash is notified while the quote is polled until the allowance shows.
    expect(page.locator("#pay-approve-hash")).to_contain_text("0x")
    screenshot("payment-processing")
    enter_pin(page, "Sign the payment")
    page.wait_for_url("**/activity**", timeout=60_000)
    expect(page.get_by_role("alertdialog")).to_contain_text("Payment complete.")

    assert erc20_balance(w3, token, merchant) == AMOUNT_UNITS
    assert erc20_balance(w3, token, payer) == start - AMOUNT_UNITS
    r = page.request.get("/api/v1/activities")
    assert r.ok
    kinds = {(a["type"], a["status"], a["amount"], a["counterparty"]) for a in r.json()}
    assert ("payment", "ok", str(AMOUNT_UNITS), merchant.lower()) in kinds, kinds
    assert any(a["type"] == "approve" for a in r.json()), kinds

    # The same signed payment again through the API: the same id, nothing sent, no funds moved.
    (row,) = payment_rows(app_server, merchant)
    assert row["status"] == "ok"
    body = {"chain_id": row["chain_id"], "merchant_address": merchant, "token_address": token,
            "amount": row["amount"], "payment_id": row["payment_id"], "deadline": row["deadline"],
            "signature": row["signature"]}
    relayer_nonce = w3.eth.get_transaction_count(RELAYER)
    again = page.request.post("/api/v1/payment/execute", data=body)
    assert again.ok, again.text()
    assert again.json() == {"id": row["payment_id"]}
    assert w3.eth.get_transaction_count(RELAYER, "pending") == relayer_nonce
    assert erc20_balance(w3, token, merchant) == AMOUNT_UNITS
    assert page.request.get("/api/v1/payment/status", params={"id": row["payment_id"]}).json() == {"status": "ok"}
    browser_issues.assert_clean()


def test_link_validation_and_language(page, app_server, screenshot, browser_issues):
    create_wallet(page, new_email("links"))
    token = token_address(page, "tUSD")
    merchant = Account.create().address
    pay = page.get_by_role("button", name="Pay", exact=True)
    error = page.locator("#pay-error")
    cases = [
        (merchant_link(None, token, "1.5"), "Merchant address is missing."),
        (merchant_link(merchant, token, "1.2.3"), "Invalid amount format."),
        (merchant_link(merchant, token, "1.1234567"), "Invalid amount format."),
        (merchant_link(merchant, token, None), "Please enter the amount."),
        (merchant_link(merchant, None, "1"), "Please select a token."),
        (merchant_link(merchant, token, "1", chain_id=None), "Please select a network."),
        (merchant_link(merchant, token, "1", chain_id=999), "Please select a network."),
    ]
    for link, message in cases:
        page.goto(link)
        expect(error).to_have_text(message)
        expect(pay).to_be_disabled()
    screenshot("payment-invalid")
    # lang=ko switches the interface to Korean; a valid link enables the button.
    page.goto(merchant_link(merchant, token, "2", lang="ko"))
    expect(page.get_by_role("button", name="결제하기")).to_be_enabled()
    expect(page.locator("#pay-amount")).to_have_text("2")
    expect(error).to_have_count(0)
    # An unknown language is ignored.
    page.goto(merchant_link(merchant, token, "2", lang="fr"))
    expect(page.get_by_role("button", name="결제하기")).to_be_enabled()
    browser_issues.assert_clean()


def test_dev_merchant_link_on_card(page, app_server):
    create_wallet(page, new_email("card"))
    token = token_address(page, "tUSD")
    page.goto("/card")
    expect(page.get_by_text("Not supported yet.")).to_be_visible()
    link = page.locator("#dev-merchant-link")
    expect(link).to_have_attribute(
        "href", f"/payment?merchant=0x90F79bf6EB2c4f870365E785982E1f101E93b906&chain_id=31337&token={token}"
                "&amount=1.5&lang=en")
    link.click()
    page.wait_for_url("**/payment?**")
    expect(page.locator("#pay-amount")).to_have_text("1.5")
    expect(page.get_by_role("button", name="Pay", exact=True)).to_be_enabled()


# ---------------------------------------------------------------- an expired payment, on its own chain


@pytest.fixture(scope="module")
def late_server(tmp_path_factory):
    """A second app with its own anvil: this test moves the chain's clock, which must not leak
    into other tests' payments (their deadlines follow the wall clock)."""
    try:
        with helpers.running_wallet_app(tmp_path_factory.mktemp("e2e-late"),
                                        RESULTS_DIR / "e2e-late-app-server.log") as server:
            yield server
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)


def test_payment_past_its_deadline_ends_failed(browser, late_server):
    ctx = browser.new_context(base_url=late_server.base_url, **helpers.MOBILE_CONTEXT)
    ctx.set_default_timeout(DEFAULT_TIMEOUT_MS)
    w3 = chain_web3(late_server)
    try:
        page = ctx.new_page()
        create_wallet(page, new_email("late"))
        token = token_address(page, "tUSD")
        wait_for_balance(page, "tUSD", AMOUNT_UNITS)
        merchant = Account.create().address
        page.goto(merchant_link(merchant, token, "1.5"))
        page.get_by_role("button", name="Pay", exact=True).click()
        enter_pin(page, "Approve the token")
        # The approve is mined (the Pay PIN only comes once the allowance shows); from here blocks
        # wait, so the relayed pay() sits in the mempool while the chain's clock passes the deadline.
        expect(page.get_by_role("dialog", name="Sign the payment")).to_be_visible(timeout=30_000)
        w3.provider.make_request("evm_setAutomine", [False])
        enter_pin(page, "Sign the payment")
        expect(page.locator("#pay-phase")).to_have_text("Payment in progress…", timeout=30_000)
        save_screenshot(page, "payment-in-progress")
        (row,) = payment_rows(late_server, merchant)
        assert row["status"] == "pending" and row["tx_hash"]
        w3.provider.make_request("evm_increaseTime", [400])
        w3.provider.make_request("evm_mine", [])
        expect(page.get_by_role("alertdialog")).to_contain_text("Payment failed.", timeout=30_000)
        save_screenshot(page, "payment-failed")
        assert erc20_balance(w3, token, merchant) == 0
        status = page.request.get("/api/v1/payment/status", params={"id": row["payment_id"]}).json()
        assert status == {"status": "failed", "reason": "expired"}
        assert w3.eth.get_transaction_receipt(row["tx_hash"])["status"] == 0
        page.get_by_role("alertdialog").get_by_role("button", name="OK").click()
        expect(page.get_by_role("button", name="Pay", exact=True)).to_be_enabled()  # a new attempt may start
    finally:
        w3.provider.make_request("evm_setAutomine", [True])
        helpers.close_context(ctx)
