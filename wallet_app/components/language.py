"""The ko/en language switcher used on / and in settings."""

import reflex as rx

from wallet_app.i18n import t
from wallet_app.state.session import SessionState


def language_switch(**props) -> rx.Component:
    return rx.segmented_control.root(
        rx.segmented_control.item(t("lang_ko"), value="ko"),
        rx.segmented_control.item(t("lang_en"), value="en"),
        value=SessionState.lang,
        on_change=SessionState.set_language,
        aria_label=t("language"),
        **props,
    )
