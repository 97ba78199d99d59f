"""Account operations shared by the REST routes and the Reflex handlers (no HTTP between them).

Inputs are validated here, since Reflex handlers can be called with anything.
"""

import re

from sqlalchemy.exc import IntegrityError

from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.models import User
from wallet_app.services import sessions

LOCALES = ("ko", "en")
_ADDRESS_RE = re.compile(r"0x[0-9a-fA-F]{40}")


class NotFound(Exception):
    """The user does not exist (deleted while a session was live)."""


def normalize_address(value: object) -> str:
    """'0x' + 40 hex digits (any case) -> lowercase; ValueError otherwise."""
    if not isinstance(value, str) or not _ADDRESS_RE.fullmatch(value):
        raise ValueError("address must be 0x followed by 40 hex digits")
    return value.lower()


def normalize_locale(value: object) -> str:
    if value not in LOCALES:
        raise ValueError("locale must be 'ko' or 'en'")
    return value  # type: ignore[return-value]


def me_payload(user: User) -> dict:
    return {"address": user.address, "locale": user.locale, "hasBackup": user.has_backup}


def login_user(google_sub: str, email: str, locale: str) -> User:
    """Find or create the user of a verified Google identity.

    The locale only seeds a new account: afterwards the stored locale decides.
    """
    locale = normalize_locale(locale)
    with get_session() as db:
        user = crud.get_user_by_sub(db, google_sub)
        if user is None:
            try:
                user = crud.add_user(db, google_sub, email, locale)
                db.commit()
                return user
            except IntegrityError:
                # Two first logins at once: the other one created the row.
                db.rollback()
                user = crud.get_user_by_sub(db, google_sub)
                if user is None:
                    raise
        if user.email != email:
            user.email = email
            db.add(user)
            db.commit()
            db.refresh(user)
        return user


def set_address(user_id: int, address: str) -> User:
    """Register the wallet address. A different address starts without a backup
    (backups are per address)."""
    address = normalize_address(address)
    with get_session() as db:
        user = crud.get_user(db, user_id)
        if user is None:
            raise NotFound()
        if user.address != address:
            user.address = address
            user.has_backup = False
            user.last_backup_at = None
            db.add(user)
            db.commit()
            db.refresh(user)
            _faucet_hook(address)
        return user


def _faucet_hook(address: str) -> None:
    """Dev only: fund a newly registered address with gas and test tokens (in the background)."""
    import logging

    from wallet_app.services import faucet

    try:
        faucet.on_address_registered(address)
    except Exception:  # the faucet must never fail a registration
        logging.getLogger(__name__).exception("dev faucet hook failed")


def set_locale(user_id: int, locale: str) -> User:
    locale = normalize_locale(locale)
    with get_session() as db:
        user = crud.get_user(db, user_id)
        if user is None:
            raise NotFound()
        user.locale = locale
        db.add(user)
        db.commit()
        db.refresh(user)
        return user


def logout(raw_token: str | None) -> bool:
    """Revoke the session of this cookie token; False when there was none."""
    return sessions.revoke_session(raw_token or "")
