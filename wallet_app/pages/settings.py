"""/settings : backup, language, log out."""

import reflex as rx

from custom_components.wallet_js.auth import logout_button
from custom_components.wallet_js.backup_ui import backup_button, local_time
from wallet_app.components.language import language_switch
from wallet_app.components.layout import page
from wallet_app.core.config import get_settings
from wallet_app.i18n import error_messages, messages, t
from wallet_app.services import backups, google
from wallet_app.errors import AppError
from wallet_app.state.session import SessionState


class SettingsState(rx.State):
    # Epoch seconds of the last verified backup; 0 = none (shown as a dash).
    last_backup_at: int = 0
    # Public Drive configuration for the browser's token client.
    client_id: str = ""
    dev_mode: bool = False

    async def _refresh(self):
        session = await self.get_state(SessionState)
        user = session._user()
        if user is None:
            return session._expired()
        try:
            info = backups.info(user.id)
        except AppError:  # not_authenticated: the user no longer exists
            return session._expired()
        self.last_backup_at = int(info["last_backup_at"] or 0)
        session._apply(user)  # has_backup follows /backup/touch
        return None

    @rx.event
    async def load(self):
        self.client_id = google.browser_client_id()
        self.dev_mode = get_settings().dev_mode
        return await self._refresh()

    @rx.event
    async def backup_done(self, result: str):
        """The browser wrote and verified a backup (and called /backup/touch). Public only."""
        if result != "ok":
            return
        expired = await self._refresh()
        if expired is not None:
            return expired
        session = await self.get_state(SessionState)
        session._show_dialog("backup_done")


# Events run on every load of this page, after the session check.
ON_LOAD: list = [SettingsState.load]


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
                local_time(seconds=SettingsState.last_backup_at, locale=SessionState.lang, empty="-",
                           id="last-backup"),
                justify="between",
                align="center",
                width="100%",
            ),
            backup_button(
                owner=SessionState.address,
                client_id=SettingsState.client_id,
                dev_mode=SettingsState.dev_mode,
                messages=messages(),
                errors=error_messages(),
                on_done=SettingsState.backup_done,
            ),
        ),
        _section("language", language_switch(size="3")),
        logout_button(label=t("logout"), errors=error_messages(), on_error=SessionState.show_logout_error),
        title_key="settings_title",
    )
