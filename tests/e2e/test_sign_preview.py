"""Issue 11 items 1 to 3 in Chromium at 390x844 on the app's anvil: hostile /sign links.

Each link is built with services.txlink.encode_tx for the signed-in owner (its real nonce, the
node's gas price unless the case says otherwise). A refused link shows its exact message, the
Confirm button cannot open the PIN dialog, and nothing reaches the chain (the nonce is unchanged);
a warned link shows its decoded lines and warnings, and the unlimited approve is then signed.
Every link also shows the owner's simulated balance changes (eth_simulateV1 on the anvil), or
'This transaction is expected to fail.' with an extra confirmation before the PIN dialog.
"""

import re

import pytest
from eth_abi import encode
from eth_account import Account
from playwright.sync_api import expect
from web3 import Web3

from tests.e2e.flows import PIN, create_wallet, expect_alert, new_email, set_language
from tests.e2e.flows_send import wait_for_asset, web3_of
from wallet_app.services.amounts import format_balance, format_fee
from wallet_app.services.txlink import encode_tx

NETWORK = "Newbl Dev (anvil)"
KDF_TIMEOUT_MS = 60_000
GAS_LIMIT = 100_000
UNLIMITED_TEXT = "Unlimited approval: this address can take all of this token."
UNKNOWN_TEXT = "Unknown function: check that you trust this site."
MALFORMED_APPROVE = "The data of this approve call is not exactly its arguments, so it cannot be signed."
FAIL_TEXT = "This transaction is expected to fail."
FIRST_TIME = "First time sending to this address."
LOOKALIKE = "This address looks like one you used before, but it is different."
ACK_TEXT = "I understand it is expected to fail and want to sign anyway."
ALLOWANCE_ABI = [{"name": "allowance", "type": "function", "stateMutability": "view",
                  "inputs": [{"name": "o", "type": "address"}, {"name": "s", "type": "address"}],
                  "outputs": [{"name": "", "type": "uint256"}]}]


def approve_data(spender: str, amount: int) -> str:
    return "0x095ea7b3" + encode(["address", "uint256"], [spender, amount]).hex()


def transfer_data(to: str, amount: int) -> str:
    return "0xa9059cbb" + encode(["address", "uint256"], [to, amount]).hex()


def fee_text(gas_price: int) -> str:
    return f"{format_fee(GAS_LIMIT * gas_price, 18)} ETH"


@pytest.fixture
def funded(page, app_server):
    """A new wallet with the faucet's ETH and tUSD: (address, tUSD item, web3)."""
    owner = Web3.to_checksum_address(create_wallet(page, new_email("preview")))
    tusd = wait_for_asset(page, "tUSD")
    w3 = web3_of(app_server)
    assert w3.eth.get_balance(owner) > 0
    return owner, tusd, w3


def test_hostile_links_are_decoded_warned_or_refused(page, funded, screenshot, browser_issues):
    owner, tusd, w3 = funded
    token = Web3.to_checksum_address(tusd["token_address"])
    attacker = Account.create().address
    nonce = w3.eth.get_transaction_count(owner)
    price = w3.eth.gas_price
    balance = w3.eth.get_balance(owner)

    def link(**fields) -> str:
        tx = {"chain_id": "31337", "to": token, "data": "0x", "value": "0", "nonce": str(nonce),
              "gas_limit": str(GAS_LIMIT), "gas_price": str(price), **fields}
        return "/sign?tx=" + encode_tx(tx)

    drain = format_balance(balance, 18, max_decimals=18)
    tenth = format_balance(balance // 10, 18, max_decimals=18)
    tusd_balance = int(tusd["balance"])
    # (name, link, summary lines, warnings, refusal or None, fee, balance changes or the simulation's text)
    cases = [
        ("unlimited-approve", link(data=approve_data(attacker, 2**256 - 1)),
         [f"Approve {attacker} to spend unlimited tUSD"], [UNLIMITED_TEXT, FIRST_TIME], None, fee_text(price),
         "No balance changes."),
        ("token-transfer", link(data=transfer_data(attacker, 12_500_000)),
         [f"Send 12.5 tUSD to {attacker}"], [FIRST_TIME], None, fee_text(price), ["-12.5 tUSD"]),
        ("native-drain", link(to=attacker, value=str(balance)),
         [f"Sends {drain} ETH"], [FIRST_TIME], "Not enough ETH for the network fee.", fee_text(price),
         [f"-{drain} ETH"]),
        ("native-affordable", link(to=attacker, value=str(balance // 10)),
         [f"Sends {tenth} ETH"], [FIRST_TIME], None, fee_text(price), [f"-{tenth} ETH"]),
        ("gas-price-1e15", link(data=approve_data(attacker, 5_000_000), gas_price=str(10**15)),
         [f"Approve {attacker} to spend 5 tUSD"], [FIRST_TIME], "The network fee is unusually high.", "100 ETH",
         "No balance changes."),
        ("unknown-selector", link(to=attacker, data="0xdeadbeef00"),
         ["Contract call"], [UNKNOWN_TEXT, FIRST_TIME], None, fee_text(price), "No balance changes."),
        ("zero-to", link(to="0x" + "00" * 20, value="1"),
         ["Sends 0.000000000000000001 ETH"], [],
         "This request has no recipient address (to is missing or the zero address).", fee_text(price),
         ["-0.000000000000000001 ETH"]),
        ("reverting-call", link(data=transfer_data(attacker, tusd_balance + 1)),
         [f"Send {format_balance(tusd_balance + 1, 6, max_decimals=6)} tUSD to {attacker}"], [FIRST_TIME], None,
         fee_text(price), FAIL_TEXT),
        # One byte after the arguments: the token still runs the approve (no Transfer: no balance
        # change), so it is decoded, warned of and refused.
        ("approve-trailing-byte", link(data=approve_data(attacker, 2**256 - 1) + "00"),
         [f"Approve {attacker} to spend unlimited tUSD"], [UNLIMITED_TEXT, MALFORMED_APPROVE, FIRST_TIME],
         "invalid transaction", fee_text(price), "No balance changes."),
        # A nonce after the account's next: it would wait for transactions never sent.
        ("nonce-ahead", link(data=transfer_data(attacker, 12_500_000), nonce=str(nonce + 1)),
         [f"Send 12.5 tUSD to {attacker}"], [FIRST_TIME],
         "This transaction's nonce is ahead of your account's: it would wait for transactions that were never sent.",
         fee_text(price), ["-12.5 tUSD"]),
        # Far above any supply, if not 2^256 - 1: unlimited too.
        ("approve-1e60", link(data=approve_data(attacker, 10**60)),
         [f"Approve {attacker} to spend unlimited tUSD"], [UNLIMITED_TEXT, FIRST_TIME], None, fee_text(price),
         "No balance changes."),
    ]
    confirm = page.get_by_role("button", name="Confirm")
    for name, url, lines, warnings, refused, fee, changes in cases:
        page.goto(url)
        expect(page.locator("#sign-lines .sign-line")).to_have_text(lines)
        expect(page.locator(".sign-warning")).to_have_text(warnings)
        # Always visible: the fee and the chain, outside the collapsed details.
        expect(page.locator("#sign-fee")).to_have_text(fee)
        expect(page.locator("#sign-chain")).to_have_text(NETWORK)
        if isinstance(changes, list):
            expect(page.locator("#sign-changes .sign-change")).to_have_text(changes)
        else:
            expect(page.locator("#sign-changes-status")).to_have_text(changes)
            expect(page.locator("#sign-changes .sign-change")).to_have_count(0)
        if refused is None and changes == FAIL_TEXT:
            # Expected to fail: Confirm opens the PIN dialog only after the extra confirmation.
            expect(page.locator("#sign-will-fail")).to_have_text(FAIL_TEXT)
            expect(confirm).to_be_disabled()
            page.get_by_role("checkbox", name=ACK_TEXT).click()
            expect(confirm).to_be_enabled()
            page.get_by_role("checkbox", name=ACK_TEXT).click()
            expect(confirm).to_be_disabled()
        elif refused is None:
            expect(page.locator("#sign-refusal")).to_have_count(0)
            expect(page.locator("#sign-will-fail")).to_have_count(0)
            expect(confirm).to_be_enabled()
        else:
            expect(page.locator("#sign-refusal")).to_have_text(refused)
            expect(page.get_by_role("alert").filter(has_text=refused)).to_have_count(1)
            expect(confirm).to_be_disabled()
            confirm.click(force=True)  # a disabled button: no PIN dialog
            expect(page.get_by_role("dialog")).to_have_count(0)
        if name == "unknown-selector":
            expect(page.locator("#sign-selector")).to_have_text("0xdeadbeef")
        screenshot(f"sign-preview-{name}", full_page=True)

    page.goto(link(chain_id="999999"))
    page.wait_for_url("**/home")
    expect_alert(page, "unsupported chain")
    assert w3.eth.get_transaction_count(owner) == nonce  # no refused link reached the chain

    # Warned, then signed: the unlimited approve goes through once the user confirms with the PIN.
    page.goto(cases[0][1])
    expect(page.locator(".sign-warning")).to_have_text([UNLIMITED_TEXT, FIRST_TIME])
    confirm.click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("PIN").fill(PIN)
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.locator("#sign-tx-hash")).to_have_text(re.compile(r"0x[0-9a-f]{64}"), timeout=KDF_TIMEOUT_MS)
    receipt = w3.eth.wait_for_transaction_receipt(page.locator("#sign-tx-hash").inner_text(), timeout=30)
    assert receipt["status"] == 1
    allowance = w3.eth.contract(address=token, abi=ALLOWANCE_ABI).functions.allowance(owner, attacker).call()
    assert allowance == 2**256 - 1

    # The attacker is now in the history: a look-alike (same first 4 and last 4 hex digits) is
    # called out on /sign and on Send; the address itself is not new any more.
    a = attacker.lower()
    lookalike = Web3.to_checksum_address("0x" + a[2:6] + ("1" if a[6] == "0" else "0") * 32 + a[-4:])
    nonce = w3.eth.get_transaction_count(owner)
    page.goto(link(data=transfer_data(lookalike, 1_000_000)))
    expect(page.locator("#sign-lines .sign-line")).to_have_text([f"Send 1 tUSD to {lookalike}"])
    expect(page.locator(".sign-warning")).to_have_text([LOOKALIKE])
    screenshot("sign-preview-lookalike", full_page=True)
    page.goto(link(data=transfer_data(attacker, 1_000_000)))
    expect(page.locator("#sign-lines .sign-line")).to_have_text([f"Send 1 tUSD to {attacker}"])
    expect(page.locator(".sign-warning")).to_have_text([])

    page.goto("/send")
    field = page.get_by_label("Recipient address")
    note = page.locator("#send-recipient-note")
    for recipient, expected in [(lookalike, LOOKALIKE), (Account.create().address, FIRST_TIME), (attacker, None)]:
        field.fill(recipient)
        if expected is None:
            expect(note).to_have_count(0)
        else:
            expect(note).to_have_text(expected)
    field.fill(lookalike)
    expect(note).to_have_text(LOOKALIKE)
    screenshot("send-lookalike")

    # The same summary and warnings in Korean.
    set_language(page, "한국어", "ko")
    page.goto(link(data=approve_data(lookalike, 2**256 - 1)))
    expect(page.locator("#sign-lines .sign-line")).to_have_text(
        [f"{lookalike}이(가) 무제한 tUSD을(를) 쓸 수 있도록 승인"])
    expect(page.locator(".sign-warning")).to_have_text([
        "무제한 승인: 이 주소가 이 토큰을 모두 가져갈 수 있습니다.",
        "이 주소는 전에 사용한 주소와 비슷해 보이지만 다른 주소입니다.",
    ])
    expect(page.locator("#sign-changes-status")).to_have_text("잔액 변화가 없습니다.")
    screenshot("sign-preview-ko", full_page=True)
    browser_issues.assert_clean()
