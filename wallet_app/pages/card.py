"""/card : card issuing is unavailable. In development it also offers a merchant link, so the
payment flow (/payment) can be tried by hand."""

import reflex as rx

from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.core.config import get_settings
from wallet_app.i18n import t
from wallet_app.services import chain as chain_svc
from wallet_app.state.session import SessionState

DEV_CHAIN_ID = 31337
DEV_TOKEN_SYMBOL = "tUSD"
DEV_AMOUNT = "1.5"
# anvil's account #3: a merchant that no flow of the app signs for.
DEV_MERCHANT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"


def dev_merchant_link_base(dev_mode: bool, chains: list[chain_svc.ChainConfig]) -> str:
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


class CardState(rx.State):
    dev_link: str = ""

    @rx.event
    async def load(self):
        session = await self.get_state(SessionState)
        if session._user() is None:
            return session._expired()
        try:
            chains = chain_svc.get_chains()
        except chain_svc.ChainError:
            chains = []
        self.dev_link = dev_merchant_link_base(get_settings().dev_mode, chains)

    @rx.event
    async def issue(self):
        session = await self.get_state(SessionState)
        session._show_dialog("card_unavailable")


# Events run on every load of this page, after the session check.
ON_LOAD: list = [CardState.load]


def card_page() -> rx.Component:
    return page(
        rx.button(rx.icon("credit-card"), t("card_issue"), size="4", width="100%", on_click=CardState.issue),
        rx.text(t("card_unavailable"), color_scheme="gray"),
        rx.cond(
            CardState.dev_link != "",
            rx.link(
                rx.hstack(rx.icon("flask-conical", size=18), rx.text(t("dev_merchant_link"), size="2"),
                          align="center", spacing="2"),
                href=CardState.dev_link + "&lang=" + SessionState.lang,
                id="dev-merchant-link",
                min_height="44px",
                display="flex",
                align_items="center",
            ),
        ),
        title_key="card_title",
    )
