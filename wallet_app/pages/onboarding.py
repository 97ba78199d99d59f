"""/onboarding : PIN creation (the PIN pad and wallet creation come with the wallet issue)."""

import reflex as rx

from custom_components.wallet_js.auth import logout_button
from wallet_app.components.layout import page
from wallet_app.i18n import t
from wallet_app.state.session import SessionState


def onboarding_page() -> rx.Component:
    return page(
        rx.text(t("onboarding_hint"), size="3"),
        rx.text(t("onboarding_note"), size="2", color_scheme="gray"),
        logout_button(label=t("relogin"), on_error=SessionState.show_logout_error),
        title_key="onboarding_title",
    )
