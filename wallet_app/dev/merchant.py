"""The dev merchant link offered on /card, so the payment flow (/payment) can be tried by hand."""

from __future__ import annotations

from wallet_app.errors import AppError
from wallet_app.services.chain import ChainConfig, get_chains
from wallet_app.services.merchant_links import payment_link

DEV_CHAIN_ID = 31337
DEV_TOKEN_SYMBOL = "tUSD"
DEV_AMOUNT = "1.5"
# anvil's account #3: a merchant that no flow of the app signs for.
DEV_MERCHANT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


def merchant_link_base(chains: list[ChainConfig]) -> str:
    """/payment?merchant=…&chain_id=31337&token=<tUSD>&amount=1.5 (the page adds &lang=), or ""
    when the dev chain or its tUSD is not configured."""
    for chain in chains:
        if chain.chain_id != DEV_CHAIN_ID or not chain.payment_contract:
            continue
        for token in chain.tokens:
            if token.token_symbol == DEV_TOKEN_SYMBOL:
                return payment_link("", DEV_MERCHANT, DEV_CHAIN_ID, token.token_address, DEV_AMOUNT)
    return ""


def merchant_link() -> str:
    try:
        return merchant_link_base(get_chains())
    except AppError:  # a broken chains file shows no link
        return ""
