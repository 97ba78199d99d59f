"""/api/v1/backup: the last backup time and the browser's "backup written" signal (no secrets)."""

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel

from wallet_app.api.deps import CurrentUser
from wallet_app.services import backups
from wallet_app.services.accounts import NotFound

router = APIRouter(prefix="/backup", tags=["backup"])

_401 = {401: {"description": "no live session"}}


class BackupInfoOut(BaseModel):
    last_backup_at: int | None


class BackupTouchOut(BaseModel):
    hasBackup: bool
    last_backup_at: int


@router.get("/info", response_model=BackupInfoOut, responses=_401)
def get_info(user: CurrentUser) -> dict:
    try:
        return backups.info(user.id)
    except NotFound:
        raise HTTPException(status_code=401, detail="not_authenticated") from None


@router.post(
    "/touch", response_model=BackupTouchOut,
    responses={**_401, 409: {"description": "no wallet address registered yet"}},
)
def post_touch(user: CurrentUser) -> dict:
    try:
        return backups.touch(user.id)
    except NotFound:
        raise HTTPException(status_code=401, detail="not_authenticated") from None
    except backups.NoAddress:
        raise HTTPException(status_code=409, detail="no_address") from None
