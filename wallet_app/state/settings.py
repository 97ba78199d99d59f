"""/settings: the last backup time and the public Drive configuration for the backup button."""

from __future__ import annotations

import asyncio

import reflex as rx

from wallet_app.core.config import get_settings
from wallet_app.errors import AppError
from wallet_app.models import stored_id
from wallet_app.services import backups, google
from wallet_app.state.base import SignedInState


class SettingsState(SignedInState):
    # Epoch seconds of the last verified backup; 0 = none (shown as a dash).
    last_backup_at: int = 0
    # Public Drive configuration for the browser's token client.
    client_id: str = ""
    dev_mode: bool = False

    async def _refresh(self) -> bool:
        """Re-read the backup status; False when the session has expired."""
        user = await self._require_user()
        if user is None:
            return False
        try:
            info = await asyncio.to_thread(backups.info, stored_id(user))
        except AppError:
            self._apply(None)
            return False
        self.last_backup_at = int(info["last_backup_at"] or 0)
        self._apply(user)  # has_backup follows /backup/touch
        return True

    @rx.event
    async def load(self):
        self.client_id = google.browser_client_id()
        self.dev_mode = get_settings().dev_mode
        if not await self._refresh():
            return self._to_login()
        return None

    @rx.event
    async def backup_done(self, result: str):
        """The browser wrote and verified a backup (and called /backup/touch). Public only."""
        if result != "ok":
            return None
        if not await self._refresh():
            return self._to_login()
        self._notify("backup_done")
        return None
