"""The page registry (wallet_app/pages) and the rules derived from it (wallet_app/routes.py):
the redirect rules of specification section 2 as a table, and a sample extra screen built from
the README's "Adding a screen" recipe, discovered and routed like the real ones."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest
import reflex as rx

from wallet_app import routes
from wallet_app.pages import add_pages, discover, registered_pages
from wallet_app.routes import nav_items, redirect_for, shows_nav
from wallet_app.state.session import SessionState

PAGES = registered_pages()


@pytest.mark.parametrize(
    "path, logged_in, has_address, expected",
    [
        ("/", False, False, None),
        ("/", True, False, "/onboarding"),
        ("/", True, True, "/home"),
        ("/onboarding", False, False, "/"),
        ("/onboarding", True, False, None),
        ("/onboarding", True, True, None),
        ("/home", False, False, "/"),
        ("/home", True, False, "/onboarding"),
        ("/home", True, True, None),
        ("/home/", True, True, None),
        ("/settings", False, False, "/"),
        ("/settings", True, False, None),
        ("/card", True, True, None),
        ("/activity", False, True, "/"),
        ("/sign?tx=abc", True, True, None),
        ("/payment", False, False, "/"),
        ("/nowhere", True, True, "/home"),
        ("/nowhere", True, False, "/home"),
        ("/nowhere", False, False, "/"),
        ("/404", False, False, "/"),
    ],
)
def test_redirect_rules(path, logged_in, has_address, expected):
    assert redirect_for(PAGES, path, logged_in, has_address) == expected


@pytest.mark.parametrize(
    "path, logged_in, expected",
    [
        ("/", True, False),
        ("/onboarding", True, False),
        ("/home", True, True),
        ("/card", True, True),
        ("/settings", False, False),
        ("/activity", True, True),
        ("/nowhere", True, False),
    ],
)
def test_bottom_nav_visibility(path, logged_in, expected):
    assert shows_nav(PAGES, path, logged_in) is expected


def test_registry_holds_the_specification_routes():
    assert routes.known_routes(PAGES) == {"/", "/onboarding", "/home", "/send", "/activity", "/card", "/sign",
                                          "/settings", "/payment"}


def test_nav_items_are_home_card_activity_settings():
    assert [r for r, _ in nav_items(PAGES)] == ["/home", "/card", "/activity", "/settings"]


# ---------------------------------------------------------------- a sample extra screen (README recipe)

SAMPLE_PAGE = '''
    import reflex as rx

    from wallet_app.components.layout import page
    from wallet_app.routes import NavEntry, Page
    from {package}.rewards_state import RewardsState


    def rewards_page() -> rx.Component:
        return page(rx.text(RewardsState.points), title_key=PAGE.title_key)


    PAGE = Page(route="/rewards", title_key="card_title", view=rewards_page,
                nav=NavEntry("nav_card", "gift", 5), on_load=(RewardsState.load,))
'''
SAMPLE_STATE = '''
    import reflex as rx

    from wallet_app.state.base import SignedInState


    class RewardsState(SignedInState):
        points: int = 0

        @rx.event
        async def load(self):
            if await self._require_user() is None:
                return self._to_login()
            self.points = 7
            return None
'''


@pytest.fixture(scope="module")
def sample_package(tmp_path_factory):
    """A package with one page module and its state module, as the recipe writes them."""
    root = tmp_path_factory.mktemp("sample")
    pkg = root / "sample_screens"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "rewards.py").write_text(textwrap.dedent(SAMPLE_PAGE.format(package="sample_screens")))
    (pkg / "rewards_state.py").write_text(textwrap.dedent(SAMPLE_STATE))
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("sample_screens")
    finally:
        sys.path.remove(str(root))


def test_a_sample_screen_routes_like_the_real_ones(sample_package):
    (rewards,) = discover(sample_package)  # the state module has no PAGE: only the page counts
    pages = (*PAGES, rewards)
    assert routes.known_routes(pages) == routes.known_routes(PAGES) | {"/rewards"}
    # Signed in: it stays; signed out: /; no address yet: it stays (only /home needs one).
    assert redirect_for(pages, "/rewards", True, True) is None
    assert redirect_for(pages, "/rewards", True, False) is None
    assert redirect_for(pages, "/rewards", False, False) == "/"
    assert redirect_for(PAGES, "/rewards", True, True) == "/home"  # unregistered: unknown
    assert shows_nav(pages, "/rewards", True) is True
    assert [r for r, _ in nav_items(pages)] == ["/home", "/card", "/activity", "/settings", "/rewards"]


def test_the_app_adds_a_sample_screen_with_the_session_check_first(sample_package):
    (rewards,) = discover(sample_package)
    app = rx.App()
    add_pages(app, (*PAGES, rewards))
    added = app._unevaluated_pages
    assert {"rewards", "404"} <= set(added)
    on_load = [handler.fn.__name__ for handler in added["rewards"].on_load]
    assert on_load == ["check_session", "load"]
    assert added["rewards"].on_load[0] == SessionState.check_session
    for page in PAGES:  # every real page too
        key = page.route.strip("/") or "index"
        assert added[key].on_load[0] == SessionState.check_session


def test_a_route_declared_twice_is_refused(tmp_path):
    pkg = tmp_path / "twice_screens"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    body = ("from wallet_app.routes import Page\n"
            "PAGE = Page(route='/twice', title_key='card_title', view=lambda: None)\n")
    (pkg / "a.py").write_text(body)
    (pkg / "b.py").write_text(body)
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ValueError, match="/twice"):
            discover(importlib.import_module("twice_screens"))
    finally:
        sys.path.remove(str(tmp_path))
