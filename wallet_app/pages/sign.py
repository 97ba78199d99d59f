"""/sign (placeholder until its feature lands)."""

import reflex as rx

from wallet_app.components.layout import page

# Events run on every load of this page, after the session check.
ON_LOAD: list = []


def sign_page() -> rx.Component:
    return page(title_key="sign_title")
