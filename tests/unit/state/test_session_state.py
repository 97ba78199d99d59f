"""The shared alert across page loads (state/session.py): it belongs to the page that raised it."""

import pytest

from wallet_app.state.session import dialog_after_load


@pytest.mark.parametrize("open_, route, pending, path, expected", [
    # Raised with a redirect to /home (sign's invalid tx): shown on /home, once.
    (True, "/home", True, "/home", (True, False)),
    (True, "/home", False, "/home", (False, False)),  # a later load of /home
    (True, "/home", True, "/send", (False, False)),  # went elsewhere first
    # Raised on its own page (send validation): any next load closes it, the same page too.
    (True, "/send", False, "/send", (False, False)),
    (True, "/send", False, "/activity", (False, False)),
    (False, "/activity", True, "/activity", (False, False)),  # closed with OK before the redirect landed
])
def test_dialog_after_load(open_, route, pending, path, expected):
    assert dialog_after_load(open_, route, pending, path) == expected
