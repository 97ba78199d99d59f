"""/api/v1/backup: the last backup time and the browser's "backup written" signal (no secrets)."""

from fastapi import APIRouter
from pydantic import BaseModel

from wallet_app.api.deps import CurrentUser
from wallet_app.services import backups

router = APIRouter(prefix="/backup", tags=["backup"])

_401 = {401: {"description": "no live session"}}


class BackupInfoOut(BaseModel):
    last_backup_at: int | None


class BackupTouchOut(BaseModel):
    hasBackup: bool
    last_backup_at: int


@router.get("/info", response_model=BackupInfoOut, responses=_401)
def get_info(user: CurrentUser) -> dict:
    return backups.info(user.id)


@router.post(
    "/touch", response_model=BackupTouchOut,
    responses={**_401, 409: {"description": "no wallet address registered yet"}},
)
def post_touch(user: CurrentUser) -> dict:
    return backups.touch(user.id)
