"""/sign?tx=: the signature request (layout only; state: wallet_app/state/sign.py)."""

import reflex as rx

from custom_components.wallet_js.wallet import pin_dialog
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.ui import VISUALLY_HIDDEN, form_skeleton
from wallet_app.i18n import error_messages, messages, t, t_var
from wallet_app.routes import Page
from wallet_app.services.chain_table import chains_var
from wallet_app.state.session import SessionState
from wallet_app.state.sign import SignState


def _row(label_key: str, value, mono: bool = False, **props) -> rx.Component:
    return rx.vstack(
        rx.text(t(label_key), size="1", color_scheme="gray"),
        rx.text(
            value,
            size="2",
            word_break="break-all",
            color="var(--gray-12)",
            font_family="var(--code-font-family)" if mono else None,
            **props,
        ),
        spacing="0",
        width="100%",
    )


def _transfer_summary() -> rx.Component:
    s = SignState.summary
    return rx.vstack(
        rx.vstack(
            rx.text(t("sign_asset"), size="1", color_scheme="gray"),
            rx.hstack(
                rx.text(s["token_symbol"], weight="bold", size="4", overflow_wrap="anywhere"),
                rx.text(s["token_name"], size="2", color_scheme="gray", overflow_wrap="anywhere"),
                align="baseline",
                spacing="2",
                wrap="wrap",
            ),
            spacing="0",
        ),
        rx.vstack(
            rx.text(t("sign_token_address"), size="1", color_scheme="gray"),
            rx.hstack(
                rx.code(
                    SignState.short_token, variant="ghost", size="3", title=s["token_address"], id="sign-token-address"
                ),
                # Copy failures are silent (specification section 8).
                rx.icon_button(
                    rx.icon("copy", size=18),
                    variant="ghost",
                    aria_label=t("sign_copy_token"),
                    width="44px",
                    height="44px",  # touch target without a giant icon
                    on_click=rx.set_clipboard(s["token_address"]),
                ),
                align="center",
                spacing="3",
            ),
            spacing="0",
        ),
        _row("sign_recipient", s["recipient"], mono=True, id="sign-recipient"),
        rx.vstack(
            rx.text(t("sign_amount"), size="1", color_scheme="gray"),
            rx.text(
                s["amount"],
                " ",
                s["token_symbol"],
                size="6",
                weight="bold",
                id="sign-amount",
                # Wrapped, never cut at the card's edge: the amount must be read whole.
                style={"font-variant-numeric": "tabular-nums", "overflow-wrap": "anywhere"},
            ),
            spacing="0",
        ),
        spacing="3",
        width="100%",
    )


def _in_lang(texts) -> rx.Var:
    """A {"en": ..., "ko": ...} text of the state in the current language."""
    return rx.cond(SessionState.lang == "ko", texts["ko"], texts["en"])


def _callout(texts, icon: str, color: str, role: str, **props) -> rx.Component:
    return rx.callout.root(
        rx.callout.icon(rx.icon(icon)),
        rx.callout.text(_in_lang(texts), **props),
        color_scheme=color,
        role=role,
        width="100%",
    )


def _changes() -> rx.Component:
    """The simulated balance changes of the owner (item 2)."""
    s = SignState
    return rx.vstack(
        rx.text(t("sign_changes"), size="1", color_scheme="gray"),
        rx.match(
            s.simulation,
            ("unavailable", rx.text(t("sign_preview_unavailable"), size="2", id="sign-changes-status")),
            ("reverted", rx.text(t("sign_will_fail"), size="2", color_scheme="red", id="sign-changes-status")),
            rx.cond(
                s.changes.length() > 0,
                rx.foreach(
                    s.changes,
                    lambda c: rx.text(
                        c,
                        size="3",
                        weight="bold",
                        class_name="sign-change",
                        style={"font-variant-numeric": "tabular-nums"},
                    ),
                ),
                rx.text(t("sign_changes_none"), size="2", id="sign-changes-status"),
            ),
        ),
        spacing="1",
        width="100%",
        id="sign-changes",
    )


def _preview() -> rx.Component:
    """The decoded lines, the fee and the chain: always visible, not in the details."""
    s = SignState
    return rx.vstack(
        rx.vstack(
            rx.text(t("sign_summary"), size="1", color_scheme="gray"),
            rx.foreach(
                s.lines,
                lambda line: rx.text(
                    _in_lang(line), size="3", weight="medium", overflow_wrap="anywhere", class_name="sign-line"
                ),
            ),
            spacing="1",
            width="100%",
            id="sign-lines",
        ),
        rx.cond(s.selector != "", _row("sign_selector", s.selector, mono=True, id="sign-selector")),
        _changes(),
        _row("sign_fee", s.fee, id="sign-fee"),
        rx.cond(s.fee_was != "", _row("sign_fee_was", s.fee_was, id="sign-fee-was")),
        _row("sign_chain", s.chain_name, id="sign-chain"),
        spacing="3",
        width="100%",
    )


def _details() -> rx.Component:
    tx = SignState.tx
    return rx.accordion.root(
        rx.accordion.item(
            # Radix's header is an h3; under the page's h1 the outline needs an h2.
            rx.accordion.header(
                rx.el.h2(
                    rx.accordion.trigger(t("sign_details"), rx.accordion.icon()),
                    font_size="inherit",
                    font_weight="inherit",
                ),
                as_child=True,
            ),
            rx.accordion.content(
                rx.vstack(
                    # The network again (the spec's details name it; the summary keeps it in sight).
                    _row("sign_chain", SignState.chain_name, id="sign-details-chain"),
                    _row("sign_chain_id", tx["chain_id"], mono=True),
                    _row("sign_nonce", tx["nonce"], mono=True),
                    _row("sign_gas_limit", tx["gas_limit"], mono=True),
                    _row("sign_gas_price", tx["gas_price"], mono=True),
                    _row("sign_value", tx["value"], mono=True),
                    _row("sign_data", tx["data"], mono=True, id="sign-data"),
                    spacing="3",
                    width="100%",
                    padding_top="8px",
                ),
            ),
            value="details",
        ),
        type="single",
        collapsible=True,
        variant="ghost",
        width="100%",
    )


def _request() -> rx.Component:
    s = SignState
    return rx.vstack(
        # A speed-up or cancel: what it replaces, before anything else.
        rx.cond(s.replace_id != "", _callout(s.replacing, "refresh-cw", "blue", "status", id="sign-replacing")),
        rx.card(
            rx.vstack(
                rx.badge(t_var(s.kind_key), size="2", variant="soft", id="sign-kind"),
                rx.cond(
                    s.summary["kind"] == "transfer",
                    _transfer_summary(),
                    _row("sign_target", s.tx["to"], mono=True, id="sign-target"),
                ),
                rx.separator(size="4"),
                _preview(),
                spacing="3",
                width="100%",
            ),
            width="100%",
            size="3",
        ),
        rx.foreach(s.warnings, lambda w: _callout(w, "triangle-alert", "orange", "status", class_name="sign-warning")),
        rx.cond(s.refused, _callout(s.refusal, "octagon-x", "red", "alert", id="sign-refusal")),
        rx.cond(
            (s.simulation == "reverted") & ~s.refused,
            rx.vstack(
                rx.callout.root(
                    rx.callout.icon(rx.icon("triangle-alert")),
                    rx.callout.text(t("sign_will_fail"), id="sign-will-fail"),
                    color_scheme="red",
                    role="alert",
                    width="100%",
                ),
                rx.checkbox(
                    t("sign_fail_ack"), checked=s.fail_ack, on_change=s.set_fail_ack, size="3", id="sign-fail-ack"
                ),
                spacing="3",
                width="100%",
            ),
        ),
        _details(),
        rx.cond(
            s.tx_hash != "",
            rx.callout.root(
                rx.callout.icon(rx.icon("circle-check")),
                rx.callout.text(
                    t("sign_submitted"),
                    rx.el.br(),
                    rx.code(s.tx_hash, variant="ghost", word_break="break-all", id="sign-tx-hash"),
                ),
                color_scheme="green",
                width="100%",
            ),
        ),
        rx.cond(s.submitting, rx.hstack(rx.spinner(), rx.text(t("sign_submitting"), size="2"))),
        # Its live region, there before it (out of flow: no gap in the stack).
        rx.box(rx.cond(s.submitting, t("sign_submitting"), ""), role="status", id="sign-status", style=VISUALLY_HIDDEN),
        rx.button(
            rx.icon("pen-line"),
            t("confirm"),
            size="4",
            width="100%",
            on_click=s.open_pin,
            disabled=s.submitting | s.done | s.blocked,
        ),
        pin_dialog(
            open=s.pin_open,
            title=t("pin_dialog_title"),
            owner=SessionState.address,
            action="sign_tx",
            payload=s.payload,
            chains=chains_var(),
            # The token the summary names (an asset transfer of the user's list): the dialog shows
            # the amount it decodes in its decimals and symbol when the call is of this very contract.
            expect_chain_id=s.pin_chain_id,
            expect_token=s.summary["token_address"],
            token_symbol=s.summary["token_symbol"],
            token_decimals=s.pin_token_decimals,
            messages=messages(),
            errors=error_messages(),
            on_done=s.signed,
            on_close=s.close_pin,
        ),
        spacing="4",
        width="100%",
    )


def sign_page() -> rx.Component:
    # Left (Back to /send, a tap on the navigation), the request is put away: the next /sign in the
    # tab (the same state) showed it until its own load was done.
    shown = rx.fragment(rx.cond(SignState.ready, _request(), form_skeleton()), on_unmount=SignState.left)
    return page(shown, title_key=PAGE.title_key)


PAGE = Page(route=routes.SIGN, title_key="sign_title", view=sign_page, on_load=(SignState.load,))
