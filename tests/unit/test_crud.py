"""crud on the test database (SQLite; PostgreSQL with TEST_DATABASE=pg) where two connections meet."""

import threading
import time

from sqlalchemy import text
from sqlmodel import select

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


def test_group_commit_writes_a_burst_in_few_transactions_and_fails_only_the_bad_write(db):
    """payments.GroupCommit: threads claiming quotes at once each get their answer once their
    write is committed, in far fewer transactions than writes; a write that raises
    fails alone (its batch is rolled back and written again one write at a time)."""
    from sqlalchemy import event

    from wallet_app.services.payments import GroupCommit

    with get_session() as s:
        user = crud.add_user(s, "sub-g", "g@example.com", "en")
        ids = [stored_id(crud.add_quote(s, "0x" + f"{i:064x}", stored_id(user), 31337, "0xt", "5", "0xf", None))
               for i in range(50)]
        s.commit()
    commits: list[int] = []
    event.listen(db, "commit", lambda conn: commits.append(1))
    group = GroupCommit()

    def burst(row_ids: list[int], bad: int | None) -> dict[int, object]:
        start, results = threading.Barrier(len(row_ids)), {}

        def claim(row_id: int) -> None:
            def job(s):
                if row_id == bad:
                    raise ValueError("bad write")
                return crud.claim_quote(s, row_id, "0xmerchant", 100, "0xsig")
            start.wait()
            try:
                results[row_id] = group.write(job)
            except ValueError as e:
                results[row_id] = str(e)

        threads = [threading.Thread(target=claim, args=(i,)) for i in row_ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    assert burst(ids[:40], None) == {i: True for i in ids[:40]}
    assert len(commits) <= 10
    assert burst(ids[40:], ids[45]) == {i: ("bad write" if i == ids[45] else True) for i in ids[40:]}
    with get_session() as s:
        statuses = {stored_id(p): p.status for p in s.exec(select(Payment))}
    assert statuses == {i: ("quoted" if i == ids[45] else "pending") for i in ids}
