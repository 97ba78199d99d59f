"""/home : address with copy, Send and Receive, and the token list (components/token_list.py)."""

import reflex as rx

from custom_components.wallet_js.focus import dialog_focus
from custom_components.wallet_js.wallet import receive_qr
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.token_list import token_list
from wallet_app.i18n import error_messages, t
from wallet_app.routes import NavEntry, Page
from wallet_app.state.home import HomeState, TokenListState
from wallet_app.state.session import SessionState


def _copy_button(label_key: str, **props) -> rx.Component:
    # Copy failures are silent (specification section 8).
    return rx.icon_button(
        rx.icon("copy"),
        variant="ghost",
        size="3",
        aria_label=t(label_key),
        on_click=rx.set_clipboard(SessionState.address),
        **props,
    )


def receive_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(t("receive_title")),
            rx.vstack(
                rx.box(
                    receive_qr(text=SessionState.address, errors=error_messages()),
                    # 220 px, or the dialog's width when the screen is narrower (200% zoom).
                    max_width="100%",
                    style={"& img": {"max_width": "100%", "height": "auto"}},
                ),
                rx.code(SessionState.address, size="2", variant="ghost", word_break="break-all", text_align="center"),
                align="center",
                spacing="3",
            ),
            rx.flex(
                rx.button(
                    rx.icon("copy"),
                    t("copy"),
                    size="3",
                    variant="soft",
                    on_click=rx.set_clipboard(SessionState.address),
                ),
                rx.dialog.close(rx.button(t("close"), size="3")),
                gap="3",
                justify="end",
                margin_top="16px",
            ),
            max_width="400px",
            **dialog_focus(),
        ),
        open=HomeState.receive_open,
        on_open_change=HomeState.set_receive_open,
    )


def home_page() -> rx.Component:
    return page(
        rx.card(
            rx.hstack(
                rx.code(
                    SessionState.short_address, size="4", variant="ghost", title=SessionState.address, id="home-address"
                ),
                _copy_button("copy_address"),
                align="center",
                justify="between",
                width="100%",
            ),
            width="100%",
        ),
        rx.grid(
            rx.button(rx.icon("arrow-up-right"), t("send"), size="4", on_click=rx.redirect(routes.SEND)),
            rx.button(
                rx.icon("qr-code"),
                t("receive"),
                size="4",
                variant="soft",
                # mypy types an @rx.event handler as the EventNamespace class (its __new__ returns an EventCallback).
                on_click=HomeState.set_receive_open(True),  # type: ignore[operator]
            ),
            columns="2",
            spacing="3",
            width="100%",
        ),
        token_list(),
        receive_dialog(),
        title_key=PAGE.title_key,
    )


PAGE = Page(
    route=routes.HOME,
    title_key="home_title",
    view=home_page,
    nav=NavEntry("nav_home", "house", 1),
    on_load=(TokenListState.load,),
    needs_address=True,
)
