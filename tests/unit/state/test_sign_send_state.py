"""/sign's summary and the texts /send's alerts show (pure parts of state/sign.py and state/session.py)."""

from __future__ import annotations

import pytest

from wallet_app.errors import AppError
from wallet_app.services.txlink import decode_tx, encode_tx
from wallet_app.state.session import texts_for
from wallet_app.state.sign import summarize

TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
TRANSFER_DATA = ("0xa9059cbb" + "00" * 12 + RECIPIENT[2:].lower() + format(12_500_000, "064x"))
TX = {"chain_id": "31337", "to": TOKEN, "data": TRANSFER_DATA, "value": "0", "nonce": "3",
      "gas_limit": "51234", "gas_price": "1000000000"}
ERC20 = {"chain_id": 31337, "token_address": TOKEN, "token_symbol": "tUSD", "token_name": "Test USD",
         "token_decimals": 6}


def test_summary_of_a_known_transfer_and_of_other_calls():
    tx = decode_tx(encode_tx(TX))
    assert summarize(tx, [ERC20]) == {"kind": "transfer", "token_symbol": "tUSD", "token_name": "Test USD",
                                      "token_address": TOKEN, "recipient": RECIPIENT, "amount": "12.5"}
    # Unknown token, other chain, other selector, value attached: 'other'.
    assert summarize(tx, [])["kind"] == "other"
    assert summarize({**tx, "chain_id": "1"}, [ERC20])["kind"] == "other"
    assert summarize({**tx, "data": "0x095ea7b3" + tx["data"][10:]}, [ERC20])["kind"] == "other"
    assert summarize({**tx, "value": "1"}, [ERC20])["kind"] == "other"
    assert summarize({**tx, "data": "0x"}, [ERC20])["kind"] == "other"


@pytest.mark.parametrize("error, en, ko", [
    (AppError("max_decimals", decimals=6), "max 6 decimal places", "소수점 이하 최대 6자리"),
    (AppError("invalid_amount"), "invalid amount", "잘못된 금액"),
    (AppError("invalid_tx"), "invalid transaction", "잘못된 거래"),
    (AppError("expired"), "The payment request has expired. Please try again.",
     "결제 요청이 만료되었습니다. 다시 시도해 주세요."),
])
def test_an_error_shows_its_registry_text_with_params_and_no_code(error, en, ko):
    texts = texts_for(error.spec.key, error.params)
    assert texts == {"en": en, "ko": ko}
