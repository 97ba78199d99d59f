"""services.tokens' pure parts: the copycat check of the add-token dialog (no chain, no database)."""

import pytest

from wallet_app.services import tokens

USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
OTHER = "0x" + "77" * 20
LISTED = [
    {"chain_id": 1, "token_address": USDC, "token_symbol": "USDC", "token_name": "USD Coin"},
    {"chain_id": 1, "token_address": "0x" + "00" * 20, "token_symbol": "ETH", "token_name": "Ether"},
    {"chain_id": 10, "token_address": "0x" + "0a" * 20, "token_symbol": "OP", "token_name": "Optimism"},
]


@pytest.mark.parametrize("symbol, chain_id, address, copied", [
    ("USDC", 1, OTHER, USDC),  # the same symbol at another address: anyone can deploy one
    ("usdc", 1, OTHER, USDC),  # case
    (" USDC", 1, OTHER, USDC),
    ("ＵＳＤＣ", 1, OTHER, USDC),  # full-width letters (NFKC)
    ("USDС", 1, OTHER, USDC),  # a Cyrillic С
    ("UЅDC", 1, OTHER, USDC),  # a Cyrillic Ѕ
    ("ΕΤΗ", 1, OTHER, "0x" + "00" * 20),  # Greek capitals: the native coin's symbol
    ("USDC", 1, USDC.lower(), None),  # the listed token itself
    ("USDC", 5, OTHER, None),  # another network: bridged tokens have other addresses
    ("OP", 1, OTHER, None),
    ("USDT", 1, OTHER, None),
    ("USD", 1, OTHER, None),
])
def test_copycat_of(symbol, chain_id, address, copied):
    found = tokens.copycat_of(symbol, chain_id, address, LISTED)
    assert (found and found["token_address"]) == copied
