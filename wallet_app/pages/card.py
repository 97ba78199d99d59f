"""/card : card issuing is unavailable."""

import reflex as rx

from wallet_app.components.layout import page
from wallet_app.i18n import t
from wallet_app.state.session import SessionState


# Events run on every load of this page, after the session check.
ON_LOAD: list = []

class CardState(rx.State):
    @rx.event
    async def issue(self):
        session = await self.get_state(SessionState)
        session._show_dialog("card_unavailable")


def card_page() -> rx.Component:
    return page(
        rx.button(rx.icon("credit-card"), t("card_issue"), size="4", width="100%", on_click=CardState.issue),
        rx.text(t("card_unavailable"), color_scheme="gray"),
        title_key="card_title",
    )
