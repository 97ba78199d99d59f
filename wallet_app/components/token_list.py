"""The /home token list and the add-token dialog (layout only; state: wallet_app/state/home.py)."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from custom_components.wallet_js.focus import dialog_focus, held_enter_ignored
from wallet_app.components.dialogs import selector
from wallet_app.components.ui import NBSP, error_callout, field_label, label_row, tied_to_error, warning_callout
from wallet_app.i18n import t
from wallet_app.state.home import TokenListState
from wallet_app.state.session import SessionState

# ---------------------------------------------------------------- components


def _skeleton_row() -> rx.Component:
    return rx.hstack(
        rx.vstack(rx.skeleton(rx.text(NBSP), width="64px"), rx.skeleton(rx.text(NBSP), width="140px"), spacing="1"),
        rx.skeleton(rx.text("0.00"), width="72px"),
        justify="between",
        align="center",
        width="100%",
        padding_y="10px",
    )


def _token_row(row: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.hstack(
        rx.vstack(
            rx.text(row["symbol"], weight="bold", size="3"),
            rx.text(
                row["name"], " · ", row["chain"], size="2", color_scheme="gray", trim="both", class_name="token-name"
            ),
            spacing="1",
            min_width="0",
        ),
        rx.text(
            row["balance"],
            size="4",
            weight="medium",
            text_align="right",
            style={"font_variant_numeric": "tabular-nums"},
            class_name="token-balance",
        ),
        justify="between",
        align="center",
        width="100%",
        min_height="56px",
        padding_y="8px",
        border_bottom="1px solid var(--gray-a4)",
        class_name="token-row",
        custom_attrs={"data-symbol": row["symbol"]},
    )


def _unavailable_notice() -> rx.Component:
    """The chains whose balances could not be read at the last load (their rows shown stay)."""
    s = TokenListState
    # mypy resolves Field[dict]'s class access to the ArrayVar overload, not ObjectVar.
    text = s.unavailable[SessionState.lang]  # type: ignore[call-overload]
    return warning_callout(s.unavailable.length() > 0, text, "token-list-unavailable")


def token_list() -> rx.Component:
    s = TokenListState
    return rx.vstack(
        rx.hstack(
            rx.heading(t("tokens"), size="4", as_="h2"),
            rx.hstack(
                rx.icon_button(
                    rx.icon("refresh-cw"),
                    variant="ghost",
                    size="3",
                    aria_label=t("assets_refresh"),
                    on_click=s.load,
                    disabled=s.loading,
                ),
                rx.button(rx.icon("plus"), t("add_token"), variant="soft", size="3", on_click=s.open_add),
                spacing="3",
                align="center",
                wrap="wrap",
            ),
            justify="between",
            align="center",
            wrap="wrap",  # the buttons go under the heading on a narrow (zoomed) screen
            width="100%",
        ),
        _unavailable_notice(),
        rx.cond(
            s.loading,
            rx.vstack(_skeleton_row(), _skeleton_row(), spacing="0", width="100%", aria_busy="true"),
            rx.cond(
                s.rows.length() > 0,
                rx.vstack(rx.foreach(s.rows, _token_row), spacing="0", width="100%", id="token-list"),
                # "No tokens yet." only when every chain answered: else nothing held and nothing read look alike.
                rx.cond(
                    s.unavailable.length() == 0,
                    rx.text(t("tokens_empty"), color_scheme="gray", id="token-list-empty"),
                ),
            ),
        ),
        add_token_dialog(),
        spacing="2",
        width="100%",
    )


def _meta_line(label_key: str, value: rx.Var, id_: str) -> rx.Component:
    return label_row(label_key, rx.text(value, size="2", weight="medium", id=id_))


def _address_form() -> rx.Component:
    s = TokenListState
    return rx.form(
        rx.vstack(
            rx.text(t("add_token_network"), size="2", weight="medium"),
            selector(s.chains, s.chain_id, s.set_chain_id, t("add_token_network"), disabled=s.busy),
            field_label("add_token_address", "add-token-address"),
            # Uncontrolled: the address travels only with the form's submit, so no late keystroke
            # event can overtake a probe (submit compares it with the probed one).
            rx.input(
                default_value=s.token_address,
                id="add-token-address",
                name="token_address",
                placeholder=t("add_token_address_hint"),
                size="3",
                width="100%",
                # Read-only, not disabled, while a probe runs: Chrome takes focus off a disabled field,
                # and the keyboard user who pressed Enter in it would be left on the page's <body>.
                read_only=s.busy,
                font_family="var(--code-font-family)",
                auto_complete="off",
                spell_check=False,
                auto_capitalize="off",
                # The field the dialog is for takes focus when it opens; the keyboard corrects nothing in it.
                custom_attrs={"data-autofocus": "", "autoCorrect": "off"},
                **tied_to_error(s.add_error, "add-token-error"),
            ),
            error_callout(s.add_error, "add-token-error"),
            rx.cond(
                s.probed,
                rx.card(
                    rx.vstack(
                        _meta_line("add_token_name", s.meta_name, "add-token-name"),
                        _meta_line("add_token_symbol", s.meta_symbol, "add-token-symbol"),
                        _meta_line("add_token_decimals", s.meta_decimals, "add-token-decimals"),
                        spacing="2",
                        width="100%",
                    ),
                    width="100%",
                    id="add-token-meta",
                ),
            ),
            spacing="3",
            width="100%",
        ),
        # One live region, there from the dialog's opening: a region added along with its text is
        # not always announced, text put into one that is there is (the probe's progress, then
        # its warning). Outside the stack, so that while empty it adds no gap.
        rx.box(
            rx.cond(
                s.busy,
                rx.hstack(rx.spinner(), rx.text(t("add_token_probing"), size="2"), margin_top="var(--space-3)"),
            ),
            rx.cond(
                s.meta_warning.length() > 0,
                rx.callout.root(
                    rx.callout.icon(rx.icon("triangle-alert")),
                    # mypy resolves Field[dict]'s class access to the ArrayVar overload, not ObjectVar.
                    rx.callout.text(s.meta_warning[SessionState.lang], word_break="break-word"),  # type: ignore[call-overload]
                    color_scheme="orange",
                    width="100%",
                    margin_top="var(--space-3)",
                    id="add-token-copycat",
                ),
            ),
            role="status",
            width="100%",
        ),
        rx.flex(
            rx.dialog.close(
                rx.button(t("cancel"), size="3", variant="soft", color_scheme="gray", disabled=s.busy, type="button")
            ),
            # aria-disabled, not disabled, for the same reason (a second submit while busy is ignored).
            rx.button(
                rx.cond(s.probed, t("add_token_add"), t("add_token_probe")),
                size="3",
                type="submit",
                aria_disabled=s.busy,
            ),
            gap="3",
            justify="end",
            margin_top="16px",
        ),
        on_submit=s.submit,
        reset_on_submit=False,
        # A held Enter probed, then added once the probe's answer came, its warning unread.
        **held_enter_ignored(),
    )


def add_token_dialog() -> rx.Component:
    s = TokenListState
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(t("add_token_title")),
            _address_form(),
            max_width="420px",
            **dialog_focus(),
        ),
        open=s.add_open,
        on_open_change=s.set_add_open,
    )
