"""Row-level reads and writes. Callers own the Session and the commit."""

from sqlmodel import Session, select

from wallet_app.models import User, UserSession


def get_user(db: Session, user_id: int) -> User | None:
    return db.get(User, user_id)


def get_user_by_sub(db: Session, google_sub: str) -> User | None:
    return db.exec(select(User).where(User.google_sub == google_sub)).first()


def add_user(db: Session, google_sub: str, email: str, locale: str) -> User:
    user = User(google_sub=google_sub, email=email, locale=locale)
    db.add(user)
    db.flush()
    return user


def add_session(db: Session, user_id: int, token_hash: str, expires_at: int) -> UserSession:
    row = UserSession(user_id=user_id, token_hash=token_hash, expires_at=expires_at)
    db.add(row)
    db.flush()
    return row


def get_session_by_hash(db: Session, token_hash: str) -> UserSession | None:
    return db.exec(select(UserSession).where(UserSession.token_hash == token_hash)).first()


def active_user_for_hash(db: Session, token_hash: str, now: int) -> User | None:
    """The user of a session that is neither revoked nor expired."""
    stmt = (
        select(User)
        .join(UserSession, UserSession.user_id == User.id)
        .where(
            UserSession.token_hash == token_hash,
            UserSession.revoked == False,  # noqa: E712 (SQL expression)
            UserSession.expires_at > now,
        )
    )
    return db.exec(stmt).first()
