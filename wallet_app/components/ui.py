"""Small view pieces shared by several pages."""

import reflex as rx

from wallet_app.i18n import t


def label_row(label_key: str, value: rx.Component, **props) -> rx.Component:
    """A gray label on the left and its value on the right, on one line."""
    return rx.hstack(
        rx.text(t(label_key), size="2", color_scheme="gray"), value, justify="between", width="100%", **props
    )


def form_skeleton(fields: int = 4) -> rx.Component:
    """Placeholder rows (44 px, like the form fields) while a page loads."""
    return rx.vstack(
        *[rx.skeleton(height="44px", width="100%") for _ in range(fields)], spacing="4", width="100%", aria_busy="true"
    )
