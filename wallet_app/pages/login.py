"""/: sign in with Google (or the development identity provider). Layout only; state: wallet_app/state/login.py."""

import reflex as rx

from custom_components.wallet_js.auth import google_sign_in
from wallet_app import routes
from wallet_app.components.dialogs import full_screen_spinner
from wallet_app.components.language import language_switch
from wallet_app.components.layout import page
from wallet_app.i18n import t
from wallet_app.routes import Page
from wallet_app.state.login import LoginState
from wallet_app.state.session import SessionState


def login_page() -> rx.Component:
    return page(
        rx.vstack(
            rx.hstack(rx.spacer(), language_switch(), width="100%"),
            rx.center(
                rx.image(src="/icon-192.png", width="72px", height="72px", alt=""), width="100%", padding_top="10vh"
            ),
            rx.heading(t(PAGE.title_key), size="8", as_="h1", text_align="center", width="100%"),
            rx.text(t("subtitle"), size="3", color_scheme="gray", text_align="center", width="100%"),
            rx.box(height="24px"),
            google_sign_in(
                client_id=LoginState.client_id,
                script_url=LoginState.script_url,
                locale=SessionState.lang,
                label=t("continue_google"),
                other_label=t("other_account"),
                on_start=LoginState.started,
                on_cancel=LoginState.cancelled,
                on_error=LoginState.failed,
            ),
            rx.cond(
                LoginState.dev_mode,
                rx.callout(t("dev_signin"), icon="flask-conical", size="1", color_scheme="amber", width="100%"),
            ),
            spacing="4",
            width="100%",
        ),
        full_screen_spinner(LoginState.signing_in, t("signing_in")),
        gated=False,
        signed_in=False,
    )


PAGE = Page(
    route=routes.LOGIN, title_key="app_title", view=login_page, access="public", on_load=(LoginState.load_config,)
)
