"""Shared pieces: the alert/confirm dialog, the spinners and the dropdown selector."""

import reflex as rx

from custom_components.wallet_js.focus import dialog_focus
from wallet_app.components.ui import VISUALLY_HIDDEN
from wallet_app.i18n import CORE_AREA, t, t_var
from wallet_app.state.session import SessionState


def alert_dialog() -> rx.Component:
    """One dialog for the whole app: OK only, or OK and Cancel (opened by the states' own helpers)."""
    s = SessionState
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title(t_var(s.dialog_title, CORE_AREA)),
            rx.alert_dialog.description(
                # A detail can be a 66-character hash or an error with no spaces: let it wrap.
                rx.text(
                    s.dialog_texts[s.lang],
                    s.dialog_detail,
                    role="alert",
                    word_break="break-word",
                    overflow_wrap="anywhere",
                ),
            ),
            rx.flex(
                rx.cond(
                    s.dialog_cancel,
                    rx.alert_dialog.cancel(
                        rx.button(
                            t("cancel"),
                            variant="soft",
                            color_scheme="gray",
                            size="3",
                            on_click=s.dialog_dismiss,
                            custom_attrs={"data-autofocus": ""},
                        ),
                    ),
                ),
                # Focus goes to the first [data-autofocus]: Cancel when there is one (the safe choice), else OK.
                rx.alert_dialog.action(
                    rx.button(
                        t_var(s.dialog_ok_label, CORE_AREA),
                        size="3",
                        on_click=s.dialog_ok,
                        custom_attrs={"data-autofocus": ""},
                    )
                ),
                gap="3",
                justify="end",
                margin_top="16px",
            ),
            max_width="420px",
            on_escape_key_down=s.dialog_escape,
            **dialog_focus(),
        ),
        open=s.dialog_shown,
    )


def full_screen_spinner(visible: rx.Var, label: rx.Var | str = "") -> rx.Component:
    """A blocking overlay with a spinner, for the waits the specification names. Its label is
    announced from a live region that is there before it (one added along with its text, as
    the overlay is, is not always announced)."""
    return rx.fragment(
        rx.box(rx.cond(visible, label, ""), role="status", style=VISUALLY_HIDDEN, id="full-screen-status"),
        rx.cond(
            visible,
            rx.center(
                rx.vstack(rx.spinner(size="3"), rx.text(label, size="2"), align="center"),
                position="fixed",
                inset="0",
                z_index="1000",
                background_color="var(--color-overlay)",
            ),
        ),
    )


def spinner(label: rx.Var | str = "") -> rx.Component:
    return rx.hstack(rx.spinner(), rx.text(label, size="2", color_scheme="gray"), align="center", role="status")


def selector(items: rx.Var | list, value: rx.Var, on_change, label: rx.Var | str, **props) -> rx.Component:
    """The dropdown selector: `items` are (value, text) pairs."""
    return rx.select.root(
        rx.select.trigger(aria_label=label, width="100%"),
        rx.select.content(
            rx.foreach(items, lambda item: rx.select.item(item[1], value=item[0])),
        ),
        value=value,
        on_change=on_change,
        size="3",
        **props,
    )
