"""The app: pages from routes.py, the REST API and security headers through api_transformer."""

import reflex as rx

from wallet_app import routes
from wallet_app.api import build_api
from wallet_app.core.db import upgrade_schema
from wallet_app.core.security import SecurityHeaders
from wallet_app.pages.card import card_page
from wallet_app.pages.home import home_page
from wallet_app.pages.login import LoginState, login_page
from wallet_app.pages.onboarding import onboarding_page
from wallet_app.pages.placeholders import activity_page, not_found_page, payment_page, send_page, sign_page
from wallet_app.pages.settings import settings_page
from wallet_app.state.session import SessionState

# The schema belongs to Alembic: bring it up to date before serving anything.
upgrade_schema()

app = rx.App(
    head_components=[
        rx.el.link(rel="manifest", href="/manifest.webmanifest"),
        rx.el.link(rel="apple-touch-icon", href="/icon-192.png"),
        rx.el.meta(name="theme-color", content="#2563eb"),
        rx.el.meta(name="viewport", content="width=device-width, initial-scale=1, viewport-fit=cover"),
        rx.el.script(src="/register-sw.js", defer=True),
    ],
    api_transformer=[build_api(), SecurityHeaders],
)

_check = SessionState.check_session
app.add_page(login_page, route=routes.LOGIN, title="Newbl Wallet", on_load=[_check, LoginState.load_config])
app.add_page(onboarding_page, route=routes.ONBOARDING, title="Newbl Wallet", on_load=_check)
app.add_page(home_page, route=routes.HOME, title="Newbl Wallet", on_load=_check)
app.add_page(send_page, route=routes.SEND, title="Newbl Wallet", on_load=_check)
app.add_page(activity_page, route=routes.ACTIVITY, title="Newbl Wallet", on_load=_check)
app.add_page(card_page, route=routes.CARD, title="Newbl Wallet", on_load=_check)
app.add_page(sign_page, route=routes.SIGN, title="Newbl Wallet", on_load=_check)
app.add_page(settings_page, route=routes.SETTINGS, title="Newbl Wallet", on_load=_check)
app.add_page(payment_page, route=routes.PAYMENT, title="Newbl Wallet", on_load=_check)
app.add_page(not_found_page, route="404", title="Newbl Wallet", on_load=_check)
