"""/card: card issuing is unavailable. In development it also offers a merchant link, so the
payment flow (/payment) can be tried by hand."""

from __future__ import annotations

import asyncio

import reflex as rx

from wallet_app import routes
from wallet_app.core.config import get_settings
from wallet_app.errors import AppError
from wallet_app.services._pages_tmp_shims import chains as chain_config
from wallet_app.services.chain import ChainConfig
from wallet_app.state.base import SignedInState

DEV_CHAIN_ID = 31337
DEV_TOKEN_SYMBOL = "tUSD"
DEV_AMOUNT = "1.5"
# anvil's account #3: a merchant that no flow of the app signs for.
DEV_MERCHANT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


def dev_merchant_link_base(dev_mode: bool, chains: list[ChainConfig]) -> str:
    """/payment?merchant=…&chain_id=31337&token=<tUSD>&amount=1.5 (the page adds &lang=), or ""
    outside development or when the dev chain or its tUSD is not configured."""
    if not dev_mode:
        return ""
    for chain in chains:
        if chain.chain_id != DEV_CHAIN_ID or not chain.payment_contract:
            continue
        for token in chain.tokens:
            if token.token_symbol == DEV_TOKEN_SYMBOL:
                return (f"{routes.PAYMENT}?merchant={DEV_MERCHANT}&chain_id={DEV_CHAIN_ID}"
                        f"&token={token.token_address}&amount={DEV_AMOUNT}")
    return ""


class CardState(SignedInState):
    dev_link: str = ""

    @rx.event
    async def load(self):
        if await self._require_user() is None:
            return self._to_login()
        try:
            chains = await asyncio.to_thread(chain_config.get_chains)
        except AppError:
            chains = []
        self.dev_link = dev_merchant_link_base(get_settings().dev_mode, chains)
        return None

    @rx.event
    def issue(self):
        self._notify("card_unavailable")
