"""/card: the issue-card button and the 'unavailable' text (layout only; state: wallet_app/state/card.py)."""

import reflex as rx

from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.i18n import t
from wallet_app.routes import NavEntry, Page
from wallet_app.state.card import CardState
from wallet_app.state.session import SessionState


def card_page() -> rx.Component:
    return page(
        rx.button(rx.icon("credit-card"), t("card_issue"), size="4", width="100%", on_click=CardState.issue),
        rx.text(t("card_unavailable"), color_scheme="gray"),
        rx.cond(
            CardState.dev_link != "",
            rx.link(
                rx.hstack(
                    rx.icon("flask-conical", size=18),
                    rx.text(t("dev_merchant_link"), size="2"),
                    align="center",
                    spacing="2",
                ),
                href=CardState.dev_link + "&lang=" + SessionState.lang,
                id="dev-merchant-link",
                min_height="44px",
                display="flex",
                align_items="center",
            ),
        ),
        title_key=PAGE.title_key,
    )


PAGE = Page(
    route=routes.CARD,
    title_key="card_title",
    view=card_page,
    nav=NavEntry("nav_card", "credit-card", 2),
    on_load=(CardState.load,),
)
