"""The base of every signed-in page state: the error alert and notices (the session check,
_require_user, is SessionState's: the language switch of every page makes it too).

A page state subclasses SignedInState (a substate of SessionState), so the session's vars and
these helpers are its own. They are underscore-named: Reflex makes every public state method
an event any browser can call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import reflex as rx

from wallet_app.errors import AppError, unexpected_code
from wallet_app.state.session import SessionState

T = TypeVar("T")


def load_or_keep(log: logging.Logger, what: str, load: Callable[[], T | None], empty: T) -> T | None:
    """A page's list, read by load(). None while the database is out of reach (a restart, a
    failover; one warning line): the page keeps what it shows, since an empty list would read as
    nothing there (no tokens, no activity) and end a pending send's polling. `empty` on any other
    failure (its traceback logged): a failed list load shows an empty list (specification section 8)."""
    try:
        return load()
    except Exception as e:  # noqa: BLE001 - any failure: a list, never a broken page
        if unexpected_code(e) == "database_unavailable":
            log.warning("%s: the database is out of reach (%s)", what, type(e).__name__)
            return None
        log.exception("%s failed", what)
        return empty


class SignedInState(SessionState):
    def _fail(self, error: AppError, title: str | None = None, redirect_to: str = "", prefix: str = ""):
        """The shared alert with the code's registry text (its params filled in) and title;
        `prefix`: a catalogue key put before it ('amount format error: ' + the parser's text).
        With `redirect_to` the alert shows on that page; the returned event goes there."""
        if error.code == "not_authenticated":
            return self._to_login()
        spec = error.spec
        self._show_dialog(
            spec.key, title=title or spec.title, params=error.params, for_route=redirect_to, prefix=prefix
        )
        if redirect_to:
            return rx.redirect(redirect_to)
        return None

    def _notify(self, key: str, detail: str = "", ok_route: str = "", for_route: str = "") -> None:
        self._show_dialog(key, detail, ok_route=ok_route, for_route=for_route)
