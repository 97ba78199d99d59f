"""/onboarding : PIN creation. The PIN pad, the new phrase and its encryption live in JS
(wallet.jsx); Python only learns the new public address."""

import reflex as rx

from custom_components.wallet_js.auth import logout_button
from custom_components.wallet_js.wallet import create_wallet
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.errors import AppError
from wallet_app.i18n import error_messages, messages, t
from wallet_app.services import accounts, eth
from wallet_app.state.session import SessionState


# Events run on every load of this page, after the session check.
ON_LOAD: list = []

class OnboardingState(rx.State):
    @rx.event
    async def created(self, address: str):
        session = await self.get_state(SessionState)
        try:
            address = eth.parse_address(address).lower()
        except AppError:
            session._show_dialog("onboarding_failed", "invalid address", title="error")
            return
        user = session._user()
        if user is None:
            return session._expired()
        if user.address != address:
            # The browser's POST /me/address may have failed (that failure is ignored there);
            # the session's websocket registers it instead.
            user = accounts.set_address(user.id, address)
        session._apply(user)
        return rx.redirect(routes.HOME, replace=True)

    @rx.event
    async def failed(self, detail: str):
        session = await self.get_state(SessionState)
        session._show_dialog("onboarding_failed", str(detail), title="error")


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
        title_key="onboarding_title",
        signed_in=False,
    )
