"""/api/v1/backup: the last backup time and the browser's "backup written" signal (no secrets)."""

from typing import Any

from pydantic import BaseModel

from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.models import stored_id
from wallet_app.services import backups

router = v1_router("/backup", tags=["backup"])

_401: dict[int | str, dict[str, Any]] = {401: {"description": "no live session"}}


class BackupInfoOut(BaseModel):
    last_backup_at: int | None


class BackupTouchIn(BaseModel):
    address: str  # the wallet the browser backed up


class BackupTouchOut(BaseModel):
    hasBackup: bool
    last_backup_at: int


@router.get("/info", response_model=BackupInfoOut, responses=_401)
def get_info(user: CurrentUser) -> dict:
    return backups.info(stored_id(user))


@router.post(
    "/touch",
    response_model=BackupTouchOut,
    responses={
        **_401,
        400: {"description": "invalid_address"},
        409: {"description": "no wallet address registered yet, or the backup is of another (backup_not_current)"},
    },
)
def post_touch(user: CurrentUser, body: BackupTouchIn | None = None) -> dict:
    """The browser wrote and verified a backup. Without a body (the specification's call): of the
    account's address; with {address}: of that one, refused unless it is the account's."""
    return backups.touch(stored_id(user), body.address if body else None)
