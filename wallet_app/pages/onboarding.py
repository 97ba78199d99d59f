"""/onboarding: PIN creation. The PIN pad, the new phrase and its encryption live in JS
(wallet.jsx); Python only learns the new public address (state: wallet_app/state/onboarding.py)."""

import reflex as rx

from custom_components.wallet_js.auth import logout_button
from custom_components.wallet_js.wallet import create_wallet
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.i18n import error_messages, messages, t
from wallet_app.routes import Page
from wallet_app.state.onboarding import OnboardingState
from wallet_app.state.session import SessionState


def onboarding_page() -> rx.Component:
    return page(
        rx.text(t("onboarding_hint"), size="3"),
        create_wallet(
            messages=messages(),
            errors=error_messages(),
            replace_address=SessionState.address,
            on_created=OnboardingState.created,
            on_error=OnboardingState.failed,
        ),
        rx.text(t("onboarding_note"), size="2", color_scheme="gray"),
        logout_button(label=t("relogin"), errors=error_messages(), on_error=SessionState.show_logout_error),
        title_key=PAGE.title_key,
        signed_in=False,
    )


PAGE = Page(route=routes.ONBOARDING, title_key="onboarding_title", view=onboarding_page, access="session")
