"""/home : address with copy, Send and Receive, and the token list."""

import reflex as rx

from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.i18n import t
from wallet_app.state.session import SessionState


def home_page() -> rx.Component:
    return page(
        rx.card(
            rx.hstack(
                rx.code(SessionState.short_address, size="4", variant="ghost", title=SessionState.address),
                rx.icon_button(rx.icon("copy"), variant="ghost", size="3", aria_label="Copy",
                               on_click=rx.set_clipboard(SessionState.address)),
                align="center",
                justify="between",
                width="100%",
            ),
            width="100%",
        ),
        rx.grid(
            rx.button(rx.icon("arrow-up-right"), t("send"), size="4", on_click=rx.redirect(routes.SEND)),
            rx.button(rx.icon("qr-code"), t("receive"), size="4", variant="soft"),
            columns="2",
            spacing="3",
            width="100%",
        ),
        rx.heading(t("tokens"), size="4", as_="h2"),
        rx.text(t("tokens_empty"), color_scheme="gray"),
        title_key="home_title",
    )
