import pytest

from wallet_app import routes
from wallet_app.routes import redirect_for, shows_nav


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
    assert redirect_for(path, logged_in, has_address) == expected


@pytest.mark.parametrize(
    "path, logged_in, expected",
    [
        ("/", True, False),
        ("/onboarding", True, False),
        ("/home", True, True),
        ("/card", True, True),
        ("/settings", False, False),
        ("/activity", True, True),
    ],
)
def test_bottom_nav_visibility(path, logged_in, expected):
    assert shows_nav(path, logged_in) is expected


def test_nav_items_are_home_card_activity_settings():
    assert [r for r, _, _ in routes.NAV_ITEMS] == ["/home", "/card", "/activity", "/settings"]
