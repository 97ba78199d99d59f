"""/card : card issuing is unavailable. It also offers a ready-made merchant link when one is
configured (core.extensions; development sets one, so the payment flow can be tried by hand)."""

import reflex as rx

from wallet_app.components.layout import page
from wallet_app.core import extensions
from wallet_app.i18n import t
from wallet_app.state.session import SessionState

class CardState(rx.State):
    dev_link: str = ""

    @rx.event
    async def load(self):
        session = await self.get_state(SessionState)
        if session._user() is None:
            return session._expired()
        self.dev_link = extensions.merchant_link()

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
