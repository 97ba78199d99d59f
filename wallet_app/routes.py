"""The page registry's declaration type and the rules derived from it (pure, table-tested).

Each page module declares one `PAGE = Page(...)`; wallet_app.pages.registered_pages() collects
them. From that sequence come the known routes, the redirect rules of specification section 2,
where the bottom navigation shows, and its items. Nothing here is a hand-kept list of routes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

# The routes other code links to or redirects to (the specification fixes them).
LOGIN = "/"
ONBOARDING = "/onboarding"
HOME = "/home"
SEND = "/send"
ACTIVITY = "/activity"
CARD = "/card"
SIGN = "/sign"
SETTINGS = "/settings"
PAYMENT = "/payment"

# public: anyone; a signed-in user is sent on (to /home, or /onboarding without an address).
# session: needs a session, even one without an address yet; no navigation (/onboarding).
# signed_in: needs a session; the wallet frame (bottom navigation, device check).
Access = Literal["public", "session", "signed_in"]


@dataclass(frozen=True)
class NavEntry:
    label_key: str  # catalogue key of the label
    icon: str  # lucide icon name
    position: int  # left to right in the bottom navigation


@dataclass(frozen=True)
class Page:
    route: str
    title_key: str  # catalogue key of the page heading
    view: Callable[[], Any]  # () -> rx.Component
    access: Access = "signed_in"
    nav: NavEntry | None = None
    on_load: tuple = ()  # the page's own on_load events; the session check always runs first
    needs_address: bool = False  # without a wallet address yet, go to /onboarding


def normalize_path(path: str) -> str:
    path = (path or "/").split("?")[0].split("#")[0]
    return path.rstrip("/") or "/"


def find(pages: Sequence[Page], path: str) -> Page | None:
    path = normalize_path(path)
    return next((p for p in pages if p.route == path), None)


def known_routes(pages: Sequence[Page]) -> set[str]:
    return {p.route for p in pages}


def redirect_for(pages: Sequence[Page], path: str, logged_in: bool, has_address: bool) -> str | None:
    """Where a page load of `path` must go instead, or None to stay."""
    target = find(pages, path)
    if target is None:
        return HOME if logged_in else LOGIN
    if target.access == "public":
        if not logged_in:
            return None
        return HOME if has_address else ONBOARDING
    if not logged_in:
        return LOGIN
    if target.needs_address and not has_address:
        return ONBOARDING
    return None


def shows_nav(pages: Sequence[Page], path: str, logged_in: bool) -> bool:
    target = find(pages, path)
    return logged_in and target is not None and target.access == "signed_in"


def nav_items(pages: Sequence[Page]) -> list[tuple[str, NavEntry]]:
    """(route, entry) of the bottom navigation, in position order."""
    entries = [(p.route, p.nav) for p in pages if p.nav is not None]
    return sorted(entries, key=lambda item: item[1].position)
