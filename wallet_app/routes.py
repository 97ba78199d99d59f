"""Route constants and the redirect rules of specification section 2 (pure, table-tested)."""

LOGIN = "/"
ONBOARDING = "/onboarding"
HOME = "/home"
SEND = "/send"
ACTIVITY = "/activity"
CARD = "/card"
SIGN = "/sign"
SETTINGS = "/settings"
PAYMENT = "/payment"

KNOWN = {LOGIN, ONBOARDING, HOME, SEND, ACTIVITY, CARD, SIGN, SETTINGS, PAYMENT}
# Pages an unauthenticated user may see; they also hide the bottom navigation.
PUBLIC = {LOGIN, ONBOARDING}
NAV_ITEMS = (  # (route, catalogue key, lucide icon)
    (HOME, "nav_home", "house"),
    (CARD, "nav_card", "credit-card"),
    (ACTIVITY, "nav_activity", "list"),
    (SETTINGS, "nav_settings", "settings"),
)


def normalize_path(path: str) -> str:
    path = (path or "/").split("?")[0].split("#")[0]
    return path.rstrip("/") or "/"


def redirect_for(path: str, logged_in: bool, has_address: bool) -> str | None:
    """Where a page load of `path` must go instead, or None to stay."""
    path = normalize_path(path)
    if path not in KNOWN:
        return HOME if logged_in else LOGIN
    if path == LOGIN:
        if not logged_in:
            return None
        return HOME if has_address else ONBOARDING
    if not logged_in:
        # /onboarding without a session goes to /, as does every other page.
        return LOGIN
    if path == HOME and not has_address:
        return ONBOARDING
    return None


def shows_nav(path: str, logged_in: bool) -> bool:
    return logged_in and normalize_path(path) not in PUBLIC
