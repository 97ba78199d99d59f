"""Issue 6 in Chromium at 390x844 on anvil: a faucet-funded user pays a merchant link (approve
with PIN, Pay signed with PIN: tEUR, the test token without permit), the merchant's on-chain
balance grows by exactly the amount; issue 14 item 3: a user without native coin pays a tUSD link
gaslessly (Permit and Pay signed with one PIN, the relayer sends payWithPermit);
Activity lists it, a repeated execute moves nothing, an expired payment ends as 'Payment failed.',
the link's validation messages, its language (for that page only), and every payment error
shown once, in en and ko (issue 10)."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

import pytest
from eth_account import Account
from playwright.sync_api import expect
from web3 import Web3

from tests.anvil_mining import mine, mining_paused
from tests.e2e import helpers, vault_py
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS, own_app_server, save_screenshot
from tests.e2e.flows import (
    PIN,
    assert_within_screen,
    create_wallet,
    expect_alert,
    local_materials,
    new_email,
    pin_field,
    switch_language,
)
from tests.e2e.flows_payment import (
    approve_until_pay_pin,
    chain_web3,
    deployed_token,
    enter_pin,
    erc20_balance,
    merchant_link,
    payment_contract,
    payment_rows,
    server_env,
    token_address,
    wait_for_balance,
    wait_for_chain_balance,
)
from tests.e2e.test_activity import lookalike_of, submit_transfer
from tests.waits import wait_until

AMOUNT_UNITS = 1_500_000  # 1.5 tEUR or tUSD (6 decimals)
RELAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"  # anvil #1, the dev relayer key
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
MERCHANT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
# payWithPermit((address,address,address,uint256,bytes32,uint48),bytes,uint256,uint256,uint8,bytes32,bytes32)
PAY_WITH_PERMIT = "0x" + Web3.keccak(
    text="payWithPermit((address,address,address,uint256,bytes32,uint48),bytes,uint256,uint256,uint8,bytes32,bytes32)"
)[:4].hex()


# ---------------------------------------------------------------- in the browser


def test_pay_merchant_link(page, app_server, screenshot, browser_issues):
    """A token without permit (tEUR) still pays through the approve."""
    payer = create_wallet(page, new_email("payer"))
    token = deployed_token(app_server, "tEUR")
    w3 = chain_web3(app_server)
    start = wait_for_chain_balance(w3, token, payer, AMOUNT_UNITS)
    merchant = Account.create().address
    assert erc20_balance(w3, token, merchant) == 0

    page.goto(merchant_link(merchant, token, "1.5"))
    expect(page.locator("#pay-amount")).to_have_text("1.5")
    expect(page.locator("#pay-token")).to_have_text("tEUR")
    expect(page.locator("#pay-network")).to_have_text("Newbl Dev (anvil)")
    # The merchant in full, EIP-55, wrapped inside the 390 px screen (no 4+4 shortening).
    shown = page.locator("#pay-merchant")
    expect(shown).to_have_text(merchant)
    box = shown.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot("payment")

    page.get_by_role("button", name="Pay", exact=True).click()
    # The approve dialog says what is approved, decoded in the browser from the transaction it signs.
    contract = payment_contract(app_server)
    summary = page.get_by_role("dialog", name="Approve the token").get_by_test_id("pin-summary")
    expect(summary).to_have_text(f"Allow {contract[:6]}…{contract[-4:]} to spend 1.5 tEUR")
    # A dropped socket (the user switched apps) leaves the dialog open: the payment is running.
    helpers.reconnect(page)
    expect(page.get_by_role("dialog", name="Approve the token")).to_have_attribute("data-state", "open")
    enter_pin(page, "Approve the token")
    # The approve hash is notified while the quote is polled until the allowance shows.
    expect(page.locator("#pay-approve-hash")).to_have_text(
        re.compile(r"Approval transaction: 0x[0-9a-f]{8}…[0-9a-f]{8}"))
    screenshot("payment-processing")
    summary = page.get_by_role("dialog", name="Sign the payment").get_by_test_id("pin-summary")
    expect(summary).to_have_text(f"Pay 1.5 tEUR to {merchant}", timeout=30_000)
    enter_pin(page, "Sign the payment")
    page.wait_for_url("**/activity**", timeout=60_000)
    # Raised with the redirect, the alert shows on /activity.
    expect_alert(page, "Payment complete.", title="Notice")

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


def send_native_away(page, w3: Web3, owner: str) -> None:
    """The payer sends all its native coin to someone else: the key read back from the browser's
    local materials with the PIN (tests/e2e/vault_py.py, independent of the app), a legacy
    transfer costing exactly 21,000 x its gas price."""
    key = vault_py.unwrap(local_materials(page, owner.lower()), PIN).private_key
    price = w3.eth.gas_price
    tx = {"to": Account.create().address, "value": w3.eth.get_balance(owner) - 21_000 * price, "gas": 21_000,
          "gasPrice": price, "nonce": w3.eth.get_transaction_count(owner), "chainId": w3.eth.chain_id}
    sent = w3.eth.send_raw_transaction(Account.sign_transaction(tx, key).raw_transaction)
    assert w3.eth.wait_for_transaction_receipt(sent, timeout=30)["status"] == 1
    assert w3.eth.get_balance(owner) == 0


def test_gasless_payment_through_a_permit(page, app_server, screenshot, browser_issues):
    """Issue 14 item 3: a payer whose native coin was all sent away pays a tUSD link (tUSD has
    EIP-2612 permit): one PIN signs the Permit and the Pay message, no approve is sent, the relayer
    submits payWithPermit and the merchant receives exactly the amount."""
    payer = Web3.to_checksum_address(create_wallet(page, new_email("gasless")))
    token = token_address(page, "tUSD")
    start = wait_for_balance(page, "tUSD", AMOUNT_UNITS)  # the faucet sends the ETH first, then the tokens
    w3 = chain_web3(app_server)
    send_native_away(page, w3, payer)
    payer_nonce = w3.eth.get_transaction_count(payer)
    merchant = Account.create().address

    page.goto(merchant_link(merchant, token, "1.5"))
    expect(page.locator("#pay-token")).to_have_text("tUSD")
    page.get_by_role("button", name="Pay", exact=True).click()
    # No approve dialog: straight to the one PIN entry, which says what the permit allows and until when.
    dialog = page.get_by_role("dialog", name="Sign the payment")
    lines = dialog.get_by_test_id("pin-summary").locator("p")
    expect(lines).to_have_count(2, timeout=30_000)
    contract = payment_contract(app_server)
    allow = lines.nth(0).inner_text()
    until = r"until \d\d:\d\d"
    assert re.fullmatch(rf"Allow {re.escape(contract[:6])}…{contract[-4:]} to spend 1\.5 tUSD {until}", allow)
    expect(lines.nth(1)).to_have_text(f"Pay 1.5 tUSD to {merchant}")
    screenshot("payment-permit-pin")
    enter_pin(page, "Sign the payment")
    page.wait_for_url("**/activity**", timeout=60_000)
    expect_alert(page, "Payment complete.", title="Notice")

    assert erc20_balance(w3, token, merchant) == AMOUNT_UNITS
    assert erc20_balance(w3, token, payer) == start - AMOUNT_UNITS
    assert w3.eth.get_balance(payer) == 0
    assert w3.eth.get_transaction_count(payer) == payer_nonce  # the payer sent nothing: no approve
    (row,) = payment_rows(app_server, merchant)
    assert row["status"] == "ok" and json.loads(row["permit"])["value"] == AMOUNT_UNITS
    # The permit's time is the payment's deadline, as this screen's clock (UTC here) shows it.
    shown_until = datetime.fromtimestamp(row["deadline"]).strftime("%H:%M")
    assert allow == f"Allow {contract[:6]}…{contract[-4:]} to spend 1.5 tUSD until {shown_until}"
    relayed = w3.eth.get_transaction(row["tx_hash"])
    assert (relayed["from"], relayed["to"]) == (RELAYER, contract)
    assert "0x" + bytes(relayed["input"][:4]).hex() == PAY_WITH_PERMIT
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
        # Not an amount: never shown as one, in the page's largest letters.
        (merchant_link(merchant, token, "Locked! Call +1 800 555 0100 \u202e"), "Invalid amount format."),
        # A value given twice: readers disagree on which one counts (JavaScript's the first).
        (merchant_link(merchant, token, "1") + f"&merchant={Account.create().address}",
         "This payment link gives one of its values twice, so it cannot be paid."),
    ]
    for link, message in cases:
        page.goto(link)
        expect(error).to_have_text(message)
        expect(pay).to_be_disabled()
        # Only an amount read from the link is shown.
        expect(page.locator("#pay-amount")).to_have_text("—")
    screenshot("payment-invalid")
    # lang=ko shows this page in Korean; a valid link enables the button.
    page.goto(merchant_link(merchant, token, "2", lang="ko"))
    expect(page.get_by_role("button", name="결제하기")).to_be_enabled()
    expect(page.locator("#pay-amount")).to_have_text("2")
    expect(error).to_have_count(0)
    # ... and only this page: the stored locale (server and nb.lang) stays, the next page is English.
    assert page.request.get("/api/v1/me").json()["locale"] == "en"
    assert page.evaluate("localStorage.getItem('nb.lang')") == "en"
    page.goto("/home")
    expect(page.get_by_role("heading", level=1)).to_have_text("Wallet")
    # An unknown language is ignored: the user's own.
    page.goto(merchant_link(merchant, token, "2", lang="fr"))
    expect(page.get_by_role("button", name="Pay", exact=True)).to_be_enabled()
    browser_issues.assert_clean()


def test_a_long_amount_is_shown_whole(page, app_server, browser_issues):
    """A link's amount is read whole on a 390 px screen, wrapped: centred on one line, a long one ran
    past both edges, and 12,345,678.123456 read "2,345,678.123456"."""
    create_wallet(page, new_email("longpay"))
    token = token_address(page, "tUSD")
    merchant = Account.create().address
    for amount, shown in (
        ("12345678.123456", "12,345,678.123456"),
        ("1" * 60 + ".5", ",".join(["111"] * 20) + ".5"),
    ):
        page.goto(merchant_link(merchant, token, amount))
        expect(page.locator("#pay-amount")).to_have_text(shown)
        expect(page.get_by_role("button", name="Pay", exact=True)).to_be_enabled()
        for element in ("#pay-amount", "#pay-amount-symbol", "#pay-merchant", "#pay-network", "#pay-token"):
            assert_within_screen(page.locator(element))
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    browser_issues.assert_clean()


def test_a_merchant_that_imitates_an_address_paid_before_is_called_out(page, app_server, browser_issues):
    """Address poisoning on /payment: a merchant with the first and last 4 hex digits of an address
    the user sent to gets the warning Send and /sign give; so does a token's contract."""
    address = create_wallet(page, new_email("poisonpay"))
    wait_for_balance(page, "tUSD", 1_000_000)  # the faucet's tokens and gas
    tusd = next(t for t in page.request.get("/api/v1/tokens").json() if t["token_symbol"] == "tUSD")
    paid = Account.create().address
    submit_transfer(page, address, tusd, 1_000_000, to=paid)
    note = page.locator("#pay-merchant-note")

    page.goto(merchant_link(lookalike_of(paid), tusd["token_address"], "1"))
    expect(page.locator("#pay-merchant")).to_have_text(lookalike_of(paid))
    expect(note).to_have_text("This address looks like one you used before, but it is different.")
    page.goto(merchant_link(tusd["token_address"], tusd["token_address"], "1"))
    expect(page.locator("#pay-merchant")).to_have_text(tusd["token_address"])
    expect(note).to_have_text("This is a token's contract address: tokens sent to it are usually lost for good.")
    # The address itself, or a new one: no note.
    for merchant in (paid, Account.create().address):
        page.goto(merchant_link(merchant, tusd["token_address"], "1"))
        expect(page.locator("#pay-merchant")).to_have_text(merchant)
        expect(note).to_have_count(0)
    page.goto(merchant_link(lookalike_of(paid), tusd["token_address"], "1", lang="ko"))
    expect(note).to_have_text("이 주소는 전에 사용한 주소와 비슷해 보이지만 다른 주소입니다.")
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


def test_another_link_opened_while_the_pin_dialog_waits_is_the_one_paid(page, app_server, browser_issues):
    """Pay on a link (the PIN dialog opens), the browser's Back, then the merchant's new link:
    the tab's state kept the first flow, the page showed the first link's merchant and amount with
    its PIN dialog, and the PIN paid the first merchant (found by an audit)."""
    create_wallet(page, new_email("other-link"))
    token = token_address(page, "tUSD")
    wait_for_balance(page, "tUSD", 3_000_000)
    w3 = chain_web3(app_server)
    m1, m2 = Account.create().address, Account.create().address
    page.goto(merchant_link(m1, token, "1.5"))
    page.get_by_role("button", name="Pay", exact=True).click()
    expect(page.get_by_role("dialog", name="Sign the payment")).to_be_visible(timeout=30_000)
    page.go_back()
    page.goto(merchant_link(m2, token, "3"))
    expect(page.locator("#pay-merchant")).to_have_text(m2)
    expect(page.locator("#pay-amount")).to_have_text("3")
    expect(page.get_by_role("dialog", name="Sign the payment")).to_have_count(0)
    page.get_by_role("button", name="Pay", exact=True).click()
    summary = page.get_by_role("dialog", name="Sign the payment").get_by_test_id("pin-summary")
    expect(summary).to_contain_text(f"Pay 3 tUSD to {m2}", timeout=30_000)
    enter_pin(page, "Sign the payment")
    page.wait_for_url("**/activity**", timeout=60_000)
    expect_alert(page, "Payment complete.", title="Notice")
    assert (erc20_balance(w3, token, m1), erc20_balance(w3, token, m2)) == (0, 3_000_000)
    browser_issues.assert_clean()


# While Date.now() < window.__nbBlockUntil a new socket of the page goes nowhere: the connection
# stays down for a while, as a phone's in a tunnel.
SOCKET_BLOCKER = """
window.__nbBlockUntil = 0;
const UnblockedWebSocket = window.WebSocket;
window.WebSocket = class extends UnblockedWebSocket {
  constructor(url, ...rest) {
    super(Date.now() < window.__nbBlockUntil ? "ws://127.0.0.1:9/blocked" : url, ...rest);
  }
};
"""


def test_a_payment_finished_while_offline_is_shown_not_offered_again(page, app_server):
    """The socket drops right after the PIN and the payment completes meanwhile: the redirect and
    its alert were lost, the reconnect's load offered Pay again, and a second PIN paid twice
    (found by an audit). Back from /activity did the same. The tab shows the payment instead."""
    page.add_init_script(SOCKET_BLOCKER)
    create_wallet(page, new_email("lost"))
    token = token_address(page, "tUSD")
    wait_for_balance(page, "tUSD", AMOUNT_UNITS)
    w3 = chain_web3(app_server)
    merchant = Account.create().address
    page.goto(merchant_link(merchant, token, "1.5"))
    page.get_by_role("button", name="Pay", exact=True).click()
    dialog = page.get_by_role("dialog", name="Sign the payment")
    expect(dialog).to_be_visible(timeout=30_000)
    pin_field(dialog).fill(PIN)
    # The payment is relayed, and held unmined until the socket is down: closed once pin_done was
    # sent, it settled 60 ms after the PIN on one run, before the close, and its redirect came.
    with mining_paused(w3):
        dialog.get_by_role("button", name="Confirm").click()
        wait_until(lambda: [r["status"] for r in payment_rows(app_server, merchant)] == ["pending"], 30,
                   "the payment was not relayed")
        sockets = page.evaluate("window.__nbSockets.length")
        # Down until the payment is complete (not for a fixed time, which a slow settling outlasted).
        page.evaluate("window.__nbBlockUntil = Infinity; window.__nbSockets.forEach((s) => s.close())")
    mine(w3)
    wait_until(lambda: [r["status"] for r in payment_rows(app_server, merchant)] == ["ok"], 30,
               "the payment did not complete")
    page.evaluate("window.__nbBlockUntil = 0")
    page.wait_for_function(
        "(n) => window.__nbSockets.length > n && window.__nbSockets.at(-1).hydrated", arg=sockets, timeout=30_000)
    assert "/payment" in page.url
    expect(page.get_by_role("button", name="Pay", exact=True, include_hidden=True)).to_be_disabled()  # under the alert
    expect_alert(page, "Payment complete.", title="Notice")  # its OK goes to Activity
    page.wait_for_url("**/activity**")
    page.go_back()
    page.wait_for_url("**/payment**")
    expect(page.get_by_role("button", name="Pay", exact=True, include_hidden=True)).to_be_disabled()  # under the alert
    expect_alert(page, "Payment complete.", title="Notice", ok=None)
    assert erc20_balance(w3, token, merchant) == AMOUNT_UNITS
    assert len(payment_rows(app_server, merchant)) == 1


def test_a_payment_that_settles_after_the_page_was_left_leaves_the_next_page_alone(page, app_server,
                                                                                 browser_issues):
    """Paid, then Back while the payment was still pending, and on to Send: when it settled, its
    redirect to /activity (sent to the tab's current socket) took the Send form the person was
    filling in, and the alert came with it. Now the tab stays where the person is; the link
    opened again shows the payment (not Pay), and Activity lists it."""
    page.add_init_script(helpers.SOCKET_WATCH)
    create_wallet(page, new_email("leftpay"))
    token = token_address(page, "tUSD")
    wait_for_balance(page, "tUSD", AMOUNT_UNITS)
    w3 = chain_web3(app_server)
    merchant = Account.create().address
    link = merchant_link(merchant, token, "1.5")
    page.goto(link)
    page.get_by_role("button", name="Pay", exact=True).click()
    dialog = page.get_by_role("dialog", name="Sign the payment")
    expect(dialog).to_be_visible(timeout=30_000)
    pin_field(dialog).fill(PIN)
    with mining_paused(w3):  # relayed, and held unmined until the person is on Send
        dialog.get_by_role("button", name="Confirm").click()
        wait_until(lambda: [r["status"] for r in payment_rows(app_server, merchant)] == ["pending"], 30,
                   "the payment was not relayed")
        expect(page.locator("#pay-phase")).to_have_text("Payment in progress…")
        page.go_back()
        page.wait_for_url("**/home**")
        page.get_by_role("button", name="Send", exact=True).click()
        page.wait_for_url("**/send**")
        since = helpers.received_frames(page)
        page.get_by_label("Amount").fill("7")
        helpers.wait_for_state(page, since, "amount", "7")
        since = helpers.received_frames(page)
    mine(w3)
    wait_until(lambda: [r["status"] for r in payment_rows(app_server, merchant)] == ["ok"], 30,
               "the payment did not complete")
    helpers.wait_for_state(page, since, "finished", True)  # the payment's wait is over: it told the tab
    # One more round trip: whatever the payment sent after it has come by now.
    since = helpers.received_frames(page)
    page.get_by_label("Amount").fill("8")
    helpers.wait_for_state(page, since, "amount", "8")
    assert urlparse(page.url).path.rstrip("/") == "/send", page.url
    expect(page.get_by_label("Amount")).to_have_value("8")
    expect(page.get_by_role("alertdialog")).to_have_count(0)

    page.goto(link)  # the link again: its payment, not Pay
    expect_alert(page, "Payment complete.", title="Notice")  # its OK goes to Activity
    page.wait_for_url("**/activity**")
    assert erc20_balance(w3, token, merchant) == AMOUNT_UNITS
    assert len(payment_rows(app_server, merchant)) == 1
    browser_issues.assert_clean()


def test_a_link_paid_in_another_tab_is_announced_before_it_is_paid_again(page, app_server, browser_issues):
    """A link without a ref, paid in one tab, opened in another (or on another device): that tab
    knows nothing of the payment and offered Pay as if none had been made, and a second PIN paid
    the merchant twice. Now its Pay says so first; a second Pay pays again, as the user chose."""
    create_wallet(page, new_email("twotabs"))
    token = token_address(page, "tUSD")
    wait_for_balance(page, "tUSD", 2 * AMOUNT_UNITS)
    w3 = chain_web3(app_server)
    merchant = Account.create().address
    link = merchant_link(merchant, token, "1.5")
    other = page.context.new_page()
    other.goto(link)  # opened before the payment, as a tab left open
    expect(other.locator("#pay-token")).to_have_text("tUSD")
    page.goto(link)
    page.get_by_role("button", name="Pay", exact=True).click()
    enter_pin(page, "Sign the payment")
    page.wait_for_url("**/activity**", timeout=60_000)
    expect_alert(page, "Payment complete.", title="Notice")
    assert erc20_balance(w3, token, merchant) == AMOUNT_UNITS

    other.bring_to_front()
    other.get_by_role("button", name="Pay", exact=True).click()
    expect_alert(other, "You paid this merchant the same amount 1 min ago. To pay again, tap Pay once more.",
                 title="Notice")
    expect(other.get_by_role("dialog", name="Sign the payment")).to_have_count(0)
    other.get_by_role("button", name="Pay", exact=True).click()
    enter_pin(other, "Sign the payment")
    other.wait_for_url("**/activity**", timeout=60_000)
    expect_alert(other, "Payment complete.", title="Notice")
    assert erc20_balance(w3, token, merchant) == 2 * AMOUNT_UNITS
    other.close()
    browser_issues.assert_clean()


# ---------------------------------------------------------------- own app: the chain's clock, an offline chain

OFFLINE_CHAIN_ID = 31338
OFFLINE_TOKEN = "0x" + "22" * 20  # configured (symbol and decimals known without the chain)
OFFLINE_CHAIN = {
    # No payment contract, and an RPC nobody answers (127.0.0.2 is loopback, not one serve.py starts anvil on).
    "chain_id": OFFLINE_CHAIN_ID, "chain_name": "Newbl Offline", "rpc_url": "http://127.0.0.2:9",
    "multicall_address": "0x" + "11" * 20, "payment_contract": None, "native_symbol": "ETH", "native_name": "Ether",
    "native_decimals": 18, "explorer_url": None,
    "tokens": [{"token_address": OFFLINE_TOKEN, "token_symbol": "tOFF", "token_name": "Offline Token",
                "token_decimals": 6}],
}


# Test only: a sitecustomize that wraps the server's payment service (see its docstring).
TAMPER_DIR = helpers.REPO_ROOT / "tests" / "e2e" / "tamper"


@pytest.fixture(scope="module")
def late_server(tmp_path_factory):
    """A second app with its own anvil and an extra offline chain without payments: these tests
    move the chain's clock, which must not leak into other tests' payments (their deadlines
    follow the wall clock). Its payment service answers as written in its tamper file (empty:
    unchanged), for the tests of a hostile server."""
    workdir = tmp_path_factory.mktemp("e2e-late")
    chains = helpers.with_free_loopback_ports(json.loads((helpers.REPO_ROOT / "chains.dev.json").read_text()))
    chains_file = workdir / "chains-with-offline.json"
    chains_file.write_text(json.dumps([*chains, OFFLINE_CHAIN]))
    env = {
        "CHAINS_FILE": str(chains_file),
        "PYTHONPATH": os.pathsep.join(p for p in (str(TAMPER_DIR), os.environ.get("PYTHONPATH")) if p),
        "NB_E2E_TAMPER_FILE": str(workdir / "tamper"),
    }
    with own_app_server(workdir, "late", env) as server:
        yield server


@pytest.fixture
def late_page(browser, late_server):
    with helpers.mobile_page(browser, late_server.base_url, DEFAULT_TIMEOUT_MS) as page:
        yield page


LINK_ERRORS = {  # code: (en, ko), the registry's texts
    "invalid_merchant": ("The merchant address is invalid.", "가맹점 주소가 올바르지 않습니다."),
    "merchant_is_payer": ("The merchant address is your own address.", "가맹점 주소가 내 주소와 같습니다."),
    "invalid_token": ("The token address is invalid.", "토큰 주소가 올바르지 않습니다."),
    "unsupported_chain": ("unsupported chain", "지원하지 않는 체인"),
    "rpc_unavailable": ("The network is not reachable right now. Please try again.",
                        "지금은 네트워크에 연결할 수 없습니다. 다시 시도해 주세요."),
}


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_link_errors_show_their_text_once(late_page, lang):
    """Errors the link check finds: the registry's text alone (never the raw code after it)."""
    page = late_page
    own = create_wallet(page, new_email(f"linkerr-{lang}"))
    token = token_address(page, "tUSD")
    merchant = Account.create().address
    links = {
        "invalid_merchant": merchant_link("0x12", token, "1", lang=lang),
        "merchant_is_payer": merchant_link(own, token, "1", lang=lang),
        "invalid_token": merchant_link(merchant, "0x" + "g" * 40, "1", lang=lang),
        "unsupported_chain": merchant_link(merchant, token, "1", lang=lang, chain_id=999),
        # A token the app must ask the chain about, on a chain that does not answer.
        "rpc_unavailable": merchant_link(merchant, "0x" + "33" * 20, "1", lang=lang, chain_id=OFFLINE_CHAIN_ID),
    }
    index = 0 if lang == "en" else 1
    for code, link in links.items():
        page.goto(link)
        expect(page.locator("#pay-error")).to_have_text(LINK_ERRORS[code][index])
        expect(page.get_by_role("button", name="Pay" if lang == "en" else "결제하기", exact=True)).to_be_disabled()


@pytest.mark.parametrize("lang, title, message, ok", [
    ("en", "Error", "Payments are not available on this network.", "OK"),
    ("ko", "오류", "이 네트워크에서는 결제를 사용할 수 없습니다.", "확인"),
])
def test_payments_unavailable_alert_shows_its_text_once(late_page, lang, title, message, ok):
    page = late_page
    create_wallet(page, new_email(f"nopay-{lang}"))
    page.goto(merchant_link(Account.create().address, OFFLINE_TOKEN, "1", lang=lang, chain_id=OFFLINE_CHAIN_ID))
    expect(page.locator("#pay-token")).to_have_text("tOFF")
    page.get_by_role("button", name="Pay" if lang == "en" else "결제하기", exact=True).click()
    expect_alert(page, message, title=title, ok=ok)


EXPIRED = {"en": "The payment request has expired. Please try again.",  # the registry's texts of `expired`
           "ko": "결제 요청이 만료되었습니다. 다시 시도해 주세요."}


def test_expired_payment_alert_shows_its_text_once(late_page, late_server):
    """The chain's clock passes the Pay deadline before it is executed: the server's dry run
    refuses it with 'expired', in en and then ko. The chain is put back afterwards."""
    page = late_page
    w3 = chain_web3(late_server)
    create_wallet(page, new_email("expired"))
    merchant, token = approve_until_pay_pin(page, late_server, AMOUNT_UNITS)
    snapshot = w3.provider.make_request("evm_snapshot", [])["result"]
    try:
        w3.provider.make_request("evm_increaseTime", [400])
        w3.provider.make_request("evm_mine", [])
        enter_pin(page, "Sign the payment")
        expect_alert(page, EXPIRED["en"], timeout=30_000)
        # The allowance is there now: the Korean attempt goes straight to the Pay PIN.
        page.goto(merchant_link(merchant, token, "1.5", lang="ko"))
        page.get_by_role("button", name="결제하기", exact=True).click()
        enter_pin(page, "결제 서명", label="PIN 번호", confirm="확인")
        expect_alert(page, EXPIRED["ko"], title="오류", ok="확인", timeout=30_000)
    finally:
        w3.provider.make_request("evm_revert", [snapshot])
    assert [r["status"] for r in payment_rows(late_server, merchant)] == ["quoted"]  # nothing was relayed


def test_payment_past_its_deadline_ends_failed(late_page, late_server):
    page, w3 = late_page, chain_web3(late_server)
    try:
        create_wallet(page, new_email("late"))
        # The approve is mined (the Pay PIN only comes once the allowance shows); from here blocks
        # wait, so the relayed pay() sits in the mempool while the chain's clock passes the deadline.
        merchant, token = approve_until_pay_pin(page, late_server, AMOUNT_UNITS)
        w3.provider.make_request("evm_setAutomine", [False])
        enter_pin(page, "Sign the payment")
        expect(page.locator("#pay-phase")).to_have_text("Payment in progress…", timeout=30_000)
        save_screenshot(page, "payment-in-progress")
        end = time.monotonic() + 30
        while not (row := payment_rows(late_server, merchant)[0])["tx_hash"]:  # execute queued it: the relayer sends
            assert row["status"] == "pending" and time.monotonic() < end, f"the relayer never sent it: {row}"
            time.sleep(0.1)
        assert row["status"] == "pending"
        w3.provider.make_request("evm_increaseTime", [400])
        w3.provider.make_request("evm_mine", [])
        expect_alert(page, "Payment failed.", ok=None, timeout=30_000)
        save_screenshot(page, "payment-failed")
        assert erc20_balance(w3, token, merchant) == 0
        status = page.request.get("/api/v1/payment/status", params={"id": row["payment_id"]}).json()
        assert status == {"status": "failed", "reason": "expired"}
        assert w3.eth.get_transaction_receipt(row["tx_hash"])["status"] == 0
        page.get_by_role("alertdialog").get_by_role("button", name="OK").click()
        expect(page.get_by_role("button", name="Pay", exact=True)).to_be_enabled()  # a new attempt may start
    finally:
        w3.provider.make_request("evm_setAutomine", [True])


# ---------------------------------------------------------------- a hostile server: the browser re-checks what it signs

# The page's texts per language: refusal, Pay button, approve/sign dialog titles, PIN field, Confirm, Cancel.
TEXTS = {
    "en": ("The request does not match what you confirmed.", "Pay", "Approve the token", "Sign the payment", "PIN",
           "Confirm", "Cancel"),
    "ko": ("요청이 확인하신 내용과 일치하지 않습니다.", "결제하기", "토큰 사용 승인", "결제 서명", "PIN 번호",
           "확인", "취소"),
}


@pytest.fixture
def tamper(late_server):
    """tamper(mode) makes late_server's payment service answer as tests/e2e/tamper describes;
    tamper.executed() counts the Pay signatures that reached payments.execute. Reset after the test."""
    path = Path(server_env(late_server)["NB_E2E_TAMPER_FILE"])
    executed = Path(f"{path}.execute")
    executed.unlink(missing_ok=True)

    def set_mode(mode: str) -> None:
        path.write_text(mode)

    set_mode.executed = lambda: len(executed.read_text().splitlines()) if executed.exists() else 0
    try:
        yield set_mode
    finally:
        path.write_text("")


def expect_refused(page, step: str, lang: str = "en", refused: str | None = None, shot: str | None = None) -> None:
    """The PIN dialog of `step` ('approve' or 'sign') refuses before any PIN: the exact message
    (`refused`, else the tampering one), Confirm stays off with a full PIN typed; then it is
    cancelled (`shot`: a screenshot of it)."""
    mismatch, pay, approve, sign, pin, confirm, cancel = TEXTS[lang]
    refused = refused or mismatch
    dialog = page.get_by_role("dialog", name=approve if step == "approve" else sign)
    expect(dialog.get_by_role("alert")).to_have_text(refused, timeout=30_000)
    if shot:
        save_screenshot(page, shot)
    expect(dialog.get_by_test_id("pin-summary")).to_have_count(0)
    dialog.get_by_label(pin, exact=True).fill(PIN)
    expect(dialog.get_by_role("button", name=confirm)).to_be_disabled()
    dialog.get_by_role("button", name=cancel).click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("button", name=pay, exact=True)).to_be_enabled()  # the flow stopped


def test_tampered_approve_is_refused_and_nothing_is_sent(late_page, late_server, tamper):
    page = late_page
    payer = Web3.to_checksum_address(create_wallet(page, new_email("tamper-approve")))
    token = deployed_token(late_server, "tEUR")
    w3 = chain_web3(late_server)
    wait_for_chain_balance(w3, token, payer, AMOUNT_UNITS)
    nonce = w3.eth.get_transaction_count(payer, "pending")
    merchant = Account.create().address
    for mode, lang in (("approve_unlimited", "en"), ("approve_spender", "ko")):
        tamper(mode)
        page.goto(merchant_link(merchant, token, "1.5", lang=lang))
        page.get_by_role("button", name=TEXTS[lang][1], exact=True).click()
        expect_refused(page, "approve", lang, shot=f"payment-refused-{mode}")
        assert w3.eth.get_transaction_count(payer, "pending") == nonce, mode  # no approve reached the chain
    assert tamper.executed() == 0
    assert {r["status"] for r in payment_rows(late_server, merchant)} == {"quoted"}


def test_tampered_pay_domain_is_refused_and_no_signature_is_sent(late_page, late_server, tamper):
    page = late_page
    payer = Web3.to_checksum_address(create_wallet(page, new_email("tamper-domain")))
    token = deployed_token(late_server, "tEUR")
    w3 = chain_web3(late_server)
    start = wait_for_chain_balance(w3, token, payer, AMOUNT_UNITS)
    nonce = w3.eth.get_transaction_count(payer, "pending")
    merchant = Account.create().address
    # Other chainId: the approve is the real one (signed and mined); the Pay typed data is refused.
    tamper("domain_chain")
    page.goto(merchant_link(merchant, token, "1.5"))
    page.get_by_role("button", name="Pay", exact=True).click()
    enter_pin(page, "Approve the token")
    expect_refused(page, "sign", shot="payment-refused-domain_chain")
    # Other verifyingContract: the allowance is there, straight to the refused Pay dialog (in Korean).
    tamper("domain_contract")
    page.goto(merchant_link(merchant, token, "1.5", lang="ko"))
    page.get_by_role("button", name="결제하기", exact=True).click()
    expect_refused(page, "sign", "ko")
    assert tamper.executed() == 0  # no Pay signature reached the server
    assert {r["status"] for r in payment_rows(late_server, merchant)} == {"quoted"}
    assert w3.eth.get_transaction_count(payer, "pending") == nonce + 1  # the approve only
    assert erc20_balance(w3, token, merchant) == 0
    assert erc20_balance(w3, token, payer) == start


def test_tampered_permit_is_refused_and_no_signature_is_sent(late_page, late_server, tamper):
    """The quote's Permit allows more than the payment, or names another spender: the browser
    refuses it before any PIN, in en and ko, and no signature reaches the server."""
    page = late_page
    create_wallet(page, new_email("tamper-permit"))
    token = token_address(page, "tUSD")
    wait_for_balance(page, "tUSD", AMOUNT_UNITS)
    merchant = Account.create().address
    for mode, lang in (("permit_unlimited", "en"), ("permit_spender", "ko")):
        tamper(mode)
        page.goto(merchant_link(merchant, token, "1.5", lang=lang))
        page.get_by_role("button", name=TEXTS[lang][1], exact=True).click()
        expect_refused(page, "sign", lang, shot=f"payment-refused-{mode}")
    assert tamper.executed() == 0
    assert {r["status"] for r in payment_rows(late_server, merchant)} == {"quoted"}
    assert erc20_balance(chain_web3(late_server), token, merchant) == 0


# ---------------------------------------------------------------- the phone's clock

PAY_DEADLINE_SECONDS = 300  # the page's Pay deadline: 5 minutes after the server's now (specification)
CLOCK_OFF = {
    "en": "The payment's time limit does not match this phone's clock. "
          "Make sure the date and time are set automatically, then try again.",
    "ko": "결제 유효 시간이 이 휴대폰의 시계와 맞지 않습니다. "
          "날짜와 시간이 자동으로 설정되어 있는지 확인한 뒤 다시 시도해 주세요.",
}


def test_a_phone_clock_minutes_off_is_told_and_nothing_is_signed(late_page, late_server):
    """The server sets the deadline 5 minutes after its own now; a phone 10 minutes fast sees it
    already past, one 10 minutes slow sees it 15 minutes ahead. Either way the Permit and the Pay
    are refused before the PIN, with the cause (not the tampering text), in en and ko."""
    page = late_page
    create_wallet(page, new_email("clock"))
    token = token_address(page, "tUSD")
    wait_for_balance(page, "tUSD", AMOUNT_UNITS)
    merchant = Account.create().address
    for offset, lang in ((600, "en"), (-600, "ko")):
        page.clock.set_fixed_time(time.time() + offset)
        page.goto(merchant_link(merchant, token, "1.5", lang=lang))
        page.get_by_role("button", name=TEXTS[lang][1], exact=True).click()
        expect_refused(page, "sign", lang, refused=CLOCK_OFF[lang], shot=f"payment-clock-off-{lang}")
    assert {r["status"] for r in payment_rows(late_server, merchant)} == {"quoted"}  # no signature was executed
    assert erc20_balance(chain_web3(late_server), token, merchant) == 0


def test_the_phone_clock_running_past_the_deadline_in_the_pin_dialog_decides_nothing(page, app_server):
    """The deadline is checked against the phone's clock once, when the PIN dialog opens; whether
    the time ran out is the server's (and the chain's) to say. A phone 3 minutes 20 s fast (en,
    the Pay after an approve: the phone's clock moves there while the dialog is open; ko, the
    Permit and Pay: fast from the start) saw the deadline pass after 100 s of the server's five
    minutes and refused with 'expired', nothing signed, while the server would take the payment
    for another two minutes and more. Here the phone's clock passes the deadline before the PIN
    is confirmed, the server's does not: the payment is made (on the shared app, whose chain's
    clock follows the wall clock: the late server's is moved on by the tests before)."""
    create_wallet(page, new_email("dialog-late"))
    wait_for_balance(page, "tUSD", AMOUNT_UNITS)
    w3 = chain_web3(app_server)
    merchant, teur = approve_until_pay_pin(page, app_server, AMOUNT_UNITS)
    tusd = token_address(page, "tUSD")
    for lang, token in (("en", teur), ("ko", tusd)):
        if lang == "ko":
            page.clock.set_fixed_time(time.time() + 200)  # 3 min 20 s fast: the deadline 100 s ahead
            page.goto(merchant_link(merchant, token, "1.5", lang=lang))
            page.get_by_role("button", name=TEXTS[lang][1], exact=True).click()
        _, _, _, sign, pin, confirm, _ = TEXTS[lang]
        dialog = page.get_by_role("dialog", name=sign)
        expect(dialog.get_by_test_id("pin-summary")).to_be_visible(timeout=30_000)  # the checks passed
        page.clock.set_fixed_time(time.time() + PAY_DEADLINE_SECONDS + 60)  # this phone: a minute past it
        dialog.get_by_label(pin, exact=True).fill(PIN)
        dialog.get_by_role("button", name=confirm).click()
        page.wait_for_url("**/activity**", timeout=60_000)
        # /activity is in the user's language (the link's lang is its page's only)
        expect_alert(page, "Payment complete.", title="Notice", timeout=30_000)
        assert erc20_balance(w3, token, merchant) == AMOUNT_UNITS
    assert {r["status"] for r in payment_rows(app_server, merchant)} == {"ok"}


def test_a_link_opened_while_the_page_left_is_still_answered_stays_on_the_payment(late_page, late_server, tamper):
    """An event of the page the user left, handled after its websocket closed (on a loaded server
    or another worker), found no user through that socket and applied the 401 behaviour: its
    redirect to / went to the tab's next page (Reflex sends a client's updates to its current
    socket), and / sent the signed-in user on to /home. A merchant link opened from a page of the
    app landed on Home (CI: test_axe's payment test; test_outage_page's /settings). Here the left
    page's device check is the late event: its session lookup waits until its socket has closed."""
    page = late_page
    page.context.add_init_script(helpers.SOCKET_WATCH)
    mode = Path(server_env(late_server)["NB_E2E_TAMPER_FILE"])
    taken, go, done = (Path(f"{mode}.{step}") for step in ("taken", "go", "done"))
    create_wallet(page, new_email("left-page"))
    page.goto("/settings")
    switch_language(page, "한국어", "ko")
    switch_language(page, "English", "en")  # by then every earlier event of the page has been handled
    try:
        tamper("late_session_lookup")
        page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")  # the device check reports
        wait_until(taken.exists, 15, "the device check's lookup never came")
        page.goto(merchant_link(Account.create().address, deployed_token(late_server, "tEUR"), "1.5"))
        # The link's socket is connected (Socket.IO's CONNECT acknowledged: the server knows it is
        # the tab's socket now); then the left page's lookup reads.
        page.wait_for_function("() => window.__nbFrames.last.some((frame) => frame.startsWith('40'))")
        go.write_text("go")
        wait_until(done.exists, 15, "the late lookup never read")
        expect(page.locator("[aria-busy=true]")).to_have_count(0)  # the link's own load is done
        expect(page.get_by_role("heading", level=1)).to_have_text("Payment")
        expect(page.get_by_role("button", name="Pay", exact=True)).to_be_enabled()
        assert urlparse(page.url).path.rstrip("/") == "/payment", page.url
    finally:
        for step in (taken, go, done):
            step.unlink(missing_ok=True)
