"""keyring.js in Chromium: the PIN dialog's lines for a transaction (txSummaryLines), decoded
from the very request it signs. Exactly an ERC-20 transfer(address,uint256) call (tokenTransfer)
adds the token's recipient (EIP-55) and amount: in the decimals and symbol of the token the
page named when that is the called contract on the request's chain, else in smallest units.
Exactly an approval call (tokenApproval: approve, increaseAllowance / increaseApproval,
setApprovalForAll, Permit2's approve on Permit2) adds its spender or operator and amount, and
Permit2's token and expiration. Anything else (other selectors, other lengths, a recipient word
with high bytes set) keeps the two lines it had: the recipient and the native value."""

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
    transfer_data(selector="a9059cba"), "0x", "0xdeadbeef",
])
def test_other_data_shows_only_the_recipient_and_native_value(page, data):
    lines = ok(page, LINES, {"tx": tx(data), "chains": CHAINS, "shown": SHOWN, "messages": CATALOGUES["en"]})
    assert lines == EN_BASE


def test_a_native_send_shows_what_it_did(page):
    lines = ok(page, LINES, {"tx": tx("0x", value="1234000000000000", to=RECIPIENT.lower()), "chains": CHAINS,
                             "shown": None, "messages": CATALOGUES["en"]})
    assert lines == [f"To: {RECIPIENT}", "Sends 0.001234 ETH"]


# ---------------------------------------------------------------- approvals (an audit)
# An approve(attacker, 2^256 - 1) showed "To: <token>", "Sends 0 ETH" and nothing else: the page's
# approval lines (from the server) were checked by nothing in the browser, and the dialog read as a
# harmless call. Now exactly an approval call adds who may take, how much (unlimited from 2^128),
# and for Permit2's approve (on Permit2 only) the token and the expiration.

PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
SPENDER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
SPENDER_WORD = "00" * 12 + SPENDER[2:].lower()
TOKEN_WORD = "00" * 12 + TOKEN[2:].lower()
APPROVAL = """const t = nb.keyring.tokenApproval(nb.keyring.legacyTxRequest(a.tx));
              const text = (v) => (typeof v === 'bigint' ? v.toString() : v);
              return t && Object.fromEntries(Object.entries(t).map(([k, v]) => [k, text(v)]));"""


def approve_data(units: int, selector: str = "095ea7b3", spender_word: str = SPENDER_WORD) -> str:
    return f"0x{selector}{spender_word}{word(units)}"


def for_all_data(flag: str) -> str:
    return f"0xa22cb465{SPENDER_WORD}{flag}"


def permit2_data(units: int, expiration: int, token_word: str = TOKEN_WORD) -> str:
    return f"0x87517c45{token_word}{SPENDER_WORD}{word(units)}{word(expiration)}"


@pytest.mark.parametrize("data, to, decoded", [
    (approve_data(5), TOKEN, {"kind": "approve", "spender": SPENDER, "units": "5"}),
    (approve_data(2**256 - 1).upper().replace("0X", "0x"), TOKEN,
     {"kind": "approve", "spender": SPENDER, "units": str(2**256 - 1)}),
    (approve_data(7, "39509351"), TOKEN, {"kind": "increase", "spender": SPENDER, "units": "7"}),
    (approve_data(7, "d73dd623"), TOKEN, {"kind": "increase", "spender": SPENDER, "units": "7"}),
    (for_all_data(word(1)), TOKEN, {"kind": "all", "operator": SPENDER, "approved": True}),
    (for_all_data(word(0)), TOKEN, {"kind": "all", "operator": SPENDER, "approved": False}),
    (permit2_data(2**160 - 1, 2**48 - 1), PERMIT2.lower(),
     {"kind": "permit2", "token": TOKEN, "spender": SPENDER, "units": str(2**160 - 1), "expiration": str(2**48 - 1)}),
    # Not exactly the call: a byte more or less, a dirty address word, a bool of 2, a uint160 or a
    # uint48 out of range (Solidity refuses all of them), Permit2's selector on another contract.
    (approve_data(5) + "00", TOKEN, None),
    (approve_data(5)[:-2], TOKEN, None),
    (approve_data(5, spender_word="01" + SPENDER_WORD[2:]), TOKEN, None),
    (for_all_data(word(2)), TOKEN, None),
    (permit2_data(2**160, 0), PERMIT2, None),
    (permit2_data(1, 2**48), PERMIT2, None),
    (permit2_data(1, 0, token_word="ff" + TOKEN_WORD[2:]), PERMIT2, None),
    (permit2_data(1, 0) + "00", PERMIT2, None),
    (permit2_data(1, 0), TOKEN, None),
    (permit2_data(1, 0), "0x010000000022d473030f116ddee9f6b43ac78ba3", None),
    (GOOD, TOKEN, None),  # a transfer
    ("0x", TOKEN, None),
])
def test_approval_decoder(page, data, to, decoded):
    assert ok(page, APPROVAL, {"tx": tx(data, to=to)}) == decoded


@pytest.mark.parametrize("data, to, shown, lang, extra", [
    (approve_data(UNITS), TOKEN, SHOWN, "en", [f"Approves spender: {SPENDER}", "Approved amount: 12.5 tUSD"]),
    (approve_data(UNITS), TOKEN, None, "en", [
        f"Approves spender: {SPENDER}",
        f"Approved amount: {UNITS} (in the token's smallest units; its decimals are unknown)"]),
    (approve_data(2**256 - 1), TOKEN, SHOWN, "en",
     [f"Approves spender: {SPENDER}", "Approved amount: unlimited (it can take all of this token)"]),
    (approve_data(2**128), TOKEN, None, "en",
     [f"Approves spender: {SPENDER}", "Approved amount: unlimited (it can take all of this token)"]),
    (approve_data(2**128 - 1), TOKEN, None, "en", [
        f"Approves spender: {SPENDER}",
        f"Approved amount: {2**128 - 1} (in the token's smallest units; its decimals are unknown)"]),
    (approve_data(UNITS, "39509351"), TOKEN, SHOWN, "en",
     [f"Approves spender, on top of its current allowance: {SPENDER}", "Approved amount: 12.5 tUSD"]),
    (for_all_data(word(1)), TOKEN, None, "en", [f"Approves operator of all your tokens at this contract: {SPENDER}"]),
    (for_all_data(word(0)), TOKEN, None, "en", [f"Revokes operator of all your tokens at this contract: {SPENDER}"]),
    (permit2_data(2**160 - 1, 2**48 - 1), PERMIT2, SHOWN, "en", [
        f"Approves spender: {SPENDER}", f"Token approved through Permit2: {TOKEN}",
        "Approved amount: unlimited (it can take all of this token)", "Approved until: it is revoked (no expiry)"]),
    (permit2_data(UNITS, 1_767_225_600), PERMIT2, SHOWN, "en", [
        f"Approves spender: {SPENDER}", f"Token approved through Permit2: {TOKEN}",
        f"Approved amount: {UNITS} (in the token's smallest units; its decimals are unknown)",
        "Approved until: 2026-01-01 00:00 UTC"]),
    (permit2_data(1, 253402300799), PERMIT2, None, "en", [
        f"Approves spender: {SPENDER}", f"Token approved through Permit2: {TOKEN}",
        "Approved amount: 1 (in the token's smallest units; its decimals are unknown)",
        "Approved until: 9999-12-31 23:59 UTC"]),
    (permit2_data(1, 0), PERMIT2, None, "en", [
        f"Approves spender: {SPENDER}", f"Token approved through Permit2: {TOKEN}",
        "Approved amount: 1 (in the token's smallest units; its decimals are unknown)",
        "Approved until: the end of the block it is mined in"]),
    (approve_data(UNITS), TOKEN, SHOWN, "ko", [f"사용 승인 대상: {SPENDER}", "승인 수량: 12.5 tUSD"]),
    (approve_data(UNITS), TOKEN, None, "ko",
     [f"사용 승인 대상: {SPENDER}", f"승인 수량: {UNITS} (토큰 최소 단위 기준, 소수점 자릿수 정보 없음)"]),
    (approve_data(UNITS, "d73dd623"), TOKEN, SHOWN, "ko",
     [f"사용 승인 대상(기존 승인액에 추가): {SPENDER}", "승인 수량: 12.5 tUSD"]),
    (for_all_data(word(1)), TOKEN, None, "ko", [f"이 컨트랙트에 있는 내 토큰 전부의 승인 대상: {SPENDER}"]),
    (for_all_data(word(0)), TOKEN, None, "ko", [f"이 컨트랙트에 있는 내 토큰 전부의 승인 취소 대상: {SPENDER}"]),
    (permit2_data(2**160 - 1, 2**48 - 1), PERMIT2, None, "ko", [
        f"사용 승인 대상: {SPENDER}", f"Permit2를 통해 승인하는 토큰: {TOKEN}",
        "승인 수량: 무제한 (이 토큰을 모두 가져갈 수 있음)", "승인 기한: 만료 없이 취소할 때"]),
    (permit2_data(1, 0), PERMIT2, None, "ko", [
        f"사용 승인 대상: {SPENDER}", f"Permit2를 통해 승인하는 토큰: {TOKEN}",
        "승인 수량: 1 (토큰 최소 단위 기준, 소수점 자릿수 정보 없음)", "승인 기한: 처리되는 블록이 끝날 때"]),
])
def test_approval_lines(page, data, to, shown, lang, extra):
    lines = ok(page, LINES, {"tx": tx(data, to=to.lower()), "chains": CHAINS, "shown": shown,
                             "messages": CATALOGUES[lang]})
    base = [f"To: {to}", "Sends 0 ETH"] if lang == "en" else [f"받는 곳: {to}", "0 ETH 보내기"]
    assert lines == [*base, *extra]


def test_permit2s_approve_on_another_contract_shows_only_that_contract(page):
    """The selector is that contract's own function there: nothing said of Permit2, a token or a spender."""
    lines = ok(page, LINES, {"tx": tx(permit2_data(1, 0)), "chains": CHAINS, "shown": SHOWN,
                             "messages": CATALOGUES["en"]})
    assert lines == EN_BASE
