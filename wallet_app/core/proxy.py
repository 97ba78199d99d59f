"""The client's address and scheme behind a reverse proxy (settings.trusted_proxies), as one ASGI
middleware that rewrites the request's scope before anything reads it.

Only when the TCP peer is a trusted proxy are its X-Forwarded-For and X-Forwarded-Proto believed:
the client is the right-most X-Forwarded-For entry that is not itself a trusted proxy (entries
left of it were written by the client and prove nothing), and the scheme is the one the nearest
proxy reports. Without a trusted peer both headers are ignored, so a client cannot pick the IP
its sign-in attempts are counted under (core.ratelimit.by_client_ip).
"""

from __future__ import annotations

import ipaddress
import logging

from starlette.types import ASGIApp, Receive, Scope, Send

from wallet_app.core.config import Network, get_settings, parse_networks

log = logging.getLogger(__name__)


def hop_address(hop: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP of one X-Forwarded-For entry, also as some proxies write it with the client's port
    ("198.51.100.1:5123", "[2001:db8::1]:5123", e.g. Azure's Application Gateway); None: garbage."""
    hop = hop.strip()
    if hop.startswith("["):
        hop, bracket, rest = hop[1:].partition("]")
        if not bracket or not (rest == "" or (rest[:1] == ":" and rest[1:].isdigit())):
            return None
    elif hop.count(":") == 1:  # an IPv4 address and a port (an IPv6 address has at least two)
        hop, _, port = hop.partition(":")
        if not port.isdigit():
            return None
    try:
        return ipaddress.ip_address(hop)
    except ValueError:
        return None


def unmapped(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An IPv4-mapped IPv6 address as its IPv4 address: granian listening on "::" names an IPv4
    peer ::ffff:a.b.c.d, which is that IPv4 client for the proxies and the limits alike."""
    return ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip


def _in_networks(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, networks: tuple[Network, ...]) -> bool:
    ip = unmapped(ip)
    return any(ip in net for net in networks)


def _trusted(host: str, networks: tuple[Network, ...]) -> bool:
    ip = hop_address(host)
    return ip is not None and _in_networks(ip, networks)


def forwarded_client(peer: str, forwarded_for: str | None, networks: tuple[Network, ...]) -> str | None:
    """The client's IP for a request from `peer` carrying `forwarded_for` (X-Forwarded-For, its
    headers joined by ','); None: keep the peer (not trusted, no header, or a malformed entry)."""
    if not forwarded_for or not _trusted(peer, networks):
        return None
    ip = None
    for hop in reversed(forwarded_for.split(",")):
        ip = hop_address(hop)
        if ip is None:
            return None  # garbage from a proxy we trust: count the request under the proxy
        if not _in_networks(ip, networks):
            return str(ip)
    return str(ip)  # every hop is a proxy of ours: the first one


def forwarded_scheme(peer: str, forwarded_proto: str | None, networks: tuple[Network, ...]) -> str | None:
    """'http' or 'https' from a trusted peer's X-Forwarded-Proto (its last value); else None."""
    if not forwarded_proto or not _trusted(peer, networks):
        return None
    proto = forwarded_proto.split(",")[-1].strip().lower()
    return proto if proto in ("http", "https") else None


class ForwardedFrom:
    """Sets scope["client"] and scope["scheme"] from a trusted proxy's forwarded headers. Without
    TRUSTED_PROXIES, the first request that carries X-Forwarded-For logs a warning (once per
    process): behind a proxy that setting is needed, or every client counts as the proxy."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self._warned = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and scope.get("client"):
            networks = parse_networks(get_settings().trusted_proxies)
            if networks:
                scope = _resolved(scope, networks)
            elif not self._warned and any(name == b"x-forwarded-for" for name, _ in scope["headers"]):
                self._warned = True
                log.warning(
                    "X-Forwarded-For from %s ignored: TRUSTED_PROXIES is empty. Behind a reverse proxy set it "
                    "to the proxy's address (README, Deploying), or every client counts as the proxy's IP.",
                    scope["client"][0],
                )
        await self.app(scope, receive, send)


def _resolved(scope: Scope, networks: tuple[Network, ...]) -> Scope:
    """The scope with the client and scheme a trusted peer forwarded (ASGI header names are lower case)."""
    peer, port = scope["client"]
    values: dict[bytes, list[str]] = {b"x-forwarded-for": [], b"x-forwarded-proto": []}
    for name, value in scope["headers"]:
        if name in values:
            values[name].append(value.decode("latin-1"))
    client = forwarded_client(peer, ",".join(values[b"x-forwarded-for"]), networks)
    scheme = forwarded_scheme(peer, ",".join(values[b"x-forwarded-proto"]), networks)
    if not (client or scheme):
        return scope
    scope = dict(scope)
    if client:
        scope["client"] = (client, port)
    if scheme:
        secure = scheme == "https"
        scope["scheme"] = ("wss" if secure else "ws") if scope["type"] == "websocket" else scheme
    return scope
