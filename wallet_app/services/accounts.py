"""Account operations shared by the REST routes and the Reflex handlers (no HTTP between them).

Inputs are validated here, since Reflex handlers can be called with anything.
"""

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from wallet_app import crud
from wallet_app.core import extensions, ratelimit
from wallet_app.core.db import get_session, lock_until_commit
from wallet_app.errors import AppError
from wallet_app.models import User
from wallet_app.services import eth, sessions

LOCALES = ("ko", "en")


def normalize_locale(value: object) -> str:
    if value not in LOCALES:
        raise AppError("invalid_locale", "locale must be 'ko' or 'en'")
    return value


def id_of(user: User | int) -> int | None:
    """The id of a User or of an id (None for anything else)."""
    found = user if isinstance(user, int) and not isinstance(user, bool) else getattr(user, "id", None)
    return found if isinstance(found, int) else None


def hit(kind: str, user: User | int) -> None:
    """One rate-limited action of the signed-in user (core.ratelimit, counted per user id)."""
    ratelimit.hit(kind, f"user:{id_of(user)}")


def get_user(db: Session, user: User | int) -> User:
    """The user's current row (a User or its id); not_authenticated when it no longer exists
    (deleted while a session was live)."""
    found = id_of(user)
    row = crud.get_user(db, found) if found is not None else None
    if row is None:
        raise AppError("not_authenticated", "the user no longer exists")
    return row


def load_user(user: User | int) -> User:
    with get_session() as db:
        return get_user(db, user)


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
            sessions.user_changed(user.id)
        return user


def set_address(user_id: int, address: object, replaces: object = None) -> User:
    """Register the wallet address (stored lowercase). A different address starts without a
    backup (backups are per address); the address hooks (core.extensions) hear of it.

    `replaces`: the account's address as the page that created the wallet knew it ("" for none).
    When the account has another by now, wallet_changed and nothing changes: a page left open on
    /onboarding (another tab) registered its wallet over the one the account had since, without the
    replacement's confirmation, or over another Google account's signed in since in the browser
    (the session cookie is the browser's, not the tab's), whose account then showed a wallet that
    the first account's PIN opens."""
    hit("address", user_id)
    address = eth.parse_address(address).lower()
    expected = None if replaces is None else (eth.parse_address(replaces).lower() if replaces else "")
    with get_session() as db:
        # Two tabs registering at once: the second reads the first's address, not the one before it.
        lock_until_commit(db, f"address:{user_id}")
        user = get_user(db, user_id)
        if expected is not None and (user.address or "") not in (expected, address):
            raise AppError("wallet_changed", "the account's address is not the one the page replaces")
        if user.address != address:
            user.address = address
            user.has_backup = False
            user.last_backup_at = None
            db.add(user)
            db.commit()
            db.refresh(user)
            sessions.user_changed(user_id)
            extensions.address_registered(address)
        return user


def set_locale(user_id: int, locale: str) -> User:
    locale = normalize_locale(locale)
    with get_session() as db:
        user = get_user(db, user_id)
        user.locale = locale
        db.add(user)
        db.commit()
        db.refresh(user)
    sessions.user_changed(user_id)
    return user


def logout(raw_token: str | None) -> bool:
    """Revoke the session of this cookie token; False when there was none."""
    return sessions.revoke_session(raw_token or "")
