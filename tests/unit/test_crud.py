"""crud on the test database (SQLite; PostgreSQL with TEST_DATABASE=pg) where two connections meet."""

import threading
import time

from sqlalchemy import text

from tests.conftest import ON_PG
from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.models import Payment, stored_id


def _quote() -> int:
    with get_session() as s:
        user = crud.add_user(s, "sub-1", "a@example.com", "en")
        row = crud.add_quote(s, "0x" + "ab" * 32, stored_id(user), 31337, "0xtoken", "5", "0xfrom", None)
        s.commit()
        return stored_id(row)


def _waiting_for_a_lock() -> bool:
    with get_session() as s:
        return s.connection().execute(text("SELECT count(*) FROM pg_locks WHERE NOT granted")).scalar_one() > 0


def test_of_two_concurrent_claims_exactly_one_wins(db):
    row_id = _quote()
    first = get_session()
    assert crud.claim_quote(first, row_id, "0xmerchant1", 100, "0xsig1")  # not committed yet
    second: list[bool] = []

    def claim_in_other_connection():
        with get_session() as s:
            second.append(crud.claim_quote(s, row_id, "0xmerchant2", 100, "0xsig2"))
            s.commit()

    other = threading.Thread(target=claim_in_other_connection)
    other.start()
    if ON_PG:  # the second UPDATE waits for the first transaction's row lock
        end = time.monotonic() + 10
        while not _waiting_for_a_lock():
            assert time.monotonic() < end and other.is_alive()
            time.sleep(0.02)  # polling interval, not a fixed wait
    first.commit()
    first.close()
    other.join(timeout=30)
    assert second == [False]  # it re-reads the row: no longer 'quoted'
    with get_session() as s:
        row = s.get(Payment, row_id)
        assert row is not None and (row.status, row.merchant_address) == ("pending", "0xmerchant1")
