"""Pure parsing/formatting of the wallet service (table tests, no chain)."""

import pytest
from eth_account import Account

from wallet_app.models import Activity
from wallet_app.services.chain import ERC20_ABI, ZERO_ADDRESS
from wallet_app.services.wallet import (WalletError, activity_summary, decode_token_call, parse_amount,
                                        parse_chain_id, parse_recipient, parse_token_address, short_address)
from web3 import Web3

CHECKSUMMED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55 test vector


def _code(fn, *args):
    with pytest.raises(WalletError) as exc:
        fn(*args)
    return exc.value.code


@pytest.mark.parametrize("value,expected", [
    (CHECKSUMMED, CHECKSUMMED),
    (CHECKSUMMED.lower(), CHECKSUMMED),
    ("0x" + CHECKSUMMED[2:].upper(), CHECKSUMMED),
    ("  " + CHECKSUMMED + "\n", CHECKSUMMED),
])
def test_recipient_accepted(value, expected):
    assert parse_recipient(value) == expected


@pytest.mark.parametrize("value,code", [
    ("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "bad_checksum"),  # last letter's case flipped
    ("0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "bad_checksum"),
    ("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae", "invalid_recipient"),  # 39 hex
    ("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaedd", "invalid_recipient"),  # 41 hex
    ("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "invalid_recipient"),
    ("0xg" + "0" * 39, "invalid_recipient"),
    ("", "invalid_recipient"),
    (None, "invalid_recipient"),
    (123, "invalid_recipient"),
])
def test_recipient_refused(value, code):
    assert _code(parse_recipient, value) == code


@pytest.mark.parametrize("value,expected", [
    ("1", 1), ("1500000", 1_500_000), (" 42 ", 42), (7, 7), (str(2**256 - 1), 2**256 - 1),
])
def test_amount_accepted(value, expected):
    assert parse_amount(value) == expected


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "", " ", "1e6", "0x10", "1,000", str(2**256), 0, -5, True,
                                   None, 1.5, "١٢"])
def test_amount_refused(value):
    assert _code(parse_amount, value) == "invalid_amount"


@pytest.mark.parametrize("value,expected", [
    ("", ZERO_ADDRESS), (None, ZERO_ADDRESS), ("  ", ZERO_ADDRESS), (ZERO_ADDRESS, ZERO_ADDRESS),
    (CHECKSUMMED, CHECKSUMMED.lower()),
])
def test_token_address(value, expected):
    assert parse_token_address(value) == expected


@pytest.mark.parametrize("value", ["0x12", "abc", 5, CHECKSUMMED + "00"])
def test_token_address_refused(value):
    assert _code(parse_token_address, value) == "invalid_address"


@pytest.mark.parametrize("value,expected", [(31337, 31337), ("31337", 31337), (" 1 ", 1)])
def test_chain_id(value, expected):
    assert parse_chain_id(value) == expected


@pytest.mark.parametrize("value", [0, -1, "x", "", None, True, "1.0", 10**30])
def test_chain_id_refused(value):
    assert _code(parse_chain_id, value) == "invalid_chain_id"


def test_decode_token_call():
    erc20 = Web3().eth.contract(abi=ERC20_ABI + [{
        "name": "approve", "type": "function", "stateMutability": "nonpayable",
        "inputs": [{"name": "s", "type": "address"}, {"name": "a", "type": "uint256"}], "outputs": []}])
    to = Account.create().address
    assert decode_token_call(erc20.encode_abi("transfer", [to, 123])) == ("transfer", to.lower(), 123)
    assert decode_token_call(erc20.encode_abi("approve", [to, 5])) == ("approve", to.lower(), 5)
    assert decode_token_call(erc20.encode_abi("balanceOf", [to])) is None
    assert decode_token_call("0x") is None
    assert decode_token_call(erc20.encode_abi("transfer", [to, 1]) + "00") is None


@pytest.mark.parametrize("fields,summary", [
    (dict(type="transfer", amount="1500000", token_decimals=6, token_symbol="tUSD", status="ok"),
     "Sent 1.5 tUSD to 0xabcd…1234"),
    (dict(type="transfer", amount="1234567891", token_decimals=6, token_symbol="tUSD", status="submitted"),
     "Sent 1,234.567891 tUSD to 0xabcd…1234 (pending)"),
    (dict(type="approve", amount="1", token_decimals=0, token_symbol="X", status="failed"),
     "Approved 1 X for 0xabcd…1234 (failed)"),
    (dict(type="call", status="ok"), "Call with 0xabcd…1234"),
])
def test_activity_summary(fields, summary):
    row = Activity(user_id=1, counterparty="0xabcd" + "0" * 32 + "1234", **fields)
    assert activity_summary(row) == summary


def test_short_address():
    assert short_address("0xabcd" + "0" * 32 + "1234") == "0xabcd…1234"
    assert short_address(None) == ""
