"""/payment: the merchant payment page (layout only; state and flow: wallet_app/state/payment.py)."""

from __future__ import annotations

import reflex as rx

from custom_components.wallet_js.wallet import pin_dialog
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.ui import VISUALLY_HIDDEN, label_row, warning_note
from wallet_app.i18n import error_messages, messages, t, t_var
from wallet_app.routes import Page
from wallet_app.services.chain_table import chains_var
from wallet_app.state.payment import PaymentState
from wallet_app.state.session import SessionState


def _row(label_key: str, value: rx.Component) -> rx.Component:
    return label_row(label_key, value, align="center", min_height="44px")


def _dash(value: rx.Var) -> rx.Var:
    return rx.cond(value != "", value, "—")


def _progress_region() -> rx.Component:
    """The overlay's step for screen readers: a polite live region there from the page's start,
    its text put in as the steps come (a region added along with its text, as the overlay is,
    is not always announced, and the first step, or the only one, went unheard)."""
    s = PaymentState
    return rx.box(
        rx.cond(s.running & ~s.pin_open, t_var(s.phase), ""), role="status", id="pay-status", style=VISUALLY_HIDDEN
    )


def _overlay() -> rx.Component:
    """The full-screen processing overlay; it steps aside while the PIN dialog is open. Not a
    live region itself: _progress_region() announces its steps."""
    s = PaymentState
    return rx.cond(
        s.running & ~s.pin_open,
        rx.center(
            rx.card(
                rx.vstack(
                    rx.spinner(size="3"),
                    rx.text(t_var(s.phase), size="3", weight="medium", id="pay-phase"),
                    rx.cond(
                        s.approve_hash != "",
                        rx.text(
                            t("pay_approve_sent"),
                            rx.code(s.approve_hash_short, title=s.approve_hash, white_space="nowrap"),
                            size="2",
                            id="pay-approve-hash",
                        ),
                    ),
                    align="center",
                    spacing="3",
                    padding="24px",
                    text_align="center",
                ),
                max_width="340px",
                margin="16px",
            ),
            position="fixed",
            inset="0",
            z_index="1000",
            background_color="var(--color-overlay)",
            backdrop_filter="blur(2px)",
            id="pay-overlay",
        ),
    )


def payment_page() -> rx.Component:
    s = PaymentState
    details = rx.card(
        rx.vstack(
            rx.vstack(
                rx.text(t("pay_amount"), size="2", color_scheme="gray"),
                # Wrapped, never cut: centred and one line, a long amount overflowed both edges of a
                # 390 px screen, and "12,345,678.123456" read "2,345,678.123456".
                rx.hstack(
                    rx.text(
                        _dash(s.amount_display),
                        size="8",
                        weight="bold",
                        id="pay-amount",
                        text_align="center",
                        style={"font_variant_numeric": "tabular-nums", "overflow_wrap": "anywhere", "min_width": "0"},
                    ),
                    rx.text(s.token_symbol, size="5", color_scheme="gray", id="pay-amount-symbol"),
                    align="baseline",
                    justify="center",
                    spacing="2",
                    wrap="wrap",
                    max_width="100%",
                ),
                align="center",
                spacing="1",
                width="100%",
                padding_y="12px",
            ),
            rx.separator(size="4"),
            # The merchant in full (EIP-55), wrapped to fit: a 4+4 shortening is what a vanity address imitates.
            rx.vstack(
                rx.text(t("pay_merchant"), size="2", color_scheme="gray"),
                rx.hstack(
                    rx.code(
                        _dash(s.merchant),
                        size="3",
                        variant="ghost",
                        id="pay-merchant",
                        style={"overflow_wrap": "anywhere", "flex": "1", "min_width": "0"},
                    ),
                    rx.cond(
                        s.merchant != "",
                        rx.icon_button(
                            rx.icon("copy", size=18),
                            variant="ghost",
                            size="3",
                            aria_label=t("pay_copy_merchant"),
                            on_click=rx.set_clipboard(s.merchant),
                        ),
                    ),
                    align="center",
                    spacing="2",
                    width="100%",
                ),
                # A look-alike of an address paid before, or a token's contract (state.payment.merchant_note_key).
                warning_note(s.merchant_note, "pay-merchant-note"),
                spacing="1",
                width="100%",
                padding_y="4px",
            ),
            _row("pay_network", rx.text(_dash(s.chain_name), size="3", id="pay-network")),
            _row(
                "pay_token",
                rx.text(_dash(s.token_symbol), size="3", id="pay-token", text_align="right", overflow_wrap="anywhere"),
            ),
            spacing="2",
            width="100%",
        ),
        width="100%",
    )
    return page(
        details,
        rx.cond(
            s.problem != "",
            rx.callout(
                t_var(s.problem), icon="triangle-alert", color_scheme="red", role="alert", width="100%", id="pay-error"
            ),
            rx.text(t("pay_hint"), size="2", color_scheme="gray"),
        ),
        rx.button(
            rx.icon("send"),
            t("pay_submit"),
            size="4",
            width="100%",
            disabled=s.running | (s.problem != "") | ~s.loaded | s.finished,
            loading=s.running,
            on_click=PaymentState.submit,
        ),
        pin_dialog(
            open=s.pin_open,
            title=t_var(s.pin_title),
            owner=SessionState.address,
            action=s.pin_action,
            payload=s.pin_payload,
            chains=chains_var(),
            expect_chain_id=s.chain_id,
            expect_merchant=s.merchant,
            expect_token=s.token,
            expect_units=s.units,
            token_symbol=s.token_symbol,
            token_decimals=s.token_decimals,
            messages=messages(),
            errors=error_messages(),
            on_done=PaymentState.pin_done,
            on_close=PaymentState.pin_closed,
        ),
        _progress_region(),
        _overlay(),
        title_key=PAGE.title_key,
    )


PAGE = Page(route=routes.PAYMENT, title_key="payment_title", view=payment_page, on_load=(PaymentState.load,))
