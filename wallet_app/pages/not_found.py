"""Any unknown path: the session check redirects to /home or /."""

import reflex as rx

from wallet_app.components.layout import page
from wallet_app.i18n import t


def not_found_page() -> rx.Component:
    return page(rx.text(t("not_found")))
