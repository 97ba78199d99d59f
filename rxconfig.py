import reflex as rx
from reflex_base.config import get_state_auto_setters

from wallet_app.core.config import SettingsError, get_settings

try:
    settings = get_settings()
except SettingsError as e:  # every reflex process reads this file first: one paragraph, no traceback
    raise SystemExit(f"{e}") from None

config = rx.Config(
    app_name="wallet_app",
    telemetry_enabled=False,
    # Reflex's default reflects any Origin with credentials; only our own origin(s) may connect.
    cors_allowed_origins=list(settings.allowed_origins),
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="blue", radius="large", appearance="inherit"))],
    disable_plugins=[rx.plugins.SitemapPlugin],
    show_built_with_reflex=False,
    # With REDIS_URL Reflex keeps every client's state in Redis (its Redis state manager), so any
    # worker serves any event and a restarted worker loses nothing; without it, the one worker's.
    redis_url=settings.redis_url,
)

# With auto setters every state var gets a set_<var> event, and any client can call any event
# with any value: the signed-in address, the flags a page checks. Only explicit, checked setters.
if get_state_auto_setters():
    raise SystemExit(
        "Refusing to start: REFLEX_STATE_AUTO_SETTERS is on, which would let any browser set any "
        "state var of the wallet (its address, its flags): leave it unset."
    )
