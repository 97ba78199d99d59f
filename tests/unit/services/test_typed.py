"""services.typed: what a person typed or pasted, as the parsers read it (table tests), and the
Send form, the Receive request and the add-token probe reading fields through it."""

import pytest

from wallet_app.errors import AppError
from wallet_app.services import typed
from wallet_app.services.amounts import parse_units
from wallet_app.services.eth import parse_address

CHECKSUMMED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55 test vector
FULL_WIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}


@pytest.mark.parametrize(("text", "plain"), [
    ("1.5", "1.5"),
    ("１２３．５", "123.5"),  # an IME's full-width mode
    ("\u200b1.5", "1.5"),  # zero-width space
    ("1\u200c.\u200d5\u2060", "1.5"),  # non-joiner, joiner, word joiner
    ("\ufeff0.25", "0.25"),  # byte order mark
    ("1\u00ad000", "1000"),  # soft hyphen
    ("\u30001.5\u3000", " 1.5 "),  # ideographic spaces: spaces, which the parsers trim
    ("１，０００", "1,000"),  # a comma still: amounts take no grouping (refused below)
    ("\u200f1.5", "\u200f1.5"),  # bidi controls are kept, and refused
    ("0x\u202e12", "0x\u202e12"),
    ("١٢", "١٢"),  # other scripts' digits are kept, and refused
    ("²", "²"),  # superscripts too (NFKC would make it a 2)
    ("０ｘＡｂ", "0xAb"),
    ("", ""),
])
def test_plain(text, plain):
    assert typed.plain(text) == plain


@pytest.mark.parametrize(("text", "address"), [
    (CHECKSUMMED, CHECKSUMMED),
    (f" {CHECKSUMMED}\n", CHECKSUMMED),
    (f"{CHECKSUMMED}\u00a0", CHECKSUMMED),
    (f"\u200b{CHECKSUMMED}", CHECKSUMMED),
    (f"{CHECKSUMMED[:10]}\u200b{CHECKSUMMED[10:]}", CHECKSUMMED),
    (f"\ufeff{CHECKSUMMED}\u2060", CHECKSUMMED),
    (CHECKSUMMED.translate(FULL_WIDTH), CHECKSUMMED),
    ("0X" + CHECKSUMMED[2:].upper(), "0x" + CHECKSUMMED[2:].upper()),  # all capitals
    ("0X" + CHECKSUMMED[2:], "0x" + CHECKSUMMED[2:]),
    ("\u200b", ""),
    ("", ""),
])
def test_address(text, address):
    assert typed.address(text) == address
    if address:
        assert parse_address(typed.address(text)) == CHECKSUMMED


@pytest.mark.parametrize(("text", "code"), [
    (CHECKSUMMED[2:], "invalid_address"),  # 0x missing: refused, not guessed
    (CHECKSUMMED[:-1] + "D", "bad_checksum"),  # a mistyped letter's case is never "corrected"
    (f"{CHECKSUMMED[:10]}\u202e{CHECKSUMMED[10:]}", "invalid_address"),  # bidi override
    (f"\u200e{CHECKSUMMED}", "invalid_address"),  # left-to-right mark
    (CHECKSUMMED.replace("a", "\u0430", 1), "invalid_address"),  # Cyrillic а
    ("0x" + CHECKSUMMED[2:-1] + "ㄹ", "invalid_address"),  # a Hangul jamo typed with the IME on
    (f"{CHECKSUMMED} 0x", "invalid_address"),
])
def test_address_refused(text, code):
    with pytest.raises(AppError) as caught:
        parse_address(typed.address(text))
    assert caught.value.code == code


@pytest.mark.parametrize(("text", "units"), [
    ("１２３．５", 123_500_000),
    ("\u200b1.5\u200b", 1_500_000),
    ("\u3000０．０００００１\u3000", 1),
])
def test_amount(text, units):
    assert parse_units(typed.plain(text), 6) == units


@pytest.mark.parametrize(("text", "code"), [
    ("1,000.5", "invalid_amount"),  # "1,000" is 1 in much of the world: never guessed
    ("１，０００", "invalid_amount"),
    ("1。5", "invalid_amount"),  # the ideographic full stop is not a decimal point
    ("²", "invalid_amount"),
    ("\u200b", "amount_empty"),
])
def test_amount_refused(text, code):
    with pytest.raises(AppError) as caught:
        parse_units(typed.plain(text), 6)
    assert caught.value.code == code
