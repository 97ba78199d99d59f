"""Shared session state: who is signed in, their address, the language, and the shared dialog.

Only public facts live here. The session cookie is read on the server from the websocket's
headers; secrets never enter Reflex state (design.md section 1).
"""

import reflex as rx

from wallet_app import routes
from wallet_app.i18n import CATALOGUES, lang_from_accept_language, normalize_lang
from wallet_app.core.config import get_settings
from wallet_app.services import accounts, eth, google, sessions


class SessionState(rx.State):
    logged_in: bool = False
    address: str = ""
    has_backup: bool = False
    lang: str = "en"
    # nb.lang is not secret (design.md section 1), so Reflex's LocalStorage may hold it.
    stored_lang: str = rx.LocalStorage("", name="nb.lang", sync=True)
    checked: bool = False
    busy: bool = False

    # The shared alert/confirm dialog: catalogue keys plus an untranslated detail (an error text).
    dialog_open: bool = False
    dialog_title: str = "notice"
    dialog_message: str = ""
    dialog_detail: str = ""
    dialog_cancel: bool = False
    dialog_ok_route: str = ""
    dialog_ok_label: str = "ok"

    def _user(self):
        return sessions.user_from_cookie_header(self.router.headers.cookie or "")

    def _apply(self, user) -> None:
        self.logged_in = user is not None
        self.address = (user.address or "") if user else ""
        self.has_backup = bool(user.has_backup) if user else False
        if user is not None and normalize_lang(user.locale):
            # After login the server locale decides; remembering it keeps / in the same language.
            self.lang = user.locale
            self.stored_lang = user.locale
        else:
            self.lang = normalize_lang(self.stored_lang) or lang_from_accept_language(
                self.router.headers.accept_language
            )

    @rx.var
    def path(self) -> str:
        return routes.normalize_path(self.router.url.path)

    @rx.var
    def show_nav(self) -> bool:
        return routes.shows_nav(self.router.url.path, self.logged_in)

    @rx.var
    def short_address(self) -> str:
        return eth.short_address(self.address)

    @rx.event
    def check_session(self):
        """on_load of every page: load the session and apply the redirect rules."""
        self._apply(self._user())
        self.checked = True
        target = routes.redirect_for(self.router.url.path, self.logged_in, bool(self.address))
        if target:
            return rx.redirect(target, replace=True)

    def _expired(self):
        """A 401 in the middle of a page: logged out, and go to / unless there."""
        self._apply(None)
        if routes.normalize_path(self.router.url.path) != routes.LOGIN:
            return rx.redirect(routes.LOGIN, replace=True)

    @rx.event
    def set_language(self, code: str | list[str]):
        code = normalize_lang(code if isinstance(code, str) else None)
        if code is None or code == self.lang or self.busy:
            return
        if self.logged_in:
            user = self._user()
            if user is None:
                return self._expired()
            self.busy = True
            try:
                accounts.set_locale(user.id, code)
            finally:
                self.busy = False
        self.lang = code
        self.stored_lang = code

    def _show_dialog(self, message: str, detail: str = "", title: str = "notice",
                     cancel: bool = False, ok_route: str = "", ok_label: str = "ok") -> None:
        for key in (message, title, ok_label):
            if key not in CATALOGUES["en"]:
                raise KeyError(key)
        self.dialog_title = title
        self.dialog_message = message
        self.dialog_detail = detail[:500]
        self.dialog_cancel = cancel
        self.dialog_ok_route = ok_route
        self.dialog_ok_label = ok_label
        self.dialog_open = True

    @rx.event
    def dialog_ok(self):
        self.dialog_open = False
        if self.dialog_ok_route in routes.KNOWN:
            return rx.redirect(self.dialog_ok_route)

    @rx.event
    def dialog_dismiss(self):
        self.dialog_open = False

    # The restore prompt of the device check (backup_ui.RestoreDialog) and the public Drive config it needs.
    restore_open: bool = False
    drive_client_id: str = ""
    drive_dev_mode: bool = False

    @rx.event
    def device_checked(self, status: str):
        """The browser reports whether it holds this address's local materials (at every route
        change and when the tab becomes visible). Missing: prompt, unless a prompt or an alert
        is already up; so after a cancelled restore the next report asks again."""
        if status != "missing" or not self.address or self.restore_open or self.dialog_open:
            return
        if not routes.shows_nav(self.router.url.path, self.logged_in):
            return
        if not self.has_backup:
            self._show_dialog("no_backup_redirect", ok_route=routes.ONBOARDING)
        else:
            # New device: the notices and the PIN prompt; the restore itself runs in JS.
            self.drive_client_id = google.browser_client_id()
            self.drive_dev_mode = get_settings().dev_mode
            self.restore_open = True

    @rx.event
    def restore_result(self, result: str):
        """The restore dialog's public outcome (never a secret). Any browser may call this:
        it only closes the prompt and shows a message."""
        if not isinstance(result, str) or not self.restore_open:
            return
        self.restore_open = False
        if result == "ok":
            self._show_dialog("restore_done", ok_route=routes.HOME)
        elif result == "NO_BACKUP":
            self._show_dialog("no_backup_redirect", ok_route=routes.ONBOARDING)
        elif result == "ADDRESS_MISMATCH":
            self._show_dialog("restore_address_mismatch", title="error")
        else:
            detail = result[len("error:"):] if result.startswith("error:") else ""
            self._show_dialog("recovery_failed", detail, title="error", cancel=True, ok_route=routes.ONBOARDING,
                              ok_label="continue_onboarding")

    @rx.event
    def restore_cancel(self):
        self.restore_open = False

    @rx.event
    def show_logout_error(self, detail: str):
        self._show_dialog("logout_failed", str(detail), title="error")
