"""The same-origin guard of cookie-authenticated writes (api.deps.origin_allowed)."""

import pytest

from wallet_app.api.deps import origin_allowed

PUBLIC = "http://localhost:3000"
DEV_ALIASES = (PUBLIC, "http://127.0.0.1:3000", "http://[::1]:3000")  # settings.allowed_origins in development


@pytest.mark.parametrize(
    "method,origin,fetch_site,allowed",
    [
        ("GET", "https://evil.example", "cross-site", True),  # reads are not checked
        ("POST", PUBLIC, "same-origin", True),
        ("POST", PUBLIC + "/", None, True),
        ("PATCH", "HTTP://LOCALHOST:3000", None, True),
        ("POST", "https://evil.example", None, False),
        ("DELETE", "null", None, False),
        ("PUT", "http://localhost:3001", None, False),
        ("POST", "http://localhost", None, False),
        ("POST", None, None, True),  # non-browser client
        ("POST", None, "same-origin", True),
        ("POST", None, "none", True),
        ("POST", None, "cross-site", False),
        ("POST", None, "same-site", False),
    ],
)
def test_origin_allowed(method, origin, fetch_site, allowed):
    assert origin_allowed(method, origin, fetch_site, (PUBLIC,)) is allowed


@pytest.mark.parametrize(
    "origin,allowed",
    [
        ("http://127.0.0.1:3000", True),
        ("http://[::1]:3000", True),
        ("http://LOCALHOST:3000", True),
        ("http://127.0.0.1:3001", False),
        ("https://127.0.0.1:3000", False),
        ("http://127.0.0.2:3000", False),
    ],
)
def test_development_loopback_aliases(origin, allowed):
    assert origin_allowed("POST", origin, None, DEV_ALIASES) is allowed
    assert origin_allowed("POST", origin, None, (PUBLIC,)) is (origin.lower() == PUBLIC)
