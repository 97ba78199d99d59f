"""keyring.js in Chromium: the PIN dialog's lines for a transaction (txSummaryLines), decoded
from the very request it signs. Exactly an ERC-20 transfer(address,uint256) call (tokenTransfer)
adds the token's recipient (EIP-55) and amount: in the decimals and symbol of the token the
page named when that is the called contract on the request's chain, else in smallest units.
Anything else (other selectors, other lengths, a recipient word with high bytes set) keeps the
two lines it had: the recipient and the native value."""

from __future__ import annotations

import pytest

from wallet_app.i18n import CATALOGUES

from jshelpers import ok

CHAIN_ID = 31337
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
CHAINS = {str(CHAIN_ID): {"payment_contract": None, "native_symbol": "ETH", "native_decimals": 18}}
SHOWN = {"chainId": CHAIN_ID, "address": TOKEN.lower(), "symbol": "tUSD", "decimals": 6}
UNITS = 12_500_000
RECIPIENT_WORD = "00" * 12 + RECIPIENT[2:].lower()


def word(n: int) -> str:
    return f"{n:064x}"


def transfer_data(units: int = UNITS, recipient_word: str = RECIPIENT_WORD, selector: str = "a9059cbb") -> str:
    return f"0x{selector}{recipient_word}{word(units)}"


def tx(data: str, value: str = "0", to: str = TOKEN) -> dict:
    return {"chain_id": str(CHAIN_ID), "to": to, "data": data, "value": value, "nonce": "0", "gas_limit": "60000",
            "gas_price": "1"}


DECODE = """const t = nb.keyring.tokenTransfer(nb.keyring.legacyTxRequest(a.tx));
            return t && [t.recipient, t.units.toString()];"""
LINES = "return nb.keyring.txSummaryLines(nb.keyring.legacyTxRequest(a.tx), a.chains, a.shown, a.messages);"

GOOD = transfer_data()


@pytest.mark.parametrize("data, decoded", [
    (GOOD, [RECIPIENT, str(UNITS)]),
    (GOOD.upper().replace("0X", "0x"), [RECIPIENT, str(UNITS)]),  # hex case is no difference
    (transfer_data(0), [RECIPIENT, "0"]),
    (transfer_data(2**256 - 1), [RECIPIENT, str(2**256 - 1)]),
    (transfer_data(recipient_word="00" * 32), ["0x" + "0" * 40, str(UNITS)]),
    # Wrong length: a byte short, a byte more, a word more, the amount missing, the selector alone.
    (GOOD[:-2], None),
    (GOOD + "00", None),
    (GOOD + word(1), None),
    (GOOD[:2 + 8 + 64], None),
    ("0xa9059cbb", None),
    ("0x", None),
    # The address word's top 12 bytes not zero: the first of them, the last of them, all.
    (transfer_data(recipient_word="01" + "00" * 11 + RECIPIENT[2:].lower()), None),
    (transfer_data(recipient_word="00" * 11 + "01" + RECIPIENT[2:].lower()), None),
    (transfer_data(recipient_word="ff" * 12 + RECIPIENT[2:].lower()), None),
    # Other selectors with the same arguments: approve, transfer's selector one bit off; transferFrom.
    (transfer_data(selector="095ea7b3"), None),
    (transfer_data(selector="a9059cba"), None),
    ("0x23b872dd" + RECIPIENT_WORD + RECIPIENT_WORD + word(UNITS), None),
])
def test_token_transfer_decoder(page, data, decoded):
    assert ok(page, DECODE, {"tx": tx(data)}) == decoded


EN_BASE = [f"To: {TOKEN}", "Sends 0 ETH"]
EN_RAW = f"Token amount: {UNITS} (in the token's smallest units; its decimals are unknown)"


@pytest.mark.parametrize("shown, amount_line", [
    (SHOWN, "Token amount: 12.5 tUSD"),
    ({**SHOWN, "address": TOKEN}, "Token amount: 12.5 tUSD"),  # the address in any case
    ({**SHOWN, "decimals": 0}, f"Token amount: {UNITS} tUSD"),
    ({**SHOWN, "decimals": 18}, "Token amount: 0.0000000000125 tUSD"),
    # Not this very token, or not what its amount can be shown in: the smallest units, said so.
    ({**SHOWN, "address": RECIPIENT}, EN_RAW),
    ({**SHOWN, "address": ""}, EN_RAW),
    ({**SHOWN, "chainId": 1}, EN_RAW),
    ({**SHOWN, "chainId": None}, EN_RAW),
    ({**SHOWN, "symbol": ""}, EN_RAW),
    ({**SHOWN, "symbol": None}, EN_RAW),
    ({**SHOWN, "decimals": None}, EN_RAW),
    ({**SHOWN, "decimals": -1}, EN_RAW),
    ({**SHOWN, "decimals": 78}, EN_RAW),
    ({**SHOWN, "decimals": 1.5}, EN_RAW),
    ({}, EN_RAW),
    (None, EN_RAW),
])
def test_transfer_lines_name_the_token_recipient_and_amount(page, shown, amount_line):
    lines = ok(page, LINES, {"tx": tx(GOOD), "chains": CHAINS, "shown": shown, "messages": CATALOGUES["en"]})
    assert lines == [*EN_BASE, f"Token recipient: {RECIPIENT}", amount_line]


@pytest.mark.parametrize("shown, amount_line", [
    (SHOWN, "토큰 수량: 12.5 tUSD"),
    (None, f"토큰 수량: {UNITS} (토큰 최소 단위 기준, 소수점 자릿수 정보 없음)"),
])
def test_transfer_lines_in_korean(page, shown, amount_line):
    lines = ok(page, LINES, {"tx": tx(GOOD), "chains": CHAINS, "shown": shown, "messages": CATALOGUES["ko"]})
    assert lines == [f"받는 곳: {TOKEN}", "0 ETH 보내기", f"토큰 받는 곳: {RECIPIENT}", amount_line]


def test_a_transfer_with_value_keeps_its_native_line(page):
    lines = ok(page, LINES, {"tx": tx(GOOD, value="1500000000000000"), "chains": CHAINS, "shown": SHOWN,
                             "messages": CATALOGUES["en"]})
    assert lines == [f"To: {TOKEN}", "Sends 0.0015 ETH", f"Token recipient: {RECIPIENT}", "Token amount: 12.5 tUSD"]


@pytest.mark.parametrize("data", [
    GOOD[:-2], GOOD + "00", transfer_data(recipient_word="00" * 11 + "01" + RECIPIENT[2:].lower()),
    transfer_data(selector="095ea7b3"), "0x", "0xdeadbeef",
])
def test_other_data_shows_only_the_recipient_and_native_value(page, data):
    lines = ok(page, LINES, {"tx": tx(data), "chains": CHAINS, "shown": SHOWN, "messages": CATALOGUES["en"]})
    assert lines == EN_BASE


def test_a_native_send_shows_what_it_did(page):
    lines = ok(page, LINES, {"tx": tx("0x", value="1234000000000000", to=RECIPIENT.lower()), "chains": CHAINS,
                             "shown": None, "messages": CATALOGUES["en"]})
    assert lines == [f"To: {RECIPIENT}", "Sends 0.001234 ETH"]
