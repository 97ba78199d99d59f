"""Small view pieces shared by several pages."""

import reflex as rx

from wallet_app.i18n import t, t_var
from wallet_app.state.session import SessionState

NBSP = "\u00a0"  # a skeleton's placeholder text: a line's height, no words in any language

# Out of sight, still read by screen readers (a live region that only they need).
VISUALLY_HIDDEN = {
    "position": "absolute",
    "width": "1px",
    "height": "1px",
    "padding": "0",
    "margin": "-1px",
    "overflow": "hidden",
    "clip": "rect(0, 0, 0, 0)",
    "white_space": "nowrap",
    "border": "0",
}


def label_row(label_key: str, value: rx.Component, **props) -> rx.Component:
    """A gray label on the left and its value on the right, on one line."""
    return rx.hstack(
        rx.text(t(label_key), size="2", color_scheme="gray"), value, justify="between", width="100%", **props
    )


def field_label(key: str, html_for: str) -> rx.Component:
    """A form field's label, tied to the field by its id. rx.el.label: rx.text(as_="label") would put
    html_for into its CSS, leaving the field unlabelled."""
    return rx.el.label(t(key), html_for=html_for, style={"font-weight": "500", "font-size": "14px"})


def form_skeleton(fields: int = 4) -> rx.Component:
    """Placeholder rows (44 px, like the form fields) while a page loads."""
    return rx.vstack(
        *[rx.skeleton(height="44px", width="100%") for _ in range(fields)], spacing="4", width="100%", aria_busy="true"
    )


def error_callout(texts: rx.Var, id_: str, **props) -> rx.Component:
    """A red role=alert callout with `texts` (a state field: lang -> text, texts_for's) in the
    current language; nothing while `texts` is empty."""
    return rx.cond(
        texts.length() > 0,  # type: ignore[attr-defined]
        rx.callout.root(
            rx.callout.icon(rx.icon("triangle-alert")),
            rx.callout.text(texts[SessionState.lang]),  # type: ignore[index]
            color_scheme="red",
            role="alert",
            width="100%",
            id=id_,
            **props,
        ),
    )


def warning_note(key: rx.Var, id_: str) -> rx.Component:
    """An orange note with the catalogue text of `key` (a state field; nothing while it is "")."""
    return warning_callout(key != "", t_var(key), id_)


def warning_callout(shown: rx.Var, text: rx.Var, id_: str) -> rx.Component:
    """An orange note with `text` while `shown`, in a live region that is there before it: one
    added along with its text is not always announced."""
    return rx.box(
        rx.cond(
            shown,
            rx.callout.root(
                rx.callout.icon(rx.icon("triangle-alert")),
                rx.callout.text(text, id=id_),
                color_scheme="orange",
                size="1",
                width="100%",
            ),
        ),
        role="status",
        width="100%",
    )


def tied_to_error(texts: rx.Var, id_: str) -> dict[str, rx.Var]:
    """The props of a field whose error_callout(texts, id_) sits under it: while it shows, the
    field is aria-invalid and described by it (a screen reader on the field hears why); while
    `texts` is empty, neither attribute is rendered."""
    shown = texts.length() > 0  # type: ignore[attr-defined]
    return {"aria_invalid": rx.cond(shown, "true", None), "aria_describedby": rx.cond(shown, id_, None)}


def amount_input(id_: str, value: rx.Var | str, on_change, **props) -> rx.Component:
    """A decimal amount field (Send's amount, Receive's requested amount): the numeric keypad,
    no autofill, tabular digits."""
    return rx.input(
        id=id_,
        value=value,
        on_change=on_change,
        placeholder="0.0",
        input_mode="decimal",
        size="3",
        auto_complete="off",
        width="100%",
        style={"font-variant-numeric": "tabular-nums"},
        **props,
    )
