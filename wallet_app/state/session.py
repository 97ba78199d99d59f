"""Shared session state: who is signed in, their address, the language, and the shared dialog.

Only public facts live here. The session cookie is read on the server from the websocket's
headers; secrets never enter Reflex state (design.md section 1). Every page state is a
substate of this one (state/base.py), so it reads and writes these vars as its own and
uses the private helpers below without reaching into another state.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from typing import Any

import reflex as rx
from redis import RedisError
from reflex.event import EventSpec
from reflex_base.event.context import EventContext

from wallet_app import routes
from wallet_app.core.config import get_settings
from wallet_app.errors import REGISTRY, AppError, logged_code
from wallet_app.i18n import AREA_OF, CATALOGUES, CORE_AREA, LANGUAGES, lang_from_accept_language, normalize_lang
from wallet_app.models import User, stored_id
from wallet_app.services import accounts, backups, google, sessions
from wallet_app.services.eth import short_address

log = logging.getLogger(__name__)


def texts_for(key: str, params: dict | None = None) -> dict[str, str]:
    """A catalogue text in every language, its {placeholders} filled from `params`."""
    return {lang: CATALOGUES[lang][key].format(**(params or {})) for lang in LANGUAGES}


# Every load of a document writes a new id here, before Reflex connects (an inline script in the
# head, wallet_app.py); the socket's reconnect sends the same id again. Not a secret: it only tells
# a reconnect's on_load, which Reflex runs like a page load's, from a new load of the page.
VISIT_KEY = "nb.visit"
VISIT_SCRIPT = (
    "try{var v=new Uint32Array(2);crypto.getRandomValues(v);"
    f'sessionStorage.setItem("{VISIT_KEY}",v[0].toString(36)+v[1].toString(36))}}catch(e){{}}'
)


# Reflex sets its client storage vars (below) to whatever a browser sends (the hydrate, a storage
# sync), unchecked: a visit id is at most 14 characters, a language 2. Anything else, which no page
# of ours writes, is dropped rather than kept in the client's state (in Redis with REDIS_URL).
CLIENT_STORAGE_VARS = ("stored_lang", "visit")
CLIENT_STORAGE_MAX = 32


def dialog_after_load(open_: bool, route: str, pending: bool, path: str, same_visit: bool) -> tuple[bool, bool]:
    """(open, pending) of the shared alert after an on_load of `path`: an alert raised with a
    redirect arrives on its route and stays (once); an alert on its own route stays when the page
    was not loaded again since it was raised (`same_visit`: the socket reconnected); every other
    alert belongs to an earlier page and closes."""
    if open_ and route == path and (pending or same_visit):
        return True, False
    return False, False


def _pages():
    # The registry imports every page module (and so every state): only needed at event time.
    from wallet_app.pages import registered_pages

    return registered_pages()


class SessionState(rx.State):
    logged_in: bool = False
    address: str = ""
    has_backup: bool = False
    # The signed-in Google account's e-mail: the login_hint of the browser's Drive token requests
    # (backup, restore), so the token is for this account's Drive, not another account signed in
    # to the browser. The user's own, not a secret (design.md section 1); the token stays in JS.
    google_account: str = ""
    lang: str = "en"
    # nb.lang is not secret (design.md section 1), so Reflex's LocalStorage may hold it.
    stored_lang: str = rx.LocalStorage("", name="nb.lang", sync=True)
    visit: str = rx.SessionStorage("", name=VISIT_KEY)  # this load of the page (VISIT_SCRIPT)
    checked: bool = False
    busy: bool = False

    # The shared alert/confirm dialog. The message is prepared in every language (it may
    # carry parameters); title and button labels are catalogue keys; detail is untranslated.
    dialog_open: bool = False
    dialog_title: rx.Field[str] = rx.field("notice")
    dialog_texts: dict[str, str] = {}
    dialog_detail: str = ""
    dialog_cancel: bool = False
    dialog_ok_route: str = ""
    dialog_ok_label: rx.Field[str] = rx.field("ok")
    # An alert belongs to a page: the one that raised it, or the one it was raised together
    # with a redirect to. It shows only there (a new page load never flashes it elsewhere),
    # and the next page load closes it, except the arrival of such a redirect (a reconnect of the
    # socket, which runs on_load again, is no page load: VISIT_KEY).
    dialog_route: str = ""
    _dialog_pending: bool = False
    _dialog_visit: str = ""  # the page load it was raised in ("" when unknown)
    # The page the last on_load was for (SHA-256 of "<visit> <path>?<query>": a /sign link is up to
    # 64,000 characters). The same page again in the same visit is a reconnect of the socket (Reflex
    # runs on_load again), not the user opening it: a page's form keeps what was typed (switching
    # apps to copy an address drops a phone's socket).
    _loaded_page: str = ""
    _page_again: bool = False

    def __setattr__(self, name: str, value: Any) -> None:
        if name in CLIENT_STORAGE_VARS and (not isinstance(value, str) or len(value) > CLIENT_STORAGE_MAX):
            value = ""
        super().__setattr__(name, value)

    # ------------------------------------------------------------ private helpers (inherited by page states)

    def _lookup_user(self):
        return sessions.user_from_socket_cookie(self.router.headers.cookie or "")

    def _page_left(self) -> bool:
        """The page that sent this event was left: its websocket closed before the event ran. Its
        updates reach the tab's next page (Reflex sends them to the client's current socket, on
        any worker): a redirect there took a merchant link just opened to / and on to /home."""
        return sessions.socket_closed(self.router.headers.cookie or "")

    async def _require_user(self) -> User | None:
        """The signed-in user, read off the event loop. None when the session has expired:
        the 401 behaviour is applied, and the caller returns `self._to_login()`. None too when
        the event's page was left (its socket is gone, so no user is found): nothing is applied."""
        user = await asyncio.to_thread(self._lookup_user)
        if user is None and not self._page_left():
            self._apply(None)
        return user

    def _apply(self, user) -> None:
        self.logged_in = user is not None
        self.address = (user.address or "") if user else ""
        self.has_backup = bool(user.has_backup) if user else False
        self.google_account = (user.email or "") if user else ""
        if user is not None and normalize_lang(user.locale):
            # After login the server locale decides; remembering it keeps / in the same language.
            self.lang = user.locale
            self.stored_lang = user.locale
        else:
            self.lang = normalize_lang(self.stored_lang) or lang_from_accept_language(
                self.router.headers.accept_language
            )

    def _to_login(self):
        """The 401 behaviour: logged out, and go to / unless there. Not for an event of a page that
        was left: the session did not end, and the redirect would take the tab's next page."""
        if self._page_left():
            return None
        self._apply(None)
        if routes.normalize_path(self.router.url.path) != routes.LOGIN:
            return rx.redirect(routes.LOGIN, replace=True)
        return None

    def _show_dialog(
        self,
        message: str,
        detail: str = "",
        title: str = "notice",
        cancel: bool = False,
        ok_route: str = "",
        ok_label: str = "ok",
        params: dict | None = None,
        for_route: str = "",
        prefix: str = "",
    ) -> None:
        """Open the shared dialog. `for_route`: raised together with a redirect to that route;
        `prefix`: a catalogue key shown before the message."""
        if message not in CATALOGUES["en"]:
            raise KeyError(message)
        for key in (title, ok_label):  # the dialog on every page loads only the core texts
            if AREA_OF.get(key) != CORE_AREA:
                raise KeyError(f"{key} is not a core catalogue key")
        texts = texts_for(message, params)
        if prefix:
            texts = {lang: CATALOGUES[lang][prefix] + text for lang, text in texts.items()}
        self.dialog_title = title
        self.dialog_texts = texts
        self.dialog_detail = detail[:500]
        self.dialog_cancel = cancel
        self.dialog_ok_route = ok_route
        self.dialog_ok_label = ok_label
        self.dialog_route = for_route or routes.normalize_path(self.router.url.path)
        self._dialog_pending = bool(for_route)
        self._dialog_visit = self.visit
        self.dialog_open = True

    # ------------------------------------------------------------ computed

    @rx.var
    def path(self) -> str:
        return routes.normalize_path(self.router.url.path)

    @rx.var
    def show_nav(self) -> bool:
        return routes.shows_nav(_pages(), self.router.url.path, self.logged_in)

    @rx.var
    def dialog_shown(self) -> bool:
        # An alert raised with a redirect shows once its page's check_session has taken it (not
        # pending): shown before that, a reload at that moment would show it a second time.
        return (
            self.dialog_open
            and not self._dialog_pending
            and self.dialog_route == routes.normalize_path(self.router.url.path)
        )

    @rx.var
    def short_address(self) -> str:
        return short_address(self.address)

    # ------------------------------------------------------------ events

    @rx.event
    async def check_session(self):
        """on_load of every page, first: load the session and apply the redirect rules. An on_load
        of a page already left does nothing (the next page's own decides)."""
        if self._page_left():
            return None
        path = routes.normalize_path(self.router.url.path)
        page = hashlib.sha256(f"{self.visit} {path}?{self.router.url.query}".encode()).hexdigest()
        self._page_again = bool(self.visit) and page == self._loaded_page
        self._loaded_page = page
        self._apply(await asyncio.to_thread(self._lookup_user))
        self.checked = True
        same_visit = bool(self.visit) and self._dialog_visit == self.visit
        self.dialog_open, self._dialog_pending = dialog_after_load(
            self.dialog_open, self.dialog_route, self._dialog_pending, path, same_visit
        )
        target = routes.redirect_for(_pages(), path, self.logged_in, bool(self.address))
        if target:
            return rx.redirect(target, replace=True)
        return None

    @rx.event
    async def set_language(self, value: str | list[str]):
        code = normalize_lang(value if isinstance(value, str) else None)
        if code is None or code == self.lang or self.busy:
            return None
        if self.logged_in:
            user = await self._require_user()
            if user is None:
                return self._to_login()
            self.busy = True
            try:
                await asyncio.to_thread(accounts.set_locale, stored_id(user), code)
            finally:
                self.busy = False
        self.lang = code
        self.stored_lang = code
        return None

    @rx.event
    def dialog_ok(self):
        self.dialog_open = False
        if self.dialog_ok_route in routes.known_routes(_pages()):
            return rx.redirect(self.dialog_ok_route)
        return None

    @rx.event
    def dialog_dismiss(self):
        self.dialog_open = False

    @rx.event
    def dialog_escape(self):
        """Escape answers the dialog with its safe choice: Cancel when it has one, else OK (a
        notice has no other answer; its route is followed as OK would)."""
        return SessionState.dialog_dismiss if self.dialog_cancel else SessionState.dialog_ok

    # The restore prompt of the device check (backup_ui.RestoreDialog) and the public Drive config it needs.
    restore_open: bool = False
    drive_client_id: str = ""
    drive_dev_mode: bool = False

    @rx.event
    async def device_checked(self, status: str):
        """The browser reports whether it holds this address's local materials (at every route
        change and when the tab becomes visible). Missing: prompt, unless a prompt or an alert
        is already up; so after a cancelled restore the next report asks again.

        "backed_up": present, and this browser wrote or restored this address's backup on Drive
        (its driveMeta). A server that does not know of it is told again: the backup's own
        /backup/touch may never have arrived (the phone offline right after the upload), and a new
        device would then be told there is no backup and sent to onboarding to replace the wallet.

        The session is checked first (the specification's "when the tab becomes visible while logged
        in"): a tab left open after a sign-out elsewhere (another tab, another device, a session that
        expired) kept showing the account's address, balances and activity to whoever picked the
        device up next; it now goes to /."""
        user = await self._require_user()
        if user is None:
            return self._to_login()
        if status == "backed_up" and self.address and not self.has_backup:
            if user.id is not None:
                try:
                    await asyncio.to_thread(backups.touch, user.id, self.address)
                    self.has_backup = True
                except AppError:  # the account's wallet changed meanwhile: the next report decides
                    pass
            return
        if status != "missing" or not self.address or self.restore_open or self.dialog_open:
            return
        if not routes.shows_nav(_pages(), self.router.url.path, self.logged_in):
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
            detail = result[len("error:") :] if result.startswith("error:") else ""
            self._show_dialog(
                "recovery_failed",
                detail,
                title="error",
                cancel=True,
                ok_route=routes.ONBOARDING,
                ok_label="continue_onboarding",
            )

    @rx.event
    def restore_cancel(self):
        self.restore_open = False

    @rx.event
    def show_logout_error(self, detail: str):
        self._show_dialog("logout_failed", str(detail), title="error")

    @rx.event
    def show_server_error(self, code: str):
        """The alert for an event handler that failed unexpectedly (server_error_event). Any
        browser may call this: it only shows one of two fixed texts."""
        if code != "database_unavailable":
            code = "internal_error"
        self._show_dialog(REGISTRY[code].key, title="error")


# The element whose value shows the busy notice (components.layout.server_busy_notice).
SERVER_BUSY_FLAG = "server-busy-flag"
ALERTED_FAILURES_KEPT = 1000  # failures this worker queued an alert for, the latest (their event ids)
_alerted_failures: dict[str, None] = {}  # insertion-ordered: the oldest go first


def alert_due(alerted: dict[str, None], failed: str, queued_by: str | None, keep: int = ALERTED_FAILURES_KEPT) -> bool:
    """Whether the failure of event `failed`, queued by event `queued_by`, gets the alert: not when
    it is itself the alert queued for an earlier failure, which failed the same way (its alert
    would fail again, without end). Records `failed` as alerted for, keeping the latest `keep`."""
    if queued_by is not None and queued_by in alerted:
        return False
    alerted[failed] = None
    while len(alerted) > keep:
        del alerted[next(iter(alerted))]
    return True


def _alert_due() -> bool:
    try:
        ctx = EventContext.get()
    except LookupError:  # called outside an event (tests)
        return True
    return alert_due(_alerted_failures, ctx.txid, ctx.parent_txid)


# "TypeError: <text>..." (an uncaught error) or "[SID: <sid>] state_update: <text>" (Reflex's own report).
_ERROR_NAME = re.compile(r"\s*(?:\[SID: [^\]]*\]\s*)?([A-Za-z_$][\w$]{0,40}):")


def browser_error_logged(exception: Exception) -> None:
    """rx.App's frontend_exception_handler: a page's uncaught error, reported over its websocket,
    is logged by its name alone. Its text could quote what the user typed (a PIN, a phrase), and no
    such thing may reach a log; every path of our JS that handles one catches its own errors."""
    found = _ERROR_NAME.match(str(exception))
    log.warning("a page reported an uncaught %s (its text is not logged)", found[1] if found else "error")


def server_error_event(exception: Exception) -> EventSpec | None:
    """rx.App's backend_exception_handler: an event handler's unexpected failure is logged with its
    traceback, and the user sees its code's text in their language (Reflex's own toast is
    English developer text): the database or Redis out of reach for now, or a fault of ours.

    With Redis (Reflex's state store) out of reach no event of the page can load its state, the
    alert's neither: the page is sent an event that runs in the browser alone, which shows the
    busy notice. Any other alert is an event too and may fail in turn: each failure queued the
    next alert, thousands a second, each logged. No alert is queued for the alert's own failure."""
    code = logged_code(log, "an event handler", exception)
    if isinstance(exception, RedisError) and code == "database_unavailable":
        return rx.set_value(SERVER_BUSY_FLAG, "1")
    if not _alert_due():
        return None
    return SessionState.show_server_error(code)  # type: ignore[operator]  # rx.event typing
