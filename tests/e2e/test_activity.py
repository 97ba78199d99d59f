"""/activity with a real entry, in English and Korean. The transfer is built and submitted through
the REST API and signed here with eth-account from the test's own copy of the wallet (the
Send -> Sign UI flow has its own test); the page must render the entry from its fields."""

from __future__ import annotations

from eth_account import Account
from playwright.sync_api import Page, expect

from tests.e2e.flows import PIN, create_wallet, local_materials, new_email
from tests.e2e.test_assets import FAUCET_BALANCE, set_language, wait_for_balance
from tests.e2e.vault_py import recover_phrase

Account.enable_unaudited_hdwallet_features()
RECIPIENT = "0x" + "5a" * 19 + "c3"


def submit_transfer(page: Page, address: str, token: dict, amount: int, to: str = RECIPIENT) -> str:
    phrase = recover_phrase(local_materials(page, address), PIN)
    account = Account.from_mnemonic(phrase, account_path="m/44'/60'/0'/0/0")
    built = page.request.post("/api/v1/tx/build", data={
        "chain_id": token["chain_id"], "token_address": token["token_address"], "to": to,
        "amount": str(amount)})
    assert built.ok, built.text()
    tx = built.json()
    signed = account.sign_transaction({
        "chainId": int(tx["chain_id"]), "to": tx["to"], "data": tx["data"], "value": int(tx["value"]),
        "nonce": int(tx["nonce"]), "gas": int(tx["gas_limit"]), "gasPrice": int(tx["gas_price"])})
    submitted = page.request.post("/api/v1/tx/submit", data={"raw_tx": "0x" + signed.raw_transaction.hex()
                                                             .removeprefix("0x")})
    assert submitted.ok, submitted.text()
    return submitted.json()["tx_hash"]


def test_activity_shows_entry_in_both_languages(page: Page, screenshot, browser_issues):
    address = create_wallet(page, new_email("activity"))
    wait_for_balance(page, "tUSD", FAUCET_BALANCE)  # the faucet's tokens (and gas) have landed
    tusd = next(t for t in page.request.get("/api/v1/tokens").json() if t["token_symbol"] == "tUSD")
    tx_hash = submit_transfer(page, address, tusd, 1_500_000)

    page.goto("/activity")
    entry = page.locator(".activity-entry")
    expect(entry).to_have_count(1)
    who = f"{RECIPIENT[:6]}…{RECIPIENT[-4:]}"
    expect(entry.locator(".activity-type")).to_have_text("Transfer")
    expect(entry.locator(".activity-summary")).to_have_text(f"Sent 1.5 tUSD to {who}")
    expect(entry.locator(".activity-status")).to_have_text("Confirmed")  # anvil mines at once
    expect(entry.locator("code")).to_have_text(f"{tx_hash[:6]}…{tx_hash[-4:]}")
    screenshot("activity_entry_en")

    page.goto("/home")
    wait_for_balance(page, "tUSD", "998.5")

    set_language(page, "한국어", "ko")
    page.goto("/activity")
    expect(entry.locator(".activity-type")).to_have_text("송금")
    expect(entry.locator(".activity-summary")).to_have_text(f"{who}에게 1.5 tUSD 보냄")
    expect(entry.locator(".activity-status")).to_have_text("완료")
    screenshot("activity_entry_ko")
    browser_issues.assert_clean()
