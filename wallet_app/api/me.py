"""/api/v1/me: the signed-in user's address, locale and backup flag."""

from typing import Any

from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.api.schemas import AddressIn, LocaleIn, MeOut
from wallet_app.core.ratelimit import RESPONSE_429
from wallet_app.models import stored_id
from wallet_app.services import accounts

router = v1_router("/me", tags=["me"])

_401: dict[int | str, dict[str, Any]] = {401: {"description": "no live session"}}


@router.get("", response_model=MeOut, responses=_401)
async def get_me(user: CurrentUser) -> dict:  # async: no I/O left here, so no thread hop
    return accounts.me_payload(user)


@router.post(
    "/address",
    response_model=MeOut,
    responses={
        **_401,
        400: {"description": "invalid_address or bad_checksum (services.eth)"},
        409: {"description": "wallet_changed: the account's address is not `replaces`"},
        **RESPONSE_429,
    },
)
def post_address(body: AddressIn, user: CurrentUser) -> dict:
    return accounts.me_payload(accounts.set_address(stored_id(user), body.address, body.replaces))


@router.patch("/locale", response_model=MeOut, responses=_401)
def patch_locale(body: LocaleIn, user: CurrentUser) -> dict:
    return accounts.me_payload(accounts.set_locale(stored_id(user), body.locale))
