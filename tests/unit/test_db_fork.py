"""core.db after fork: granian's workers fork from the process that imported the app (and ran
upgrade_schema there), so a worker must open its own connections, never use its parent's pooled
ones (two processes on one PostgreSQL socket mix up the protocol)."""

import os
import select

from wallet_app.core.db import get_engine


def test_a_forked_process_uses_none_of_its_parents_pooled_connections(db):
    engine = get_engine()
    with engine.connect() as conn:
        conn.exec_driver_sql("SELECT 1")
    assert engine.pool.checkedin() == 1  # the parent's connection waits in the pool
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave at once (no test teardown here)
        try:
            pooled = get_engine().pool.checkedin()
            with get_engine().connect() as conn:
                conn.exec_driver_sql("SELECT 1")
            os.write(write_end, f"{pooled} ok".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    ready, _, _ = select.select([read_end], [], [], 30)
    answer = os.read(read_end, 64).decode() if ready else "no answer in 30 s"
    os.waitpid(pid, 0)
    assert answer == "0 ok"
    with engine.connect() as conn:  # the parent's own connection still serves it
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1
