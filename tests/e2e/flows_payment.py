"""Payment steps shared by the e2e tests: merchant links, waiting for the faucet, the PIN dialog,
and reading the app server's chain and DB from the outside (independent of the page)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import urlencode

import psutil
from eth_account import Account
from playwright.sync_api import Page, expect
from sqlalchemy import create_engine, text
from web3 import Web3

from tests.e2e.flows import PIN, pin_field

DEV_CHAIN_ID = 31337
BALANCE_OF_ABI = [{"name": "balanceOf", "type": "function", "stateMutability": "view",
                   "inputs": [{"name": "a", "type": "address"}], "outputs": [{"name": "", "type": "uint256"}]}]


def merchant_link(merchant: str | None, token: str | None, amount: str | None, lang: str = "en",
                  chain_id: int | None = DEV_CHAIN_ID) -> str:
    """design.md section 4; a None value leaves the parameter out."""
    params = {"merchant": merchant, "chain_id": chain_id, "token": token, "amount": amount, "lang": lang}
    return "/payment?" + urlencode({k: v for k, v in params.items() if v is not None})


def token_address(page: Page, symbol: str, chain_id: int = DEV_CHAIN_ID) -> str:
    r = page.request.get("/api/v1/tokens")
    assert r.ok, r.status
    (found,) = [t["token_address"] for t in r.json() if t["token_symbol"] == symbol and t["chain_id"] == chain_id]
    return found


def wait_for_balance(page: Page, symbol: str, at_least: int, timeout: float = 60.0) -> int:
    """Polls GET /api/v1/assets until the dev faucet's tokens arrived (it funds in the background)."""
    end = time.monotonic() + timeout
    while True:
        r = page.request.get("/api/v1/assets")
        if r.ok:
            for item in r.json():
                if item["token_symbol"] == symbol and int(item["balance"]) >= at_least:
                    return int(item["balance"])
        assert time.monotonic() < end, f"no {at_least} {symbol} after {timeout} s: {r.status} {r.text()[:300]}"
        time.sleep(0.25)


def enter_pin(page: Page, title: str, pin: str = PIN, label: str = "PIN", confirm: str = "Confirm") -> None:
    """The PIN dialog titled `title`: type the PIN, confirm, wait until it has closed
    (`label`, `confirm`: the field's and the button's names in the page's language)."""
    dialog = page.get_by_role("dialog", name=title)
    expect(dialog).to_be_visible(timeout=30_000)
    pin_field(dialog, label).fill(pin)
    button = dialog.get_by_role("button", name=confirm)
    try:
        expect(button).to_be_enabled()
    except AssertionError:  # say why: the dialog's error (a refused payload) or its missing digits
        raise AssertionError(f"{confirm} stays off in {title!r}, which shows: {dialog.inner_text()!r}") from None
    button.click()
    expect(dialog).to_have_count(0, timeout=30_000)


def approve_until_pay_pin(page: Page, server, units: int) -> tuple[str, str]:
    """A new wallet on `page` waits for its tEUR (the test token without permit), opens a link
    paying 1.5 tEUR (`units`) to a new merchant, approves with the PIN and waits for the Pay PIN
    dialog (it comes once the allowance shows). Returns (merchant, token)."""
    token = deployed_token(server, "tEUR")
    wait_for_chain_balance(chain_web3(server), token, me_address(page), units)
    merchant = Account.create().address
    page.goto(merchant_link(merchant, token, "1.5"))
    page.get_by_role("button", name="Pay", exact=True).click()
    enter_pin(page, "Approve the token")
    expect(page.get_by_role("dialog", name="Sign the payment")).to_be_visible(timeout=30_000)
    return merchant, token


def me_address(page: Page) -> str:
    r = page.request.get("/api/v1/me")
    assert r.ok, r.status
    return Web3.to_checksum_address(r.json()["address"])


def wait_for_chain_balance(w3: Web3, token: str, who: str, at_least: int, timeout: float = 60.0) -> int:
    """Polls the token's balanceOf(who) on chain until the dev faucet's mint arrived: for a payment
    token that is not in the user's list (tEUR), which /api/v1/assets does not show."""
    end = time.monotonic() + timeout
    while (units := erc20_balance(w3, token, who)) < at_least:
        assert time.monotonic() < end, f"{who} holds {units} of {token} after {timeout} s, not {at_least}"
        time.sleep(0.25)
    return units


def deployed_token(server, symbol: str, chain_id: int = DEV_CHAIN_ID) -> str:
    """A test token's address as deployed for the app server (its deployments file)."""
    deployments = Path(server_env(server)["DEPLOYMENTS_DIR"]) / f"deployments-{chain_id}.json"
    return Web3.to_checksum_address(json.loads(deployments.read_text())["tokens"][symbol])


def server_env(server) -> dict[str, str]:
    """The app server's environment (CHAINS_FILE, DATABASE_URL), read from its process."""
    return psutil.Process(server.proc.pid).environ()


def chain_web3(server, chain_id: int = DEV_CHAIN_ID) -> Web3:
    """web3 on the app's own chain RPC (its chains.json in the server's workdir)."""
    chains = json.loads(Path(server_env(server)["CHAINS_FILE"]).read_text())
    (url,) = [c["rpc_url"] for c in chains if c["chain_id"] == chain_id]
    w3 = Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 15}))
    assert w3.is_connected(), url
    return w3


def erc20_balance(w3: Web3, token: str, who: str) -> int:
    return w3.eth.contract(address=Web3.to_checksum_address(token), abi=BALANCE_OF_ABI).functions.balanceOf(
        Web3.to_checksum_address(who)).call()


def payment_rows(server, merchant: str) -> list[dict]:
    """The app DB's payment rows for a merchant (the test reads what the server stored)."""
    engine = create_engine(server_env(server)["DATABASE_URL"])  # SQLite or PostgreSQL
    try:
        with engine.connect() as con:
            rows = con.execute(text("SELECT * FROM payments WHERE merchant_address = :m"), {"m": merchant.lower()})
            return [dict(r) for r in rows.mappings()]
    finally:
        engine.dispose()


def payment_contract(server, chain_id: int = DEV_CHAIN_ID) -> str:
    """The chain's payment contract as deployed for the app server (its deployments file)."""
    deployments = Path(server_env(server)["DEPLOYMENTS_DIR"]) / f"deployments-{chain_id}.json"
    return Web3.to_checksum_address(json.loads(deployments.read_text())["payment"])
