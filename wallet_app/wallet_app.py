"""The app: pages from routes.py, the REST API and security headers through api_transformer."""

import reflex as rx

from wallet_app import dev, routes
from wallet_app.api import build_api
from wallet_app.core.config import get_settings
from wallet_app.core.db import upgrade_schema
from wallet_app.core.security import SecurityHeaders
from wallet_app.pages import activity, card, home, login, not_found, onboarding, payment, send, settings, sign
from wallet_app.state.session import SessionState

# The schema belongs to Alembic: bring it up to date before serving anything.
upgrade_schema()

api = build_api()
if get_settings().dev_mode:
    dev.install(api)

app = rx.App(
    head_components=[
        rx.el.link(rel="manifest", href="/manifest.webmanifest"),
        rx.el.link(rel="apple-touch-icon", href="/icon-192.png"),
        rx.el.meta(name="theme-color", content="#2563eb"),
        rx.el.meta(name="viewport", content="width=device-width, initial-scale=1, viewport-fit=cover"),
        rx.el.script(src="/register-sw.js", defer=True),
    ],
    api_transformer=[api, SecurityHeaders],
)

PAGES = [  # (route, page module, page function)
    (routes.LOGIN, login, login.login_page),
    (routes.ONBOARDING, onboarding, onboarding.onboarding_page),
    (routes.HOME, home, home.home_page),
    (routes.SEND, send, send.send_page),
    (routes.ACTIVITY, activity, activity.activity_page),
    (routes.CARD, card, card.card_page),
    (routes.SIGN, sign, sign.sign_page),
    (routes.SETTINGS, settings, settings.settings_page),
    (routes.PAYMENT, payment, payment.payment_page),
]
for route, module, render in PAGES:
    # The session check first: its redirects decide before any page loads data.
    app.add_page(render, route=route, title="Newbl Wallet", on_load=[SessionState.check_session, *module.ON_LOAD])
app.add_page(not_found.not_found_page, route="404", title="Newbl Wallet", on_load=SessionState.check_session)
