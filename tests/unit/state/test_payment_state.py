"""The payment link's reading (specification section 5) and the Pay payload (pure parts of state/payment.py)."""

from __future__ import annotations

import json

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data

from wallet_app.i18n import CATALOGUES
from wallet_app.services import payments
from wallet_app.services.chain import ChainConfig
from wallet_app.state.payment import Step, amount_units, pin_payload_for_pay, read_link

RELAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
MERCHANT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
CHAIN = ChainConfig(31337, "Anvil", "http://127.0.0.1:1", "0x" + "11" * 20, RELAYER, "ETH", "Ether", 18, None, ())


def link(**fields):
    base = {"merchant": MERCHANT, "chain_id": "31337", "token": TOKEN, "amount": "1.5"}
    return {k: v for k, v in {**base, **fields}.items() if v is not None}


@pytest.mark.parametrize("params, problem", [
    (link(merchant=None), "pay_merchant_missing"),
    (link(merchant="  "), "pay_merchant_missing"),
    (link(merchant="0x12"), "err_invalid_merchant"),
    (link(merchant="0x" + "0" * 40), "err_invalid_merchant"),
    (link(chain_id=None), "pay_select_network"),
    (link(chain_id="1"), "err_unsupported_chain"),
    (link(chain_id="0x7a69"), "err_unsupported_chain"),
    (link(token=None), "pay_select_token"),
    (link(token="0x" + "g" * 40), "err_invalid_token"),
    (link(amount=" "), "pay_enter_amount"),
    (link(), ""),
])
def test_read_link_first_problem(params, problem):
    got = read_link(params, [CHAIN])
    assert got.problem == problem
    assert problem == "" or problem in CATALOGUES["ko"]


def test_read_link_fields():
    got = read_link(link(merchant=MERCHANT.lower(), chain_id=" 31337 "), [CHAIN])
    assert (got.merchant, got.chain, got.token, got.amount) == (MERCHANT, CHAIN, TOKEN, "1.5")


@pytest.mark.parametrize("amount, decimals, expected", [
    ("1.5", None, (0, "pay_decimals_missing")),
    ("1.2.3", 6, (0, "pay_invalid_amount")),
    ("-1", 6, (0, "pay_invalid_amount")),
    ("1e3", 6, (0, "pay_invalid_amount")),
    ("0.0000001", 6, (0, "pay_invalid_amount")),
    ("0", 6, (0, "pay_invalid_amount")),
    ("1.5", 6, (1_500_000, "")),
    (" 2 ", 0, (2, "")),
])
def test_amount_units(amount, decimals, expected):
    assert amount_units(amount, decimals) == expected


def test_steps_are_distinct_and_named():
    assert len({s.value for s in Step}) == len(Step)
    assert Step.IDLE.value == "idle"


def test_pay_payload_is_what_the_server_verifies():
    """The browser signs exactly {domain, types: {Pay}, message} of services.payments.pay_typed_data."""
    acct = Account.create()
    payload = json.loads(pin_payload_for_pay(31337, RELAYER, MERCHANT, TOKEN, acct.address.lower(), 1_500_000,
                                             "0x" + "ab" * 32, 1_900_000_000))
    assert payload["domain"] == {"name": "NewblPayment2", "version": "1", "chainId": 31337,
                                 "verifyingContract": RELAYER}
    assert list(payload["types"]) == ["Pay"]
    assert payload["message"]["from"] == acct.address and payload["message"]["amount"] == "1500000"
    message = {**payload["message"], "amount": 1_500_000}
    signable = encode_typed_data(domain_data=payload["domain"], message_types=payload["types"], message_data=message)
    sig = Account.sign_message(signable, acct.key).signature
    assert payments.recover_pay_signer(31337, RELAYER, message, bytes(sig)) == acct.address
