"""The /sign?tx= link (design.md sections 4 and 7) and the Send form rules (specification section 5)."""

import base64
import json

import pytest

from wallet_app.errors import REGISTRY, AppError
from wallet_app.services.txlink import check_send_form, decode_tx, encode_tx

TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
TRANSFER_DATA = ("0xa9059cbb" + "00" * 12 + RECIPIENT[2:].lower() + format(12_500_000, "064x"))
TX = {"chain_id": "31337", "to": TOKEN, "data": TRANSFER_DATA, "value": "0", "nonce": "3",
      "gas_limit": "51234", "gas_price": "1000000000"}


def b64(obj, alphabet="url", pad=False) -> str:
    raw = json.dumps(obj).encode()
    text = (base64.urlsafe_b64encode(raw) if alphabet == "url" else base64.b64encode(raw)).decode()
    return text if pad else text.rstrip("=")


def test_encode_is_base64url_without_padding_of_the_json():
    link = encode_tx(TX)
    assert "=" not in link and "+" not in link and "/" not in link
    assert json.loads(base64.urlsafe_b64decode(link + "=" * (-len(link) % 4))) == {**TX, "data": TX["data"].lower()}
    assert decode_tx(link) == {**TX, "data": TX["data"].lower()}


# An extra field (ignored) that base64-encodes with '+' and '/' in the standard alphabet.
ODD = {"memo": "~~~???>>>", **TX}


@pytest.mark.parametrize("text", [
    b64(ODD), b64(ODD, pad=True), b64(ODD, "std"), b64(ODD, "std", pad=True),
    b64(ODD, "std").replace("+", " "),  # a '+' that a query string decoded to a space
    "  " + b64(ODD) + "\n",
])
def test_decode_accepts_base64url_and_standard_base64(text):
    assert "+" in b64(ODD, "std") and "/" in b64(ODD, "std")
    assert decode_tx(text) == {**TX, "data": TX["data"].lower()}


@pytest.mark.parametrize("tx, expected", [
    ({**TX, "data": None, "value": None}, {**TX, "data": "0x", "value": "0"}),
    ({k: v for k, v in TX.items() if k not in ("data", "value")}, {**TX, "data": "0x", "value": "0"}),
    ({**TX, "chain_id": 31337, "nonce": 0, "data": "0xABCD"}, {**TX, "nonce": "0", "data": "0xabcd"}),
])
def test_decode_normalizes(tx, expected):
    assert decode_tx(b64(tx)) == expected


@pytest.mark.parametrize("text", [
    "", "   ", "not base64 !", "%%%", "a", b64("just a string"), b64([1, 2]),
    base64.urlsafe_b64encode(b"\xff\xfe{").decode(),  # not UTF-8
    base64.urlsafe_b64encode(b"{not json").decode(),
    "A" * 70_000,
    *[b64({**TX, name: ""}) for name in ("chain_id", "to", "nonce", "gas_limit", "gas_price")],
    *[b64({k: v for k, v in TX.items() if k != name})
      for name in ("chain_id", "to", "nonce", "gas_limit", "gas_price")],
    b64({**TX, "to": "0x1234"}), b64({**TX, "to": 5}),
    b64({**TX, "nonce": "-1"}), b64({**TX, "nonce": "1.5"}), b64({**TX, "nonce": "0x10"}), b64({**TX, "nonce": True}),
    b64({**TX, "nonce": "01"}), b64({**TX, "nonce": str(2**53)}), b64({**TX, "gas_price": "1e9"}),
    b64({**TX, "value": "-5"}), b64({**TX, "chain_id": "0"}), b64({**TX, "gas_limit": "0"}),
    b64({**TX, "data": "abcd"}), b64({**TX, "data": "0xabc"}), b64({**TX, "data": "0xzz"}),
    b64({**TX, "gas_price": "1" * 79}),
])
def test_decode_refuses(text):
    with pytest.raises(AppError) as info:
        decode_tx(text)
    assert info.value.code == "invalid_tx"


def test_decode_refuses_non_text():
    for value in (None, 5, b"abc", ["x"]):
        with pytest.raises(AppError) as info:
            decode_tx(value)
        assert info.value.code == "invalid_tx"


TOKENS = {
    "erc20": {"chain_id": 31337, "token_address": TOKEN, "token_symbol": "tUSD", "token_name": "Test USD",
              "token_decimals": 6},
    "native": {"chain_id": 31337, "token_address": "0x" + "0" * 40, "token_symbol": "ETH", "token_name": "Ether",
               "token_decimals": 18},
    "empty": {"chain_id": 31337, "token_address": "", "token_symbol": "ETH", "token_name": "Ether",
              "token_decimals": 18},
    "nodec": {"chain_id": 31337, "token_address": TOKEN, "token_symbol": "X", "token_name": "X",
              "token_decimals": None},
    "strdec": {"chain_id": 31337, "token_address": TOKEN, "token_symbol": "X", "token_name": "X",
               "token_decimals": "6"},
}


@pytest.mark.parametrize("chain, token, recipient, amount, code", [
    ("", "erc20", RECIPIENT, "1", "need_chain"),
    ("abc", "erc20", RECIPIENT, "1", "need_chain"),
    ("31337", None, RECIPIENT, "1", "need_token"),
    ("31337", "erc20", "  ", "1", "need_recipient"),
    ("31337", "erc20", RECIPIENT, "", "need_amount"),
    ("31337", "erc20", RECIPIENT, "   ", "need_amount"),
    ("31337", "native", RECIPIENT, "1", "native_blocked"),
    ("31337", "empty", RECIPIENT, "1", "native_blocked"),
    ("31337", "nodec", RECIPIENT, "1", "token_info_missing"),
    ("31337", "strdec", RECIPIENT, "1", "token_info_missing"),
    ("31337", "erc20", RECIPIENT, "1.2345678", "max_decimals"),
    ("31337", "erc20", RECIPIENT, "1.2.3", "invalid_amount"),
    ("31337", "erc20", RECIPIENT, "-1", "invalid_amount"),
    ("31337", "erc20", RECIPIENT, "1,000", "invalid_amount"),
])
def test_send_form_refusals(chain, token, recipient, amount, code):
    with pytest.raises(AppError) as info:
        check_send_form(chain, TOKENS.get(token), recipient, amount)
    assert info.value.code == code


def test_send_form_input_codes_show_the_send_texts():
    for code in ("need_chain", "need_token", "need_recipient", "need_amount"):
        assert (REGISTRY[code].key, REGISTRY[code].title) == ("send_" + code, "send_input_needed")


@pytest.mark.parametrize("amount, units", [("12.5", 12_500_000), (" 0.000001 ", 1), ("7", 7_000_000)])
def test_send_form_accepts(amount, units):
    assert check_send_form("31337", TOKENS["erc20"], RECIPIENT, amount) == (31337, TOKEN, units)
