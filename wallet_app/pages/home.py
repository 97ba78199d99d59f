"""/home : address with copy, Send and Receive, and the token list (components/token_list.py)."""

import reflex as rx

from custom_components.wallet_js.focus import dialog_focus
from custom_components.wallet_js.wallet import receive_qr
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.token_list import token_list
from wallet_app.components.ui import amount_input, error_callout, field_label, tied_to_error
from wallet_app.i18n import error_messages, t
from wallet_app.routes import NavEntry, Page
from wallet_app.state.home import ADDRESS_ONLY, HomeState, TokenListState
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


def _receive_request() -> rx.Component:
    """The token and amount that turn the address QR into an EIP-681 payment request."""
    h = HomeState
    return rx.vstack(
        # A group's name, not a heading: the dialog's title is its only heading (axe heading-order).
        rx.text(t("receive_request_title"), weight="bold", size="3", id="receive-request-title"),
        rx.text(t("receive_request_hint"), size="2", color_scheme="gray", id="receive-request-hint"),
        field_label("receive_token", "receive-token"),
        rx.select.root(
            rx.select.trigger(id="receive-token", aria_label=t("receive_token"), width="100%"),
            rx.select.content(
                rx.select.item(t("receive_address_only"), value=ADDRESS_ONLY),
                rx.foreach(h.receive_tokens, lambda item: rx.select.item(item[1], value=item[0])),
            ),
            value=h.receive_token,
            on_change=h.set_receive_token,
            size="3",
        ),
        rx.cond(
            h.receive_token != ADDRESS_ONLY,
            rx.vstack(
                field_label("receive_amount", "receive-amount"),
                amount_input(
                    "receive-amount",
                    h.receive_amount,
                    h.set_receive_amount,
                    **tied_to_error(h.receive_error, "receive-error"),
                ),
                spacing="1",
                width="100%",
            ),
        ),
        error_callout(h.receive_error, "receive-error", size="1"),
        spacing="2",
        width="100%",
        role="group",
        aria_labelledby="receive-request-title",
        aria_describedby="receive-request-hint",
    )


def receive_dialog() -> rx.Component:
    h = HomeState
    # The plain address, or the payment request once a token is chosen (QR, text and Copy alike).
    shown = rx.cond(h.receive_uri != "", h.receive_uri, SessionState.address)
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(t("receive_title")),
            rx.vstack(
                rx.box(
                    receive_qr(text=shown, errors=error_messages()),
                    # 220 px, or the dialog's width when the screen is narrower (200% zoom).
                    max_width="100%",
                    style={"& img": {"max_width": "100%", "height": "auto"}},
                ),
                rx.cond(
                    h.receive_summary.length() > 0,
                    # mypy resolves Field[dict]'s class access to the ArrayVar overload, not ObjectVar.
                    rx.text(h.receive_summary[SessionState.lang], size="2", weight="medium", id="receive-summary"),  # type: ignore[call-overload]
                ),
                rx.code(
                    shown, size="2", variant="ghost", word_break="break-all", text_align="center", id="receive-text"
                ),
                align="center",
                spacing="3",
            ),
            rx.flex(
                rx.button(
                    rx.icon("copy"),
                    t("copy"),
                    size="3",
                    variant="soft",
                    on_click=rx.set_clipboard(shown),
                    # The dialog's first stop stays Copy, ahead of the request's fields.
                    custom_attrs={"data-autofocus": ""},
                ),
                rx.dialog.close(rx.button(t("close"), size="3")),
                gap="3",
                justify="end",
                margin_top="16px",
            ),
            rx.separator(size="4", margin_y="16px"),
            _receive_request(),
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
