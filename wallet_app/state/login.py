"""/: the public Google (or development stand-in) configuration and the signing-in spinner."""

from __future__ import annotations

import string

import reflex as rx

from wallet_app.core.config import get_settings
from wallet_app.errors import REGISTRY
from wallet_app.i18n import CATALOGUES, LANGUAGES
from wallet_app.services import google
from wallet_app.state.session import SessionState


def sign_in_error(code: object, status: object) -> tuple[str, dict[str, int | str]]:
    """The catalogue key and params of an error the sign-in unit (auth.jsx) reported, as its
    errors.js errorText() would show it: a code not in REGISTRY is UNKNOWN, {status} is the
    HTTP status and any other placeholder stays empty. Both come from the browser: checked."""
    spec = REGISTRY.get(code) if isinstance(code, str) else None
    key = (spec or REGISTRY["UNKNOWN"]).key
    shown: int | str = status if isinstance(status, int) and not isinstance(status, bool) and 0 <= status <= 999 else ""
    names = {name for lang in LANGUAGES for _, name, _, _ in string.Formatter().parse(CATALOGUES[lang][key]) if name}
    return key, {name: (shown if name == "status" else "") for name in names}


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
    def failed(self, code: str, status: int = 0):
        """'Login failed: ' and the code's text, in every language (a switch re-translates it)."""
        self.signing_in = False
        key, params = sign_in_error(code, status)
        self._show_dialog(key, title="error", params=params, prefix="login_failed")
