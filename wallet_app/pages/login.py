"""/ : sign in with Google (or the development identity provider)."""

import reflex as rx

from custom_components.wallet_js.auth import google_sign_in
from wallet_app.components.dialogs import full_screen_spinner
from wallet_app.components.layout import page
from wallet_app.components.language import language_switch
from wallet_app.i18n import error_messages, t
from wallet_app.services import google
from wallet_app.core.config import get_settings
from wallet_app.state.session import SessionState


class LoginState(rx.State):
    client_id: str = ""
    script_url: str = ""
    dev_mode: bool = False
    signing_in: bool = False

    @rx.event
    def load_config(self):
        self.client_id = google.browser_client_id()
        self.script_url = google.gsi_script_url()
        self.dev_mode = get_settings().dev_mode
        self.signing_in = False

    @rx.event
    def started(self):
        self.signing_in = True

    @rx.event
    def cancelled(self):
        self.signing_in = False

    @rx.event
    async def failed(self, detail: str):
        self.signing_in = False
        session = await self.get_state(SessionState)
        session._show_dialog("login_failed", str(detail), title="error")


# Events run on every load of this page, after the session check.
ON_LOAD: list = [LoginState.load_config]


def login_page() -> rx.Component:
    return page(
        rx.vstack(
            rx.hstack(rx.spacer(), language_switch(), width="100%"),
            rx.center(rx.image(src="/icon-192.png", width="72px", height="72px", alt=""), width="100%",
                      padding_top="10vh"),
            rx.heading(t("app_title"), size="8", as_="h1", text_align="center", width="100%"),
            rx.text(t("subtitle"), size="3", color_scheme="gray", text_align="center", width="100%"),
            rx.box(height="24px"),
            google_sign_in(
                client_id=LoginState.client_id,
                script_url=LoginState.script_url,
                locale=SessionState.lang,
                label=t("continue_google"),
                other_label=t("other_account"),
                errors=error_messages(),
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
