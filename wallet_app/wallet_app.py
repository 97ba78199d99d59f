"""The app: pages from the page registry, the REST API and security headers through api_transformer."""

from __future__ import annotations

import os

import reflex as rx

# First, while few modules are loaded: each rx.asset(shared=True) in these walks the whole call
# stack through inspect, which deep inside the page imports cost about 1.5 s of every start of a
# worker (0.2 s here).
import custom_components.wallet_js.auth  # noqa: F401
import custom_components.wallet_js.backup_ui  # noqa: F401
import custom_components.wallet_js.doc_lang  # noqa: F401
import custom_components.wallet_js.focus  # noqa: F401
import custom_components.wallet_js.new_version  # noqa: F401
import custom_components.wallet_js.qr_scan  # noqa: F401
import custom_components.wallet_js.wallet  # noqa: F401
from wallet_app.api import build_api, in_front_of_reflex
from wallet_app.core.config import BUILDING_ENV, get_settings
from wallet_app.core.db import upgrade_schema
from wallet_app.core.security import SecurityHeaders
from wallet_app.core.sockets import cut_long_log_lines
from wallet_app.core.startup import freeze_startup_objects, size_handler_threads
from wallet_app.pages import add_pages, registered_pages
from wallet_app.services.sessions import SocketCookie
from wallet_app.state.session import VISIT_SCRIPT, browser_error_logged, server_error_event

# The schema belongs to Alembic: bring it up to date before serving anything (not while only
# compiling the pages: `make build`, wallet_app.build).
if not os.environ.get(BUILDING_ENV):
    upgrade_schema()

cut_long_log_lines()
api = build_api()
if get_settings().dev_mode:  # the stand-ins are not even imported otherwise
    from wallet_app import dev

    dev.install(api)

app = rx.App(
    head_components=[
        rx.el.link(rel="manifest", href="/manifest.webmanifest"),
        rx.el.link(rel="apple-touch-icon", href="/icon-192.png"),
        rx.el.meta(name="theme-color", content="#2563eb"),
        rx.el.meta(name="viewport", content="width=device-width, initial-scale=1, viewport-fit=cover"),
        rx.el.script(src="/register-sw.js", defer=True),
        rx.el.script(VISIT_SCRIPT),  # inline: runs before the app connects (allowed by hash, core/security.py)
    ],
    # SocketCookie: the session token never enters Reflex's state (services.sessions).
    api_transformer=[in_front_of_reflex(api), SecurityHeaders, SocketCookie],
    # the colour tokens (contrast at WCAG AA in both themes); prefers-reduced-motion: nothing animates
    stylesheets=["/theme.css", "/reduced_motion.css"],
    backend_exception_handler=server_error_event,
    frontend_exception_handler=browser_error_logged,
    # No toaster: nothing toasts (errors use the shared alert dialog), and Sonner's empty landmark
    # stayed on every page, named in English ("Notifications alt+T") for screen readers in ko too.
    toaster=None,
)
# engine.io's own limit on one websocket message: a longer one closes the connection, and the page
# learns the limit in the handshake (Reflex's page then reports a hydrate too big instead of sending it).
assert app.sio is not None  # made with the app (Reflex's socket.io server)
app.sio.eio.max_http_buffer_size = get_settings().socket_max_message_chars
# Reflex's connection overlay (a toast and a pulsing icon with English developer text) gives way
# to our localized notice on every page (components.layout.connection_notice).
app.app_wraps[(5, "Overlay")] = lambda _stateful: None
app.register_lifespan_task(freeze_startup_objects)  # in each worker, once the app is up
app.register_lifespan_task(size_handler_threads)
add_pages(app, registered_pages())
