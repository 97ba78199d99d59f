"""/settings: backup, language, log out (layout only; state: wallet_app/state/settings.py)."""

import reflex as rx

from custom_components.wallet_js.auth import logout_button
from custom_components.wallet_js.backup_ui import backup_button, local_time
from wallet_app import routes
from wallet_app.components.language import language_switch
from wallet_app.components.layout import page
from wallet_app.i18n import error_messages, messages, t
from wallet_app.routes import NavEntry, Page
from wallet_app.state.session import SessionState
from wallet_app.state.settings import SettingsState


def _section(title_key: str, *children: rx.Component) -> rx.Component:
    return rx.card(
        rx.vstack(rx.heading(t(title_key), size="3", as_="h2"), *children, spacing="3", width="100%"),
        width="100%",
    )


def settings_page() -> rx.Component:
    return page(
        _section(
            "backup",
            rx.text(t("backup_explain"), size="2", color_scheme="gray"),
            rx.hstack(
                rx.text(t("last_backup"), color_scheme="gray"),
                local_time(seconds=SettingsState.last_backup_at, locale=SessionState.lang, empty="-", id="last-backup"),
                justify="between",
                align="center",
                width="100%",
            ),
            backup_button(
                owner=SessionState.address,
                client_id=SettingsState.client_id,
                login_hint=SessionState.google_account,
                dev_mode=SettingsState.dev_mode,
                messages=messages(),
                errors=error_messages(),
                on_done=SettingsState.backup_done,
            ),
        ),
        _section("language", language_switch(size="3")),
        logout_button(label=t("logout"), errors=error_messages(), on_error=SessionState.show_logout_error),
        title_key=PAGE.title_key,
    )


PAGE = Page(
    route=routes.SETTINGS,
    title_key="settings_title",
    view=settings_page,
    nav=NavEntry("nav_settings", "settings", 4),
    on_load=(SettingsState.load,),
)
