"""services.payment_watch on the test database: a status wait ends when the payment becomes
final, through the relayer's Redis announcement or, without Redis or with Redis gone, through
the watch's own query."""

import socket
import threading

import pytest
from sqlalchemy import update

from tests.conftest import run_async
from tests.redis_fixture import redis_server  # noqa: F401 (fixture)
from tests.waits import wait_until
from wallet_app import crud
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_session
from wallet_app.models import Payment, stored_id
from wallet_app.services import payment_watch

PID = "0x" + "5a" * 32
KEY: tuple[int, str] = (0, PID)  # the waiter's (user id, payment id), set by _pending_payment


def _pending_payment(sub: str = "sub-w") -> tuple[int, str]:
    global KEY
    with get_session() as s:
        user = crud.add_user(s, sub, f"{sub}@example.com", "en")
        row = crud.add_quote(s, PID, stored_id(user), 31337, "0xt", "5", "0xf", None)
        assert crud.claim_quote(s, stored_id(row), "0xm", 100, "0xsig")
        s.commit()
        KEY = (stored_id(user), PID)
    return KEY


READS: list[dict] = []  # what each _status() call answered


def _status() -> dict:
    with get_session() as s:
        row = crud.get_payment(s, *KEY)
    assert row is not None
    READS.append(payment_watch.status_answer(row.status, row.reason))
    return READS[-1]


def _settle(announce: bool, status: str = "ok", reason: str | None = None) -> None:
    """What the relayer does once the waiter is there and has read the row (pending): the row made
    final, then announced. (Settled between the waiter's start and its read, the read itself
    would find it final: a loaded machine did that now and then.)"""
    wait_until(lambda: READS and any(KEY in w.waiters for w in list(payment_watch._watches.values())), 10,
               "nobody waits")
    with get_session() as s:
        row_id = crud.get_payment(s, *KEY).id
        s.execute(update(Payment).where(Payment.id == row_id).values(status=status, reason=reason))
        s.commit()
        row = crud.get_payment(s, *KEY)
    if announce:
        payment_watch.announce_final([row])


def _wait_while(settle: threading.Thread, seconds: float) -> dict:
    async def wait() -> dict:
        return await payment_watch.until_final(KEY, seconds, _status)

    settle.start()
    try:
        return run_async(wait())
    finally:
        settle.join()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("final, answer", [
    (("ok", None), {"status": "ok"}),
    (("failed", "expired"), {"status": "failed", "reason": "expired"}),
])
@pytest.mark.parametrize("redis_state", ["none", "up", "down"])
def test_a_wait_ends_when_the_payment_is_final(db, monkeypatch, request, redis_state, final, answer):
    if redis_state == "up":
        monkeypatch.setenv("REDIS_URL", request.getfixturevalue("redis_server").url)
        # Only the announcement can end the wait in time: the watch's query is pushed out of reach.
        monkeypatch.setattr(payment_watch, "REDIS_POLL_SECONDS", 600.0)
    elif redis_state == "down":
        monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{_closed_port()}/0")
    else:
        monkeypatch.setenv("REDIS_URL", "")
    get_settings.cache_clear()
    _pending_payment()
    assert run_async(payment_watch.until_final(KEY, 0.2, _status)) == {"status": "pending"}  # held, then pending
    READS.clear()
    settle = threading.Thread(target=_settle, args=(redis_state == "up", *final))
    assert _wait_while(settle, 30) == answer
    # The watch hands the waiter the final answer (the announcement's, or its query's): one read.
    assert READS == [{"status": "pending"}]
    assert not any(w.waiters for w in list(payment_watch._watches.values()))


def test_a_wait_of_zero_only_reads(db):
    _pending_payment()
    assert run_async(payment_watch.until_final(KEY, 0, _status)) == {"status": "pending"}
    assert not payment_watch._watches or not any(w.waiters for w in list(payment_watch._watches.values()))


@pytest.mark.parametrize("data, parsed", [
    (b'{"id": "0xab", "user": 3, "status": "ok", "reason": null}', ("0xab", 3, {"status": "ok"})),
    (b'{"id": "0xab", "user": 3, "status": "failed", "reason": "dropped"}',
     ("0xab", 3, {"status": "failed", "reason": "dropped"})),
    (b'{"id": "0xab", "user": 3, "status": "failed"}', ("0xab", 3, {"status": "failed", "reason": "failed"})),
    # Without its user (an older relayer's): every waiter of the id reads its own row.
    (b'{"id": "0xab", "status": "ok", "reason": null}', ("0xab", None, None)),
    (b'{"id": "0xab", "user": "3", "status": "ok"}', ("0xab", None, None)),
    (b'{"id": "0xab", "user": true, "status": "ok"}', ("0xab", None, None)),
    (b"0xab", ("0xab", None, None)),  # an older relayer's bare id: the waiter reads the row
    (b'{"status": "ok"}', ('{"status": "ok"}', None, None)),
    (b'["0xab", "ok"]', ('["0xab", "ok"]', None, None)),
    (b'"0xab"', ('"0xab"', None, None)),
    (b'{"id": "0xab", "user": 3, "status": "failed", "reason": 5}',
     ("0xab", 3, {"status": "failed", "reason": "failed"})),
    (b"\xff\xfe", ("\ufffd\ufffd", None, None)),  # not UTF-8: no waiter has that id
])
def test_announcements_are_parsed(data, parsed):
    assert payment_watch.parse_announcement(data) == parsed


@pytest.mark.parametrize("redis_state", ["none", "up"])
def test_another_users_payment_of_the_same_id_does_not_end_the_wait(db, monkeypatch, request, redis_state):
    """A merchant link's ref is the payment id of each user who pays it: a stranger's payment of the
    same ref made final must not answer this user's wait (the page said 'Payment failed.' for a
    payment still on its way, or 'done' for one that then failed)."""
    if redis_state == "up":
        monkeypatch.setenv("REDIS_URL", request.getfixturevalue("redis_server").url)
        monkeypatch.setattr(payment_watch, "REDIS_POLL_SECONDS", 600.0)  # only the announcements count
    else:
        monkeypatch.setenv("REDIS_URL", "")
    get_settings.cache_clear()
    polls = []
    real_answers = payment_watch.final_answers
    monkeypatch.setattr(payment_watch, "final_answers", lambda keys: polls.append(keys) or real_answers(keys))
    other = _pending_payment("sub-other")
    _pending_payment("sub-mine")  # the waiter's (KEY)
    READS.clear()

    def settle() -> None:
        wait_until(lambda: READS and any(KEY in w.waiters for w in list(payment_watch._watches.values())), 10,
                   "nobody waits")
        with get_session() as s:
            stranger = crud.get_payment(s, *other)
            s.execute(update(Payment).where(Payment.id == stranger.id).values(status="failed", reason="expired"))
            s.commit()
            s.refresh(stranger)
        if redis_state == "up":
            payment_watch.announce_final([stranger])
        else:
            seen = len(polls)
            wait_until(lambda: len(polls) >= seen + 2, 10, "the watch's query did not run")  # it saw the stranger's
        _settle(redis_state == "up", "ok")  # then the waiter's own

    assert _wait_while(threading.Thread(target=settle), 30) == {"status": "ok"}
