"""/activity with a real entry, in English and Korean. The transfer is built and submitted through
the REST API and signed here with eth-account from the test's own copy of the wallet (the
Send -> Sign UI flow has its own test); the page must render the entry from its fields."""

from __future__ import annotations

import fcntl
import time
from pathlib import Path

from eth_account import Account
from playwright.sync_api import Page, expect
from web3 import Web3

from contracts.artifacts import artifact
from contracts.deploy import fund
from tests.e2e.flows import PIN, assert_within_screen, create_wallet, local_materials, new_email, set_language
from tests.e2e.flows_payment import server_env
from tests.e2e.flows_send import web3_of
from tests.e2e.test_assets import FAUCET_BALANCE, wait_for_balance
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


# anvil's account #3 of the dev mnemonic: a wallet outside the app (the faucet is #0, the relayer #1).
OUTSIDER_KEY = "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6"


def wait_for_entries(page: Page, kind: str, count: int, timeout: float = 60) -> list[dict]:
    """The indexer runs in the background (the relayer process): poll GET /api/v1/activities
    until `count` entries of `kind` are there; returns them."""
    deadline = time.monotonic() + timeout
    found: list[dict] = []
    while time.monotonic() < deadline:
        found = [e for e in page.request.get("/api/v1/activities").json() if e["type"] == kind]
        if len(found) >= count:
            return found
        page.wait_for_timeout(500)  # polling interval of a wait-for-condition loop
    raise AssertionError(f"{len(found)} of {count} {kind} entries within {timeout} s: {found}")


def send_from_outsider(w3: Web3, tx: dict) -> None:
    """`tx` (to, and data or value) signed by anvil's account #3 and mined."""
    outsider = Account.from_key(OUTSIDER_KEY)
    tx = {"value": 0, "data": "0x", **tx, "chainId": w3.eth.chain_id, "gasPrice": w3.eth.gas_price,
          "nonce": w3.eth.get_transaction_count(outsider.address, "pending")}
    tx["gas"] = w3.eth.estimate_gas({**tx, "from": outsider.address})
    sent = w3.eth.send_raw_transaction(outsider.sign_transaction(tx).raw_transaction)
    assert w3.eth.wait_for_transaction_receipt(sent, timeout=30)["status"] == 1


def test_transfers_received_from_another_account_appear_as_incoming(page: Page, app_server, screenshot,
                                                                     browser_issues):
    address = Web3.to_checksum_address(create_wallet(page, new_email("incoming")))
    wait_for_balance(page, "tUSD", FAUCET_BALANCE)  # the faucet's sends are done (and not shown)
    w3 = web3_of(app_server)
    outsider = Account.from_key(OUTSIDER_KEY)
    deployments = Path(server_env(app_server)["DEPLOYMENTS_DIR"])
    # The outsider's tUSD, minted by the deployer under the app's faucet lock (one nonce sequence).
    with open(deployments / "faucet.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fund(w3.provider.endpoint_uri, outsider.address, deployments, eth_wei=0)
    tusd = next(t for t in page.request.get("/api/v1/tokens").json() if t["token_symbol"] == "tUSD")
    erc20 = Web3().eth.contract(abi=artifact("TestToken")["abi"])
    send_from_outsider(w3, {"to": tusd["token_address"], "data": erc20.encode_abi("transfer", [address, 2_500_000])})
    send_from_outsider(w3, {"to": address, "value": 25 * 10**16})

    received = wait_for_entries(page, "receive", 2)
    assert {(e["token_symbol"], e["amount"], e["status"]) for e in received} == {
        ("tUSD", "2500000", "ok"), ("ETH", str(25 * 10**16), "ok")}
    page.goto("/activity")
    entries = page.locator(".activity-entry")
    expect(entries).to_have_count(2)  # only these two: the faucet's funding is not the user's activity
    who = f"{outsider.address.lower()[:6]}…{outsider.address.lower()[-4:]}"
    expect(entries.locator(".activity-type")).to_have_text(["Received", "Received"])
    expect(entries.locator(".activity-summary")).to_have_text(
        [f"Received 0.25 ETH from {who}", f"Received 2.5 tUSD from {who}"])
    expect(entries.locator(".activity-status")).to_have_text(["Confirmed", "Confirmed"])
    screenshot("activity_incoming_en")

    set_language(page, "한국어", "ko")
    page.goto("/activity")
    expect(entries.locator(".activity-type")).to_have_text(["입금", "입금"])
    expect(entries.locator(".activity-summary")).to_have_text(
        [f"{who}에게서 0.25 ETH 받음", f"{who}에게서 2.5 tUSD 받음"])
    expect(entries.locator(".activity-status")).to_have_text(["완료", "완료"])
    screenshot("activity_incoming_ko")
    browser_issues.assert_clean()


def lookalike_of(address: str) -> str:
    """Another address with the same first 4 and last 4 hex digits (what a poisoner grinds for)."""
    a = address.lower()
    return Web3.to_checksum_address("0x" + a[2:6] + "0" * 32 + a[-4:])


def test_dust_from_a_lookalike_of_a_recipient_is_called_out(page: Page, app_server, screenshot, browser_issues):
    """Address poisoning: the user sent to an address; dust arrives from another one with the same
    first 4 and last 4 hex digits, so the two entries show the same 0x…: the received one says so."""
    address = Web3.to_checksum_address(create_wallet(page, new_email("poison")))
    wait_for_balance(page, "tUSD", FAUCET_BALANCE)
    outsider = Account.from_key(OUTSIDER_KEY).address.lower()
    tusd = next(t for t in page.request.get("/api/v1/tokens").json() if t["token_symbol"] == "tUSD")
    submit_transfer(page, address, tusd, 1_000_000, to=lookalike_of(outsider))
    send_from_outsider(web3_of(app_server), {"to": address, "value": 1})  # 1 wei of dust

    wait_for_entries(page, "receive", 1)
    page.goto("/activity")
    entries = page.locator(".activity-entry")
    # Each entry found by its token, not its place: the sent one is dated by the server's clock,
    # the received one by its block's, and a clean-clone run listed the sent one first.
    received, sent = entries.filter(has_text="ETH"), entries.filter(has_text="tUSD")
    who = f"{outsider[:6]}…{outsider[-4:]}"
    expect(entries).to_have_count(2)
    expect(received.locator(".activity-summary")).to_have_text(f"Received 0.000000000000000001 ETH from {who}")
    expect(sent.locator(".activity-summary")).to_have_text(f"Sent 1 tUSD to {who}")
    expect(entries.locator(".activity-warning")).to_have_text([
        "This sender's address looks like one you sent to before, but it is different (address poisoning): "
        "never send to it."])
    expect(received.locator(".activity-warning")).to_have_count(1)
    screenshot("activity_poisoning_en")
    set_language(page, "한국어", "ko")
    page.goto("/activity")
    expect(entries.locator(".activity-warning")).to_have_text([
        "보낸 사람의 주소는 전에 송금한 주소와 비슷해 보이지만 다른 주소입니다(주소 위장). "
        "이 주소로는 절대 보내지 마세요."])
    expect(received.locator(".activity-warning")).to_have_count(1)
    screenshot("activity_poisoning_ko")
    browser_issues.assert_clean()


def test_a_long_amount_is_shown_whole(page: Page, app_server, browser_issues):
    """An entry's amount wraps inside the 390 px screen: on one line, a long one was cut at the
    card's edge (here a send of far more than the balance, which failed: /tx/build cannot
    estimate it, so it is built here)."""
    address = create_wallet(page, new_email("activity-long"))
    wait_for_balance(page, "tUSD", FAUCET_BALANCE)  # the faucet's gas has landed too
    tusd = next(t for t in page.request.get("/api/v1/tokens").json() if t["token_symbol"] == "tUSD")
    phrase = recover_phrase(local_materials(page, address), PIN)
    account = Account.from_mnemonic(phrase, account_path="m/44'/60'/0'/0/0")
    data = "0xa9059cbb" + RECIPIENT[2:].rjust(64, "0") + "f" * 64  # transfer(RECIPIENT, 2**256 - 1)
    signed = account.sign_transaction({
        "chainId": 31337, "to": tusd["token_address"], "data": data, "value": 0, "nonce": 0, "gas": 100_000,
        "gasPrice": web3_of(app_server).eth.gas_price * 2})
    submitted = page.request.post("/api/v1/tx/submit", data={"raw_tx": "0x" + signed.raw_transaction.hex()
                                                             .removeprefix("0x")})
    assert submitted.ok, submitted.text()

    page.goto("/activity")
    summary = page.locator(".activity-entry .activity-summary")
    amount = "115,792,089,237,316,195,423,570,985,008,687,907,853,269,984,665,640,564,039,457,584,007,913,129.639935"
    expect(summary).to_have_text(f"Sent {amount} tUSD to {RECIPIENT[:6]}…{RECIPIENT[-4:]}")
    assert_within_screen(summary)
    browser_issues.assert_clean()
