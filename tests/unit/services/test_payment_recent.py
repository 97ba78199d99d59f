"""payments.recent_payment on the test database: the user's newest payment of exactly this link
(chain, merchant, token, amount) executed in the last RECENT_PAYMENT_SECONDS and not failed, which
the payment page announces before paying a link without a ref again."""

import pytest
from sqlmodel import select

from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.models import Payment, User, now_epoch, stored_id
from wallet_app.services import payments

MERCHANT, TOKEN = "0x" + "Ab" * 20, "0x" + "Cd" * 20
WINDOW = payments.RECENT_PAYMENT_SECONDS


def _user(sub: str) -> User:
    with get_session() as s:
        user = crud.add_user(s, sub, f"{sub}@example.com", "en")
        s.commit()
        s.refresh(user)
        return user


def _payment(user: User, claimed_ago: int | None, status: str = "ok", **fields) -> str:
    now = now_epoch()
    values = {"chain_id": 31337, "merchant_address": MERCHANT.lower(), "token_address": TOKEN.lower(),
              "amount": "1500000", **fields}
    with get_session() as s:
        pid = "0x" + f"{len(s.exec(select(Payment.id)).all()) + 1:064x}"
        claimed = None if claimed_ago is None else now - claimed_ago
        s.add(Payment(payment_id=pid, user_id=stored_id(user), from_address="0x" + "ee" * 20, status=status,
                      claimed_at=claimed, created_at=(claimed or now) - 5, **values))
        s.commit()
    return pid


def _recent(user: User):
    return payments.recent_payment(user, 31337, MERCHANT, TOKEN, 1_500_000)


@pytest.mark.parametrize("claimed_ago, status, fields, minutes", [
    (30, "ok", {}, 1),  # under a minute: 1 min
    (185, "pending", {}, 3),  # on its way counts
    (WINDOW - 10, "ok", {}, (WINDOW - 10) // 60),
    (WINDOW + 10, "ok", {}, None),  # long ago
    (30, "failed", {}, None),  # nothing was paid
    (None, "quoted", {}, None),  # never executed
    (30, "ok", {"amount": "1500001"}, None),  # another link
    (30, "ok", {"merchant_address": "0x" + "12" * 20}, None),
    (30, "ok", {"token_address": "0x" + "34" * 20}, None),
    (30, "ok", {"chain_id": 1}, None),
])
def test_recent_payment_of_the_same_link(db, claimed_ago, status, fields, minutes):
    user = _user("sub-r")
    pid = _payment(user, claimed_ago, status, **fields)
    assert _recent(user) == (None if minutes is None else (pid, minutes))


def test_the_newest_of_the_users_own_is_named(db):
    user, other = _user("sub-r"), _user("sub-o")
    _payment(user, 400)
    newest = _payment(user, 130, "pending")
    _payment(other, 10)  # another user's: not this user's payment
    assert _recent(user) == (newest, 2)


def test_a_payment_of_a_quote_made_before_the_window_is_named(db):
    """A quote is executable for payment_quote_ttl_seconds (and reused by a second Pay of the same
    link): one made 16 minutes ago and paid a minute ago was paid a minute ago."""
    user = _user("sub-r")
    pid = _payment(user, 60)
    with get_session() as s:
        row = s.exec(select(Payment).where(Payment.payment_id == pid)).one()
        row.created_at = now_epoch() - WINDOW - 60
        s.add(row)
        s.commit()
    assert _recent(user) == (pid, 1)
