"""services.tokens' pure parts: the copycat check of the add-token dialog (no chain, no database)."""

import pytest

from wallet_app.services import tokens

USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
OTHER = "0x" + "77" * 20
LISTED = [
    {"chain_id": 1, "token_address": USDC, "token_symbol": "USDC", "token_name": "USD Coin"},
    {"chain_id": 1, "token_address": "0x" + "00" * 20, "token_symbol": "ETH", "token_name": "Ether"},
    {"chain_id": 10, "token_address": "0x" + "0a" * 20, "token_symbol": "OP", "token_name": "Optimism"},
    {"chain_id": 1, "token_address": "0x" + "75" * 20, "token_symbol": "tUSD", "token_name": "Test USD"},
]
TUSD = "0x" + "75" * 20


@pytest.mark.parametrize("symbol, chain_id, address, copied", [
    ("USDC", 1, OTHER, USDC),  # the same symbol at another address: anyone can deploy one
    ("usdc", 1, OTHER, USDC),  # case
    (" USDC", 1, OTHER, USDC),
    ("ＵＳＤＣ", 1, OTHER, USDC),  # full-width letters (NFKC)
    ("USDС", 1, OTHER, USDC),  # a Cyrillic С
    ("UЅDC", 1, OTHER, USDC),  # a Cyrillic Ѕ
    ("ΕΤΗ", 1, OTHER, "0x" + "00" * 20),  # Greek capitals: the native coin's symbol
    ("ÚSDĆ", 1, OTHER, USDC),  # letters with marks
    ("USDC\u0301", 1, OTHER, USDC),
    # Letters of scripts the look-alike table does not have (an audit): any narrow letter outside
    # ASCII may be drawn like a Latin one
    ("tUᏚᎠ", 1, OTHER, TUSD),  # Cherokee Ꮪ, Ꭰ
    ("ꓴꓢꓓꓚ", 1, OTHER, USDC),  # Lisu: could read as USDC or tUSD, the first of the likest
    ("ꓴꓢDC", 1, OTHER, USDC),  # Lisu U, S
    ("tꓴSD", 1, OTHER, TUSD),
    ("Oꓑ", 10, OTHER, "0x" + "0a" * 20),  # Lisu P
    ("원화", 10, OTHER, None),  # wide letters (Hangul, CJK) are not drawn like Latin ones
    ("USDT", 1, OTHER, None),
    ("tUSDᏚ", 1, OTHER, None),  # a letter more: unfamiliar_symbol's warning, not this one
    ("USDC", 1, USDC.lower(), None),  # the listed token itself
    ("USDC", 5, OTHER, None),  # another network: bridged tokens have other addresses
    ("OP", 1, OTHER, None),
    ("USDT", 1, OTHER, None),
    ("USD", 1, OTHER, None),
])
def test_copycat_of(symbol, chain_id, address, copied):
    found = tokens.copycat_of(symbol, chain_id, address, LISTED)
    assert (found and found["token_address"]) == copied


def test_a_listed_symbol_outside_ascii_is_copied_in_ascii_too():
    """The real USDT0's symbol is "USD₮0": a token calling itself "USDT0" reads the same (a review)."""
    usdt0 = {"chain_id": 1, "token_address": "0x" + "30" * 20, "token_symbol": "USD₮0"}
    assert tokens.copycat_of("USDT0", 1, OTHER, [*LISTED, usdt0]) is usdt0
    assert tokens.copycat_of("USD₮0", 1, OTHER, [*LISTED, usdt0]) is usdt0
    assert tokens.copycat_of("USDT", 1, OTHER, [*LISTED, usdt0]) is None


def test_copycat_of_names_the_likest_listed_token():
    """A symbol that could read as several listed ones: the one it is most the same as (an ASCII
    letter stands only for itself)."""
    lisu = {"chain_id": 1, "token_address": "0x" + "44" * 20, "token_symbol": "ꓴSDC"}
    assert tokens.copycat_of("ꓴSDC", 1, OTHER, [*LISTED, lisu]) is lisu
    assert tokens.copycat_of("USDC", 1, OTHER, [lisu, *LISTED])["token_address"] == USDC


@pytest.mark.parametrize("symbol, unfamiliar", [
    ("USDC", False),
    ("tUSD", False),
    ("USD-C.e", False),
    ("ＵＳＤＣ", True),
    ("tUᏚᎠ", True),
    ("ꓴꓢꓓꓚ", True),
    ("USD₮0", True),
    ("원화", False),  # Hangul and CJK are not drawn like Latin letters
    ("토큰T", False),
    ("USD토", False),
])
def test_unfamiliar_symbol(symbol, unfamiliar):
    """Any symbol outside ASCII gets the add-token dialog's warning: no table knows every script's
    letters drawn like Latin ones."""
    assert tokens.unfamiliar_symbol(symbol) is unfamiliar
