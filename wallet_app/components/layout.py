"""The mobile page frame: one column, max 480 px, safe-area padding, bottom navigation."""

import reflex as rx
from reflex.components.core.banner import has_connection_errors

from custom_components.wallet_js.backup_ui import restore_dialog
from custom_components.wallet_js.doc_lang import document_lang
from custom_components.wallet_js.new_version import new_version_notice
from custom_components.wallet_js.wallet import device_check
from wallet_app import routes
from wallet_app.components.dialogs import alert_dialog
from wallet_app.components.ui import VISUALLY_HIDDEN
from wallet_app.i18n import error_messages, messages, page_lang, t, t_in
from wallet_app.routes import NavEntry
from wallet_app.state.session import SERVER_BUSY_FLAG, SessionState

NAV_HEIGHT = "64px"


def _nav_item(route: str, entry: NavEntry) -> rx.Component:
    active = SessionState.path == route
    return rx.link(
        rx.vstack(
            rx.icon(entry.icon, size=22),
            rx.text(t(entry.label_key), size="1", weight=rx.cond(active, "bold", "regular")),
            align="center",
            spacing="1",
        ),
        href=route,
        color=rx.cond(active, "var(--accent-11)", "var(--gray-11)"),
        underline="none",
        aria_current=rx.cond(active, "page", "false"),
        flex="1",
        min_width="0",  # four equal shares of the width, even at 200% zoom
        min_height="48px",
        display="flex",
        justify_content="center",
        align_items="center",
    )


def bottom_nav() -> rx.Component:
    from wallet_app.pages import registered_pages  # the registry imports the pages, which import this

    return rx.cond(
        SessionState.show_nav,
        rx.el.nav(
            rx.hstack(
                *[_nav_item(route, entry) for route, entry in routes.nav_items(registered_pages())],
                max_width="480px",
                margin="0 auto",
                height=NAV_HEIGHT,
                align="center",
                spacing="0",
            ),
            aria_label=t("nav_label"),
            position="fixed",
            bottom="0",
            left="0",
            right="0",
            padding_bottom="env(safe-area-inset-bottom)",
            background_color="var(--color-panel-solid)",
            border_top="1px solid var(--gray-a5)",
            z_index="10",
        ),
    )


def _notice_bottom() -> rx.Var:
    """Where a notice sits: above the navigation when there is one."""
    return rx.cond(
        SessionState.show_nav,
        f"calc({NAV_HEIGHT} + 12px + env(safe-area-inset-bottom))",
        "calc(16px + env(safe-area-inset-bottom))",
    )


def _notice(*children: rx.Component, **props) -> rx.Component:
    """A notice fixed on screen: amber, at the bottom above the navigation (the top holds each
    page's own controls)."""
    return rx.hstack(
        *children,
        align="center",
        position="fixed",
        bottom=_notice_bottom(),
        background_color="var(--amber-3)",
        color="var(--amber-11)",
        border="1px solid var(--amber-6)",
        **props,
    )


def connection_notice() -> rx.Component:
    """A short notice in the user's language while the websocket is down (a server restart, a
    network drop). Reflex retries by itself and the notice goes once it is back; it replaces
    Reflex's own connection overlay, developer text in English (removed in wallet_app.py). In
    page_lang(): a page opened offline never gets its state, and SessionState.lang stays "en".
    Announced from a live region that is on every page from the start (one added along with its
    text, as the notice is, is not always announced): the visible notice is not one itself."""
    text = t_in("reconnecting", page_lang())
    return rx.fragment(
        rx.box(rx.cond(has_connection_errors, text, ""), role="status", id="connection-status", style=VISUALLY_HIDDEN),
        rx.cond(
            has_connection_errors,
            _notice(
                rx.spinner(size="1"),
                rx.text(text, size="2", weight="medium", id="connection-notice-text"),
                id="connection-notice",
                spacing="2",
                left="50%",
                transform="translateX(-50%)",
                padding="6px 14px",
                border_radius="9999px",
                z_index="20",
            ),
        ),
    )


def server_busy_notice() -> rx.Component:
    """The database_unavailable text while the page's own state is out of reach (Redis gone). The
    server can then only send events that run in the browser (state/session.server_error_event):
    it sets the value of the flag element, the notice after it shows while the flag holds one, and
    OK empties it, in the browser too."""
    return rx.fragment(
        rx.el.output(id=SERVER_BUSY_FLAG, display="none"),
        _notice(
            rx.text(t("err_database_unavailable"), size="2", weight="medium", flex="1", id="server-busy-text"),
            rx.button(t("ok"), variant="soft", color_scheme="amber", on_click=rx.set_value(SERVER_BUSY_FLAG, "")),
            id="server-busy",
            role="alert",
            spacing="3",
            left="16px",
            right="16px",
            max_width="448px",
            margin="0 auto",
            padding="10px 14px",
            border_radius="12px",
            z_index="30",
            style={"output:empty + &": {"display": "none"}},
        ),
    )


def page(
    *children: rx.Component, title_key: str | None = None, gated: bool = True, signed_in: bool = True
) -> rx.Component:
    """Frame a page. A gated page stays hidden until the session check has run, so a redirect
    never flashes a page the user may not see. Pages outside the signed-in area (/ and
    /onboarding: signed_in=False) carry no navigation, device check or restore prompt, which
    also keeps their JavaScript small."""
    body = [rx.heading(t(title_key), size="6", as_="h1")] if title_key else []
    lang = page_lang() if gated else SessionState.lang
    content = rx.vstack(*body, *children, spacing="4", width="100%")
    return rx.fragment(
        # The page's one `main` landmark; the navigation and the dialogs sit beside it.
        rx.el.main(
            rx.cond(SessionState.checked, content, _waiting(title_key, lang)) if gated else content,
            connection_notice(),  # fixed on screen; inside main only to sit in a landmark
            server_busy_notice(),
            # A deploy: the page is of another release than the server it reached (new_version.jsx).
            new_version_notice(
                text=t_in("new_version", page_lang()),
                reload_label=t_in("reload", page_lang()),
                bottom=_notice_bottom(),
            ),
            max_width="480px",
            width="100%",
            margin="0 auto",
            padding="max(16px, env(safe-area-inset-top)) 16px",
            padding_bottom=rx.cond(
                SessionState.show_nav,
                f"calc({NAV_HEIGHT} + 24px + env(safe-area-inset-bottom))",
                "24px",
            ),
            min_height="100dvh",
        ),
        *(_signed_in_parts() if signed_in else []),
        alert_dialog(),
        # A gated page shows nothing of its own until it has its state: opened offline (the app's
        # start page from the service worker's cache) it is named in page_lang(), like its notice.
        document_lang(lang=lang, title=t_in(title_key, lang) if title_key else "", app_title=t_in("app_title", lang)),
    )


def _waiting(title_key: str | None, lang: rx.Var | str) -> rx.Component:
    """A gated page before its session check: a spinner. Opened offline (the service worker's
    copy) it never gets its state: it is named then by its h1 too, in page_lang() like its
    notice, and only once the socket has failed (has_connection_errors): the prerendered page and
    React's hydration have no h1 here, so they never meet different texts."""
    heading = rx.heading(t_in(title_key, lang), size="6", as_="h1") if title_key else rx.fragment()
    return rx.vstack(
        rx.cond(has_connection_errors, heading),
        rx.center(rx.spinner(size="3"), min_height="50vh", width="100%"),
        spacing="4",
        width="100%",
    )


def _signed_in_parts() -> list[rx.Component]:
    return [
        bottom_nav(),
        # The device check runs on every signed-in page but / and /onboarding (where nav shows).
        rx.cond(SessionState.show_nav, device_check(owner=SessionState.address, on_check=SessionState.device_checked)),
        # Its restore prompt (new device with a backup): the PIN and the Drive token stay in JS.
        rx.cond(
            SessionState.show_nav & SessionState.restore_open,
            restore_dialog(
                open=SessionState.restore_open,
                owner=SessionState.address,
                client_id=SessionState.drive_client_id,
                login_hint=SessionState.google_account,
                dev_mode=SessionState.drive_dev_mode,
                messages=messages(),
                errors=error_messages(),
                on_result=SessionState.restore_result,
                on_close=SessionState.restore_cancel,
            ),
        ),
    ]
