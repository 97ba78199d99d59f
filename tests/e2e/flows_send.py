"""Steps for the Send and Sign e2e tests: the app's chain, faucet balances, the Send form."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
from eth_account import Account
from playwright.sync_api import Locator, Page, expect
from web3 import Web3

from tests.e2e import helpers
from tests.e2e.flows import PIN, pin_field
from tests.e2e.y4m import write_qr_y4m

KDF_TIMEOUT_MS = 60_000  # Argon2id with 256 MiB in the browser

ERC20_BALANCE_ABI = [{"name": "balanceOf", "type": "function", "stateMutability": "view",
                      "inputs": [{"name": "owner", "type": "address"}],
                      "outputs": [{"name": "", "type": "uint256"}]}]


def sign_link(tx: dict) -> str:
    """/sign?tx= with `tx` as the page reads it (base64url JSON, unpadded), unchecked: a test's
    link may be malformed on purpose (services.txlink.encode_tx checks and normalises it first)."""
    return "/sign?tx=" + base64.urlsafe_b64encode(json.dumps(tx).encode()).decode().rstrip("=")


def call_link(to: str, nonce: int = 0, gas_price: int = 1) -> str:
    """A /sign link of a call of `to` (0xdeadbeef) with 5 wei; `nonce`: the account's next (the
    page refuses any other); `gas_price`: the chain's (w3.eth.gas_price) for a link that can be
    signed, since /sign refuses a price under the next block's base fee (fee_outdated)."""
    return sign_link({"chain_id": "31337", "to": to, "data": "0xdeadbeef", "value": "5", "nonce": str(nonce),
                      "gas_limit": "21000", "gas_price": str(gas_price)})


def chains_of(app_server) -> list[dict]:
    """The chains file the app server runs with (helpers.start_wallet_app passes CHAINS_FILE)."""
    path = psutil.Process(app_server.proc.pid).environ()["CHAINS_FILE"]
    return json.loads(Path(path).read_text())


def web3_of(app_server, chain_id: int = 31337) -> Web3:
    chain = next(c for c in chains_of(app_server) if c["chain_id"] == chain_id)
    w3 = Web3(Web3.HTTPProvider(chain["rpc_url"], request_kwargs={"timeout": 10}))
    assert w3.eth.chain_id == chain_id
    return w3


def token_balance(w3: Web3, token: str, owner: str) -> int:
    contract = w3.eth.contract(address=Web3.to_checksum_address(token), abi=ERC20_BALANCE_ABI)
    return contract.functions.balanceOf(Web3.to_checksum_address(owner)).call()


def wait_for_asset(page: Page, symbol: str, timeout: float = 60) -> dict:
    """The faucet funds a new address in the background: poll GET /api/v1/assets until `symbol`
    has a positive balance; returns its balance item."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        response = page.request.get("/api/v1/assets")
        last = response.json() if response.ok else response.status
        if response.ok:
            for item in last:
                if item["token_symbol"] == symbol and int(item["balance"]) > 0:
                    return item
        page.wait_for_timeout(500)  # polling interval of a wait-for-condition loop
    raise AssertionError(f"no {symbol} balance within {timeout} s: {last}")


def pick(page: Page, label: str, option: str) -> None:
    """Choose `option` in the dropdown selector named `label`."""
    page.get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=option).click()
    expect(page.get_by_role("listbox")).to_have_count(0)


def fill_send(page: Page, network: str | None = None, recipient: str | None = None,
              amount: str | None = None) -> None:
    if network is not None:
        pick(page, "Network", network)
    # Each field waits until the server has its value: a click on Next may otherwise come while
    # the recipient note is still on its way and be lost when the note moves the button.
    for label, var, value in (("Recipient address", "recipient", recipient), ("Amount", "amount", amount)):
        if value is not None:
            since = helpers.received_frames(page)
            page.get_by_label(label).fill(value)
            helpers.wait_for_state(page, since, var, value)


def send_to_sign(page: Page, amount: str = "1") -> None:
    """A wallet with the faucet's tUSD: Send of `amount` tUSD on the dev chain to a new address,
    Next, on its /sign page."""
    wait_for_asset(page, "tUSD")
    page.goto("/send")
    fill_send(page, network="Newbl Dev (anvil)", recipient=Account.create().address, amount=amount)
    page.get_by_role("button", name="Next").click()
    page.wait_for_url("**/sign?tx=**")


def bad_checksum(address: str) -> str:
    """The checksummed address with the case of one letter flipped, still mixed case: an address all
    in one case carries no checksum and is valid (a checksum with one lowercase letter, that one
    flipped, gave such an address once in CI)."""
    checksummed = Web3.to_checksum_address(address)
    letters = [i for i, c in enumerate(checksummed) if i >= 2 and c.isalpha()]
    for i in letters[len(letters) // 2:] + letters[:len(letters) // 2]:
        flipped = checksummed[:i] + checksummed[i].swapcase() + checksummed[i + 1:]
        if any(c.isupper() for c in flipped[2:]) and any(c.islower() for c in flipped[2:]):
            assert not Web3.is_checksum_address(flipped)
            return flipped
    raise AssertionError(f"{checksummed}: no letter flips to a mixed-case address")


def pin_entered(page: Page) -> None:
    """On /sign: Confirm, the PIN, Confirm (what follows is the caller's to wait for)."""
    page.get_by_role("button", name="Confirm").click()
    dialog = page.get_by_role("dialog")
    pin_field(dialog).fill(PIN)
    dialog.get_by_role("button", name="Confirm").click()


def confirm_with_pin(page: Page) -> tuple[str, Locator]:
    """On /sign: Confirm, the PIN, Confirm; waits for the submitted notice and returns the tx
    hash it shows and the notice (still open)."""
    pin_entered(page)
    alert = page.get_by_role("alertdialog")
    expect(alert.get_by_role("heading")).to_have_text("Notice", timeout=KDF_TIMEOUT_MS)
    tx_hash = page.locator("#sign-tx-hash").inner_text()
    assert re.fullmatch(r"0x[0-9a-f]{64}", tx_hash), tx_hash
    expect(alert.get_by_role("alert")).to_have_text(f"Transaction submitted. Hash: {tx_hash[:6]}…{tx_hash[-4:]}")
    return tx_hash, alert


@contextlib.contextmanager
def page_with_camera(pw, app_server, qr_text: str, tmp_path: Path) -> Iterator[Page]:
    """A phone-sized page in a Chromium of its own whose fake camera shows a QR code of
    `qr_text` (tests/e2e/y4m.py; the camera permission granted); closed on exit."""
    video = write_qr_y4m(tmp_path / "qr.y4m", qr_text)
    browser = helpers.launch_chromium(pw, [
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-video-capture={video}",
    ])
    try:
        ctx = browser.new_context(base_url=app_server.base_url, **helpers.MOBILE_CONTEXT)
        ctx.set_default_timeout(15_000)
        ctx.add_init_script(helpers.SOCKET_WATCH)
        yield ctx.new_page()
    finally:
        browser.close()
