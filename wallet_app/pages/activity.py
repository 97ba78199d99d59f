"""/activity : the user's activity entries, newest first."""

import reflex as rx

from wallet_app.components.layout import page
from wallet_app.i18n import t

# Events run on every load of this page, after the session check.
ON_LOAD: list = []


def activity_page() -> rx.Component:
    return page(rx.text(t("activity_empty"), color_scheme="gray"), title_key="activity_title")
