"""/api/v1/me: the signed-in user's address, locale and backup flag."""

from fastapi import APIRouter, HTTPException

from wallet_app.api.deps import CurrentUser
from wallet_app.api.schemas import AddressIn, LocaleIn, MeOut
from wallet_app.services import accounts

router = APIRouter(prefix="/me", tags=["me"])

_401 = {401: {"description": "no live session"}}


@router.get("", response_model=MeOut, responses=_401)
def get_me(user: CurrentUser) -> dict:
    return accounts.me_payload(user)


@router.post("/address", response_model=MeOut, responses=_401)
def post_address(body: AddressIn, user: CurrentUser) -> dict:
    try:
        return accounts.me_payload(accounts.set_address(user.id, body.address))
    except accounts.NotFound:
        raise HTTPException(status_code=401, detail="not_authenticated") from None


@router.patch("/locale", response_model=MeOut, responses=_401)
def patch_locale(body: LocaleIn, user: CurrentUser) -> dict:
    try:
        return accounts.me_payload(accounts.set_locale(user.id, body.locale))
    except accounts.NotFound:
        raise HTTPException(status_code=401, detail="not_authenticated") from None
