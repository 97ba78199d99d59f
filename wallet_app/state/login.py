"""/: the public Google (or development stand-in) configuration and the signing-in spinner."""

from __future__ import annotations

import reflex as rx

from wallet_app.core.config import get_settings
from wallet_app.services import google
from wallet_app.state.session import SessionState


class LoginState(SessionState):
    client_id: str = ""
    script_url: str = ""
    dev_mode: bool = False
    signing_in: rx.Field[bool] = rx.field(False)

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
    def failed(self, detail: str):
        self.signing_in = False
        self._show_dialog("login_failed", str(detail), title="error")
