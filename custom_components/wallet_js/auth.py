"""Python wrappers for auth.jsx: Google sign-in (code popup) and logout."""

import reflex as rx

_LIBRARY = rx.asset("auth.jsx", shared=True).importable_path
rx.asset("errors.js", shared=True)  # auth.jsx imports it; it must sit beside it in the assets


class GoogleSignIn(rx.Component):
    """Two buttons: continue with Google, and sign in with another account."""

    library = _LIBRARY
    tag = "GoogleSignIn"

    client_id: rx.Var[str]
    script_url: rx.Var[str]
    locale: rx.Var[str]
    label: rx.Var[str]
    other_label: rx.Var[str]

    # EventHandler[spec] is typed for pyright only: mypy sees a non-generic class and a call in a type.
    on_start: rx.EventHandler[rx.event.no_args_event_spec]  # type: ignore[type-arg, valid-type]
    on_cancel: rx.EventHandler[rx.event.no_args_event_spec]  # type: ignore[type-arg, valid-type]
    # (code, HTTP status or 0): the state shows the code's text, so / ships no error table.
    on_error: rx.EventHandler[rx.event.passthrough_event_spec(str, int)]  # type: ignore[type-arg, valid-type]


class LogoutButton(rx.Component):
    """POST /api/v1/auth/logout (clears the HttpOnly cookie), then a full load of /."""

    library = _LIBRARY
    tag = "LogoutButton"

    label: rx.Var[str]
    errors: rx.Var[dict[str, str]]

    on_error: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]


google_sign_in = GoogleSignIn.create
logout_button = LogoutButton.create
