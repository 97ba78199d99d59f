"""/send: the send form (layout only; state: wallet_app/state/send.py)."""

import reflex as rx

from custom_components.wallet_js.qr_scan import qr_scan_button
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.ui import (
    amount_input,
    error_callout,
    field_label,
    form_skeleton,
    tied_to_error,
    warning_note,
)
from wallet_app.i18n import error_messages, messages, t
from wallet_app.routes import Page
from wallet_app.state.send import SendState


def _select(id_: str, label_key: str, items, value, on_change, placeholder_key: str, **props) -> rx.Component:
    return rx.vstack(
        field_label(label_key, id_),
        rx.select.root(
            rx.select.trigger(id=id_, aria_label=t(label_key), placeholder=t(placeholder_key), width="100%"),
            rx.select.content(rx.foreach(items, lambda item: rx.select.item(item[1], value=item[0]))),
            value=value,
            on_change=on_change,
            size="3",
            **props,
        ),
        spacing="1",
        width="100%",
    )


def _form() -> rx.Component:
    s = SendState
    return rx.form(
        rx.vstack(
            _select("send-network", "send_network", s.chain_items, s.chain_id, s.set_chain, "send_need_chain"),
            _select(
                "send-token",
                "send_token",
                s.token_items,
                s.token_address,
                s.set_token,
                "send_need_token",
                disabled=s.token_items.length() == 0,
            ),
            rx.cond(
                (s.chain_id != "") & (s.token_items.length() == 0),
                rx.text(t("send_no_tokens"), size="2", color_scheme="gray"),
            ),
            rx.vstack(
                field_label("send_recipient", "send-recipient"),
                rx.hstack(
                    rx.input(
                        id="send-recipient",
                        value=s.recipient,
                        on_change=s.set_recipient,
                        placeholder="0x…",
                        aria_label=t("send_recipient"),
                        size="3",
                        # An address: no autofill, capitals, corrections or suggestions from the keyboard.
                        auto_complete="off",
                        auto_capitalize="off",
                        spell_check=False,
                        custom_attrs={"autoCorrect": "off"},
                        font_family="var(--code-font-family)",
                        flex="1",
                        min_width="0",
                        **tied_to_error(s.uri_error, "send-uri-error"),
                    ),
                    qr_scan_button(messages=messages(), errors=error_messages(), on_scan=s.scanned),
                    width="100%",
                    align="center",
                    spacing="2",
                ),
                error_callout(s.uri_error, "send-uri-error", size="1"),
                warning_note(s.recipient_note, "send-recipient-note"),
                spacing="1",
                width="100%",
            ),
            rx.vstack(
                field_label("send_amount", "send-amount"),
                amount_input("send-amount", s.amount, s.set_amount, aria_label=t("send_amount")),
                spacing="1",
                width="100%",
            ),
            rx.button(
                rx.cond(s.building, rx.spinner(), rx.icon("arrow-up-right")),
                rx.cond(s.building, t("send_building"), t("send_submit")),
                type="submit",
                size="4",
                width="100%",
                disabled=s.building | ~s.loaded,
                margin_top="8px",
            ),
            spacing="4",
            width="100%",
        ),
        on_submit=s.submit,
        reset_on_submit=False,
        width="100%",
    )


def send_page() -> rx.Component:
    return page(
        rx.card(rx.cond(SendState.loaded, _form(), form_skeleton()), width="100%", size="3"),
        title_key=PAGE.title_key,
    )


PAGE = Page(route=routes.SEND, title_key="send_title", view=send_page, on_load=(SendState.load,))
