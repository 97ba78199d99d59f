import reflex as rx

from wallet_app.core.config import get_settings

config = rx.Config(
    app_name="wallet_app",
    telemetry_enabled=False,
    # Reflex's default reflects any Origin with credentials; only our own origin may connect.
    cors_allowed_origins=[get_settings().public_origin],
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="blue", radius="large", appearance="inherit"))],
    disable_plugins=[rx.plugins.SitemapPlugin],
    show_built_with_reflex=False,
)
