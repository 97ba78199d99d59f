"""The base of every signed-in page state: the error alert and notices (the session check,
_require_user, is SessionState's: the language switch of every page makes it too).

A page state subclasses SignedInState (a substate of SessionState), so the session's vars and
these helpers are its own. They are underscore-named: Reflex makes every public state method
an event any browser can call.
"""

from __future__ import annotations

import reflex as rx

from wallet_app.errors import AppError
from wallet_app.state.session import SessionState


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
