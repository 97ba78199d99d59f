"""Extension points: what production code calls without knowing who fills it in.

wallet_app.dev.install() fills them in development (the faucet's address hook, its identity
provider, the dev merchant link, anvil's relayer key, the faucet as a sender the indexer hides);
in production they keep their defaults (no hooks, Google, no merchant link, no relayer key, no
hidden sender). Production code never imports
wallet_app.dev: it asks here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

GOOGLE_ISSUER = "https://accounts.google.com"


@dataclass(frozen=True)
class IdentityProvider:
    """An OpenID provider with Google's shapes (discovery at issuer + /.well-known/...)."""

    issuer: str
    accepted_issuers: tuple[str, ...]  # the `iss` values its ID tokens may carry
    gsi_script_url: str  # Google Identity Services (or a stand-in with the same API)
    client_id: str
    client_secret: str


_address_hooks: list[Callable[[str], object]] = []
_identity_provider: Callable[[], IdentityProvider | None] | None = None
_merchant_link: Callable[[], str] | None = None
_relayer_key: Callable[[], str | None] | None = None
_hidden_senders: Callable[[], frozenset[str]] | None = None


def reset() -> None:
    """Back to the production defaults (tests)."""
    global _identity_provider, _merchant_link, _relayer_key, _hidden_senders
    _address_hooks.clear()
    _identity_provider = _merchant_link = _relayer_key = _hidden_senders = None


# ---- a wallet address was registered (accounts.set_address)


def add_address_hook(hook: Callable[[str], object]) -> None:
    if hook not in _address_hooks:
        _address_hooks.append(hook)


def remove_address_hook(hook: Callable[[str], object]) -> None:
    if hook in _address_hooks:
        _address_hooks.remove(hook)


def address_registered(address: str) -> None:
    for hook in list(_address_hooks):
        try:
            hook(address)
        except Exception:  # a hook must never fail a registration
            log.exception("address hook %s failed", getattr(hook, "__name__", hook))


# ---- the identity provider (services.google)


def set_identity_provider(provider: Callable[[], IdentityProvider | None]) -> None:
    """`provider()` answers None to fall back to Google."""
    global _identity_provider
    _identity_provider = provider


def identity_provider(google_client_id: str, google_client_secret: str) -> IdentityProvider:
    provider = _identity_provider() if _identity_provider else None
    return provider or IdentityProvider(
        issuer=GOOGLE_ISSUER,
        # Google documents both forms of `iss` in its ID tokens.
        accepted_issuers=(GOOGLE_ISSUER, "accounts.google.com"),
        gsi_script_url="https://accounts.google.com/gsi/client",
        client_id=google_client_id,
        client_secret=google_client_secret,
    )


# ---- a ready-made merchant link offered on /card ("" when none)


def set_merchant_link(provider: Callable[[], str]) -> None:
    global _merchant_link
    _merchant_link = provider


def merchant_link() -> str:
    return _merchant_link() if _merchant_link else ""


# ---- the relayer's key when RELAYER_PRIVATE_KEY is not set


def set_relayer_key(provider: Callable[[], str | None]) -> None:
    global _relayer_key
    _relayer_key = provider


def relayer_key() -> str | None:
    return _relayer_key() if _relayer_key else None


# ---- senders whose transactions the incoming-transfer indexer does not show (services.indexer)


def set_hidden_senders(provider: Callable[[], frozenset[str]]) -> None:
    global _hidden_senders
    _hidden_senders = provider


def hidden_senders() -> frozenset[str]:
    """Lowercase addresses; production: none."""
    return _hidden_senders() if _hidden_senders else frozenset()
