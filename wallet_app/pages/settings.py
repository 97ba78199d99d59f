"""/settings : backup, language, log out."""

import reflex as rx

from custom_components.wallet_js.auth import logout_button
from wallet_app.components.language import language_switch
from wallet_app.components.layout import page
from wallet_app.i18n import t
from wallet_app.state.session import SessionState


# Events run on every load of this page, after the session check.
ON_LOAD: list = []

def _section(title_key: str, *children: rx.Component) -> rx.Component:
    return rx.card(
        rx.vstack(rx.heading(t(title_key), size="3", as_="h2"), *children, spacing="3", width="100%"),
        width="100%",
    )


def settings_page() -> rx.Component:
    return page(
        _section(
            "backup",
            rx.hstack(rx.text(t("last_backup"), color_scheme="gray"), rx.text("-"), justify="between",
                      width="100%"),
        ),
        _section("language", language_switch(size="3")),
        logout_button(label=t("logout"), on_error=SessionState.show_logout_error),
        title_key="settings_title",
    )
