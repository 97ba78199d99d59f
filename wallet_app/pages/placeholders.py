"""Pages whose features come with later issues: the frame and title only."""

import reflex as rx

from wallet_app.components.layout import page
from wallet_app.i18n import t


def send_page() -> rx.Component:
    return page(title_key="send_title")


def sign_page() -> rx.Component:
    return page(title_key="sign_title")


def payment_page() -> rx.Component:
    return page(title_key="payment_title")


def activity_page() -> rx.Component:
    return page(rx.text(t("activity_empty"), color_scheme="gray"), title_key="activity_title")


def not_found_page() -> rx.Component:
    return page(rx.text(t("not_found")), gated=True)
