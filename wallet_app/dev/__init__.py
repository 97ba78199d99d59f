"""Development stand-ins, installed by one call made only in development mode:

    if get_settings().dev_mode:
        dev.install(api)

It mounts the identity provider (/dev-idp) and the Drive stand-in (/dev-drive) on the API and
fills the extension points of wallet_app.core.extensions: the faucet's address hook, the
identity provider, the dev merchant link of /card, anvil's relayer key and the faucet's account
as a sender the incoming-transfer indexer hides. Each of them
checks development mode again when called, so a process that also serves non-dev settings
(the tests) never uses them there.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from wallet_app.api.deps import add_routes
from wallet_app.core import extensions
from wallet_app.core.config import ANVIL_PUBLIC_KEYS, get_settings
from wallet_app.dev import drive, faucet, idp, merchant

# anvil's account #1 (funded by anvil's genesis, not the deployer #0): a public key, dev only.
DEV_RELAYER_KEY = ANVIL_PUBLIC_KEYS[1]
# The faucet sends with contracts.deploy's deployer key, anvil's account #0.
FAUCET_ADDRESS = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"
# bench/load.py's ceiling (DEV_BENCH_CEILING=1): a bare Starlette route in the same process.
CEILING_PATH = "/dev-bench/ceiling"


def _identity_provider() -> extensions.IdentityProvider | None:
    if not get_settings().dev_mode:
        return None
    return extensions.IdentityProvider(
        issuer=idp.issuer(),
        accepted_issuers=(idp.issuer(),),
        gsi_script_url=idp.PREFIX + "/gsi/client",
        client_id=idp.DEV_CLIENT_ID,
        client_secret=idp.DEV_CLIENT_SECRET,
    )


def _merchant_link() -> str:
    return merchant.merchant_link() if get_settings().dev_mode else ""


def _relayer_key() -> str | None:
    return DEV_RELAYER_KEY if get_settings().dev_mode else None


def hidden_senders() -> frozenset[str]:
    """The dev faucet's account (anvil #0, the deployer): what it sends a new wallet (gas and test
    tokens) is set-up, not the user's activity; a new user's list starts empty."""
    return frozenset({FAUCET_ADDRESS}) if get_settings().dev_mode else frozenset()


async def _ceiling(_request: Request) -> PlainTextResponse:
    # No dependency, session or database: what the app's process and its middleware cost alone.
    return PlainTextResponse("ok")


def install(api: FastAPI) -> None:
    settings = get_settings()
    if settings.dev_mode and settings.dev_bench_ceiling:
        api.router.routes.append(Route(CEILING_PATH, _ceiling, methods=["GET"]))
    add_routes(api, idp.build_router())
    add_routes(api, drive.build_router())
    extensions.add_address_hook(faucet.on_address_registered)
    extensions.set_identity_provider(_identity_provider)
    extensions.set_merchant_link(_merchant_link)
    extensions.set_relayer_key(_relayer_key)
    extensions.set_hidden_senders(hidden_senders)
