"""Backup status of a user, shared by the REST routes and the Reflex handlers.

The server never sees a backup: the browser uploads it to Drive and then calls touch().
"""

from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.models import now_epoch
from wallet_app.services import sessions
from wallet_app.services.accounts import get_user
from wallet_app.services.eth import parse_address


def info(user_id: int) -> dict:
    """{"last_backup_at": epoch seconds or None}."""
    with get_session() as db:
        return {"last_backup_at": get_user(db, user_id).last_backup_at}


def touch(user_id: int, address: str | None = None) -> dict:
    """Record that the browser has just written and verified a backup of the user's address.
    `address`: the wallet the browser backed up, when it says; a backup that took its time while
    another tab replaced the account's wallet is not that wallet's (backup_not_current), which
    would else be shown as backed up."""
    with get_session() as db:
        user = get_user(db, user_id)
        if user.address is None:
            raise AppError("no_address", "there is no wallet address a backup could be of")
        if address is not None and parse_address(address).lower() != user.address.lower():
            raise AppError("backup_not_current", "the backup is of another address than the account's")
        user.has_backup = True
        user.last_backup_at = now_epoch()
        db.add(user)
        db.commit()
        sessions.user_changed(user_id)
        return {"hasBackup": True, "last_backup_at": user.last_backup_at}
