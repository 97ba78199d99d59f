"""Behind a reverse proxy (core/proxy.py, TRUSTED_PROXIES): only a trusted peer's X-Forwarded-For
is believed, so the sign-in limit per client IP counts the real client; a spoofed header from
anyone else changes nothing."""

import pytest
from starlette.testclient import TestClient

from tests.api.conftest import ORIGIN
from wallet_app.core.config import get_settings

SIGN_IN = "/api/v1/auth/google"
PROXY = ("10.0.0.5", 40000)


@pytest.fixture
def limited(db, monkeypatch):
    """Sign-in limited to 2 a minute per client IP; set TRUSTED_PROXIES with trust()."""
    monkeypatch.setenv("RATE_LIMIT_SIGN_IN", "2/minute")

    def trust(spec: str) -> None:
        monkeypatch.setenv("TRUSTED_PROXIES", spec)
        get_settings.cache_clear()

    trust("")
    return trust


def sign_in(app, peer, forwarded_for: str | None = None) -> int:
    """One sign-in attempt (a garbage token: the attempt is what counts) from TCP peer `peer`."""
    headers = {"Origin": ORIGIN} | ({"X-Forwarded-For": forwarded_for} if forwarded_for else {})
    with TestClient(app, base_url=ORIGIN, client=peer) as c:
        return c.post(SIGN_IN, json={"id_token": "garbage", "locale": "en"}, headers=headers).status_code


def test_without_trusted_proxies_a_spoofed_forwarded_for_changes_nothing(app, limited):
    peer = ("203.0.113.9", 5000)
    assert sign_in(app, peer, "198.51.100.1") == 401
    assert sign_in(app, peer, "198.51.100.2") == 401
    # A third "client" named by the header is still the same peer, over its limit.
    assert sign_in(app, peer, "198.51.100.3") == 429
    assert sign_in(app, peer) == 429


def test_a_trusted_proxy_counts_each_forwarded_client(app, limited):
    limited("10.0.0.0/8, ::1")
    assert sign_in(app, PROXY, "198.51.100.1") == 401
    assert sign_in(app, PROXY, "198.51.100.1") == 401
    assert sign_in(app, PROXY, "198.51.100.1") == 429
    # Another client behind the same proxy has its own count (and is not caught by the
    # refusal remembered for the first: api.RefuseWhileLimited sees the client too).
    assert sign_in(app, PROXY, "198.51.100.2") == 401
    # What a client writes left of the proxy's entry is not believed.
    assert sign_in(app, PROXY, "192.0.2.77, 198.51.100.1") == 429
    # A chain of trusted proxies: the right-most untrusted hop is the client.
    assert sign_in(app, PROXY, "198.51.100.1, 10.1.2.3") == 429
    assert sign_in(app, PROXY, "198.51.100.3, 10.1.2.3") == 401


def test_a_peer_outside_trusted_proxies_is_not_believed(app, limited):
    limited("10.0.0.0/8")
    outsider = ("203.0.113.9", 5000)
    assert sign_in(app, outsider, "198.51.100.1") == 401
    assert sign_in(app, outsider, "198.51.100.2") == 401
    assert sign_in(app, outsider, "198.51.100.3") == 429
    # The proxy's clients are unaffected by the outsider's count.
    assert sign_in(app, PROXY, "203.0.113.9") == 429  # ... except the outsider itself, via the proxy
    assert sign_in(app, PROXY, "198.51.100.1") == 401


def test_an_ipv6_client_counts_by_its_64(app, limited):
    # One host or subscriber holds a whole /64: a new address per request is still the same client.
    assert sign_in(app, ("2001:db8:1:2::1", 5000)) == 401
    assert sign_in(app, ("2001:db8:1:2:aaaa::7", 5000)) == 401
    assert sign_in(app, ("2001:db8:1:2:ffff:ffff:ffff:ffff", 5000)) == 429
    assert sign_in(app, ("2001:db8:1:3::1", 5000)) == 401  # the next /64 is another client


def test_an_ipv4_mapped_address_counts_as_its_ipv4_address(app, limited):
    # A dual-stack socket's IPv4 peers; all of them share one /64 (::ffff:0:0/96).
    assert sign_in(app, ("::ffff:198.51.100.7", 5000)) == 401
    assert sign_in(app, ("198.51.100.7", 5000)) == 401
    assert sign_in(app, ("::ffff:198.51.100.7", 5000)) == 429
    assert sign_in(app, ("::ffff:198.51.100.8", 5000)) == 401


def test_a_trusted_proxy_forwarding_ipv6_clients_counts_their_64(app, limited):
    limited("10.0.0.0/8")
    assert sign_in(app, PROXY, "2001:db8::1") == 401
    assert sign_in(app, PROXY, "2001:db8::2") == 401
    assert sign_in(app, PROXY, "2001:db8::3") == 429


def test_a_trusted_proxy_seen_on_a_dual_stack_socket_is_believed(app, limited):
    # Listening on "::", granian names an IPv4 peer by its IPv4-mapped address.
    limited("10.0.0.0/8")
    mapped_proxy = ("::ffff:10.0.0.5", 40000)
    assert sign_in(app, mapped_proxy, "198.51.100.1") == 401
    assert sign_in(app, mapped_proxy, "198.51.100.1") == 401
    assert sign_in(app, mapped_proxy, "198.51.100.1") == 429
    assert sign_in(app, mapped_proxy, "198.51.100.2") == 401  # another client, not the proxy's one count
