"""A year of data on PostgreSQL, and the plans of the hot paths' queries over it.

Seeds a database migrated to head (alembic) with generate_series: --users users (one in
twenty without an address yet), five sign-ins each (all but the last expired), three tokens
each, --payments payments (one in five a quote never executed, lapsed), as many own activity
entries and transfers received, a webhook per paid payment; one heavy user (id 1) holds a
twentieth of the payments and entries, and a hundred thousand transfers received (a dusted
address). Then calls the app's own reads (crud, services) the way the pages, the API, the
relayer's and the indexer's passes call them, catches each SQL statement they send, and prints
EXPLAIN (ANALYZE, BUFFERS) of it with the same parameters: the plan, the time, and whether a
sequential scan or a sort is in it.

    source env.sh && python bench/growth.py [--users 100000] [--payments 1000000] [--only NAME] [--keep URL]

Without --keep it runs a throw-away PostgreSQL (tools/pgserver.py --temp); --keep URL seeds (once:
a database seeded already is used as it is) and reads the database at URL.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import event, text  # noqa: E402

CHAIN = 31337
RELAYER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
TOKENS = ("0x" + "11" * 20, "0x" + "22" * 20, "0x" + "0" * 40)
HEAVY = 1  # the user with a twentieth of everything


def hexpad(expr: str, width: int) -> str:
    """SQL: '0x' and `expr` (a bigint) in `width` hex digits."""
    return f"'0x' || lpad(to_hex({expr}), {width}, '0')"


def spread(prime: str) -> str:
    """SQL: a user id other than HEAVY for row g, spread over all users."""
    return f"2 + (g::bigint * {prime}) % (:users - 1)"


def seed(db, users: int, payments: int) -> None:
    """All rows, in a handful of INSERT ... SELECT generate_series."""
    now = int(time.time())
    year = 365 * 86400
    p = {"now": now, "year": year, "users": users, "payments": payments, "chain": CHAIN}
    heavy_share = payments // 20
    steps = [
        (
            "users",
            f"""INSERT INTO users (id, google_sub, email, locale, address, has_backup, created_at)
            SELECT g, 'sub-' || g, 'u' || g || '@example.com', 'en',
                   CASE WHEN g % 20 = 0 THEN NULL ELSE {hexpad("g", 40)} END, true, :now - :year + g
            FROM generate_series(1, :users) g""",
        ),
        (
            "sessions",
            """INSERT INTO sessions (user_id, token_hash, created_at, expires_at, revoked)
            SELECT u, md5('s' || u || '-' || k) || md5('t' || u || '-' || k),
                   :now - (5 - k) * 70 * 86400, :now - (5 - k) * 70 * 86400 + 14 * 86400 + (k / 5) * 86400 * 100,
                   k = 2
            FROM generate_series(1, :users) u, generate_series(1, 5) k""",
        ),
        (
            "user_tokens",
            """INSERT INTO user_tokens (user_id, chain_id, token_address, symbol, name, decimals, created_at)
            SELECT u, :chain, t.addr, t.sym, t.sym, 6, :now - :year
            FROM generate_series(1, :users) u,
                 (VALUES ('0x1111111111111111111111111111111111111111', 'tUSD'),
                         ('0x2222222222222222222222222222222222222222', 'tKRW'),
                         ('0x0000000000000000000000000000000000000000', 'ETH')) t(addr, sym)""",
        ),
        # Payments: g % 5 = 0 a lapsed quote; otherwise executed, mostly ok, one in 50 failed; the
        # newest 20 pending (queued or sent). The relayer's nonce is g's rank among the executed.
        (
            "payments",
            f"""INSERT INTO payments (payment_id, user_id, chain_id, token_address, amount, from_address,
                   merchant_address, deadline, signature, status, reason, relayer_address, nonce, gas_price,
                   tx_hash, settled, activity_id, sent_at, claimed_at, gas_cost_wei, created_at, updated_at)
            SELECT {hexpad("g", 64)}, u, :chain, '0x1111111111111111111111111111111111111111', (g % 1000 + 1)::text,
                   {hexpad("u", 40)},
                   CASE WHEN g % 5 = 0 THEN NULL ELSE {hexpad("1000000 + g % 500", 40)} END,
                   CASE WHEN g % 5 = 0 THEN NULL ELSE t + 300 END, CASE WHEN g % 5 = 0 THEN NULL ELSE '0xsig' END,
                   CASE WHEN g % 5 = 0 THEN 'quoted' WHEN g > :payments - 20 THEN 'pending'
                        WHEN g % 50 = 1 THEN 'failed' ELSE 'ok' END,
                   CASE WHEN g % 50 = 1 AND g % 5 <> 0 THEN 'reverted' END,
                   CASE WHEN g % 5 = 0 OR g > :payments - 10 THEN NULL ELSE '{RELAYER}' END,
                   CASE WHEN g % 5 = 0 OR g > :payments - 10 THEN NULL ELSE g - g / 5 END,
                   CASE WHEN g % 5 = 0 THEN NULL ELSE '1000000000' END,
                   CASE WHEN g % 5 = 0 OR g > :payments - 10 THEN NULL ELSE {hexpad("g", 64)} END,
                   g % 5 <> 0 AND g <= :payments - 20,
                   NULL, CASE WHEN g % 5 = 0 THEN NULL ELSE t + 1 END, CASE WHEN g % 5 = 0 THEN NULL ELSE t END,
                   CASE WHEN g % 5 = 0 THEN NULL ELSE 50000000000000 END, t, t
            FROM (SELECT g, CASE WHEN g <= {heavy_share} THEN {HEAVY} ELSE {spread("7919")} END AS u,
                         :now - :year + (g::bigint * :year) / :payments AS t
                  FROM generate_series(1, :payments) g) s""",
        ),
        # Own entries: one per executed payment (type payment) and as many sends; the newest 30
        # sends pending ('submitted'), with nonces.
        (
            "activities (own)",
            f"""INSERT INTO activities (user_id, type, chain_id, tx_hash, token_address, token_symbol,
                   token_decimals, amount, counterparty, status, created_at, data, nonce)
            SELECT u, CASE WHEN g % 2 = 0 THEN 'payment' ELSE 'transfer' END, :chain, {hexpad("g + 5000000", 64)},
                   '0x1111111111111111111111111111111111111111', 'tUSD', 6, (g % 1000 + 1)::text,
                   {hexpad("2000000 + g % 5000", 40)},
                   CASE WHEN g > :payments - 30 AND g % 2 = 1 THEN 'submitted' ELSE 'ok' END, t,
                   '{{"from": "0x"}}', CASE WHEN g % 2 = 1 THEN g / 2 END
            FROM (SELECT g, CASE WHEN g <= {heavy_share} THEN {HEAVY} ELSE {spread("7919")} END AS u,
                         :now - :year + (g::bigint * :year) / :payments AS t
                  FROM generate_series(1, :payments) g) s""",
        ),
        # Transfers received: as many again over everyone, and 100,000 dust transfers to the heavy user.
        (
            "activities (received)",
            f"""INSERT INTO activities (user_id, type, chain_id, tx_hash, token_address, token_symbol,
                   token_decimals, amount, counterparty, status, created_at, data, log_index)
            SELECT CASE WHEN g <= 100000 THEN {HEAVY} ELSE {spread("104729")} END, 'receive', :chain,
                   {hexpad("g + 9000000", 64)}, '0x2222222222222222222222222222222222222222', 'tKRW', 6, '1',
                   {hexpad("3000000 + g % 7000", 40)}, 'ok', t, '{{"block":' || g || '}}', g % 3
            FROM (SELECT g, :now - :year + (g::bigint * :year) / (:payments + 100000) AS t
                  FROM generate_series(1, :payments + 100000) g) s""",
        ),
        (
            "merchant_webhooks",
            """INSERT INTO merchant_webhooks (event_id, payload, status, attempts, next_attempt_at, created_at, sent_at)
            SELECT 'paid:' || payment_id || ':' || user_id, '{}', 'sent', 1, updated_at, updated_at, updated_at + 5
            FROM payments WHERE status = 'ok'""",
        ),
        (
            "chain_cursors",
            "INSERT INTO chain_cursors (chain_id, next_block, lease_until) VALUES (:chain, 1000000, 0)",
        ),
    ]
    for name, sql in steps:
        started = time.monotonic()
        db.execute(text("SET LOCAL session_replication_role = replica"))  # no foreign key checks
        count = db.execute(text(sql), p).rowcount
        db.commit()
        print(f"seeded {name}: {count} rows in {time.monotonic() - started:.1f} s", flush=True)
    for table in ("users", "sessions", "payments", "activities"):
        db.execute(text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"))
    db.commit()
    raw = db.connection().connection.driver_connection
    raw.autocommit = True
    raw.execute("VACUUM ANALYZE")
    raw.autocommit = False


class Caught:
    """The statements an engine sends, with their parameters (cursor level: as the server gets them)."""

    def __init__(self, engine) -> None:
        self.statements: list[tuple[str, object]] = []
        event.listen(engine, "before_cursor_execute", self._catch)

    def _catch(self, _conn, _cursor, statement, parameters, _context, _many) -> None:
        self.statements.append((statement, parameters))


def explain(engine, statement: str, parameters: object) -> list[str]:
    """EXPLAIN (ANALYZE, BUFFERS) of one statement, in a transaction rolled back (writes undone)."""
    with engine.connect() as conn:
        raw = conn.connection.driver_connection
        with raw.transaction(force_rollback=True), raw.cursor() as cur:
            cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + statement, parameters)
            return [row[0] for row in cur.fetchall()]


def probes() -> dict[str, Callable[[], object]]:
    """The hot paths' reads, each as the app calls it (a name -> a call)."""
    from wallet_app import crud
    from wallet_app.core.db import get_session
    from wallet_app.models import Activity
    from wallet_app.services import activity, merchant_webhooks, payments, pending
    from wallet_app.services import indexer as indexer_svc
    from wallet_app.services.chain import get_chains

    now = int(time.time())
    heavy_pid = "0x" + f"{5:064x}"  # a payment of the heavy user's (g = 5 is a quote, 6 executed)
    def live_hash(user: int) -> str:  # the seeded live session of this user (k = 5)
        return hashlib.md5(f"s{user}-5".encode()).hexdigest() + hashlib.md5(f"t{user}-5".encode()).hexdigest()

    due = [live_hash(u) for u in range(1000, 1000 + 500 * 97, 97)]  # a refresh batch: 500 sessions

    def with_db(call: Callable) -> Callable[[], object]:
        def run() -> object:
            with get_session() as db:
                return call(db)

        return run

    chain = next(c for c in get_chains() if c.chain_id == CHAIN)
    heavy_row = Activity(id=1, user_id=HEAVY, type="transfer", chain_id=CHAIN, nonce=12345, data="{}")
    return {
        "session lookup": with_db(lambda db: crud.active_user_for_hash(db, live_hash(HEAVY), now)),
        "session refresh (500)": with_db(lambda db: crud.active_session_users(db, due, now)),
        "activity list (heavy)": with_db(lambda db: crud.list_activities(db, HEAVY, 100)),
        "known counterparties (heavy)": lambda: activity.known_counterparties(HEAVY),
        "nonce group (heavy)": with_db(lambda db: pending._group(db, heavy_row)),
        "payment status (heavy)": with_db(lambda db: crud.payment_columns(db, HEAVY, heavy_pid)),
        "execute: claim times (heavy)": with_db(lambda db: payments._executed_in_the_hour(db, HEAVY, now)),
        "execute: claim times (user 500)": with_db(lambda db: payments._executed_in_the_hour(db, 500, now)),
        "quote: quote times (heavy)": with_db(lambda db: crud.quote_times(db, HEAVY, now - 3600)),
        "quote: open quote (heavy)": with_db(
            lambda db: crud.find_open_quote(db, HEAVY, CHAIN, TOKENS[0], "1", "0x01", None, now - 900)
        ),
        "recent payment (heavy)": with_db(
            lambda db: crud.recent_payment(db, HEAVY, CHAIN, "0x02", TOKENS[0], "1", now - 600, now - 1500)
        ),
        "order paid by others": with_db(
            lambda db: crud.order_paid_by_others(db, HEAVY, heavy_pid, CHAIN, "0x02", TOKENS[0], "1")
        ),
        "status waiters (final payments)": with_db(lambda db: crud.final_payments(db, [(HEAVY, heavy_pid)])),
        "relayer: queued": with_db(lambda db: crud.queued_payments(db, CHAIN, 100)),
        "relayer: unmined": with_db(lambda db: crud.payments_unmined(db, CHAIN)),
        "relayer: unsettled (reconcile)": with_db(lambda db: crud.unsettled_payments(db, CHAIN)),
        "relayer: max nonce": with_db(lambda db: crud.max_relayer_nonce(db, CHAIN, RELAYER)),
        "relayer: spend (hour)": with_db(lambda db: crud.relayer_spend(db, CHAIN, now - 3600)),
        "relayer: in flight": with_db(lambda db: crud.payments_in_flight(db, CHAIN, {"0x01"})),
        "indexer: watch list": with_db(lambda db: indexer_svc.watch_list(db, chain)),
        "indexer: outgoing statuses": lambda: indexer_svc.refresh_outgoing(chain, limit=100),
        "webhooks: due": lambda: merchant_webhooks.deliver_due(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--only", action="append", help="probe names containing this (repeatable)")
    parser.add_argument("--keep", help="a PostgreSQL URL to seed and read instead of a throw-away server")
    parser.add_argument("--plans", action="store_true", help="print each plan whole")
    parser.add_argument("--retention", action="store_true", help="run services.retention's pass first (deletes)")
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        url = args.keep
        if url is None:
            from tools.pgserver import PgServer

            pg = stack.enter_context(PgServer(temp=True))
            url = pg.create_database("growth")
        os.environ["DATABASE_URL"] = url
        os.environ.setdefault("MERCHANT_WEBHOOK_URL", "http://127.0.0.1:9/hook")
        os.environ.setdefault("MERCHANT_WEBHOOK_SECRET", "x" * 32)
        import json
        import tempfile

        from bench.devstack import REPO, use_dev_environment

        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        use_dev_environment(tmp, database_url=url, MERCHANT_WEBHOOK_MERCHANTS="0x" + "55" * 20)
        base = json.loads((REPO / "chains.dev.json").read_text())[0]
        addresses = {"payment_contract": "0x" + "33" * 20, "multicall_address": "0x" + "44" * 20}
        tokens = [{**t, "token_address": a} for t, a in zip(base["tokens"], TOKENS, strict=False)]
        chain = {**base, **addresses, "rpc_url": "http://127.0.0.1:9", "tokens": tokens, "payment_tokens": TOKENS[:2]}
        (tmp / "chains.json").write_text(json.dumps([chain]))
        from wallet_app.core.db import get_engine, upgrade_schema

        engine = get_engine()
        upgrade_schema(engine)
        from sqlalchemy import create_engine
        from sqlmodel import Session

        plain = create_engine(url)  # not the app's: no statement or answer timeouts
        with Session(plain) as db:
            if db.execute(text("SELECT count(*) FROM chain_cursors")).scalar_one() == 0:  # the last step
                tables = "merchant_webhooks, activities, payments, user_tokens, sessions, users"
                db.execute(text(f"TRUNCATE {tables} RESTART IDENTITY"))
                seed(db, args.users, args.payments)
        plain.dispose()
        if args.retention:
            from wallet_app.services import retention

            started = time.monotonic()
            deleted = retention.run_once()
            print(f"retention pass: {deleted} in {time.monotonic() - started:.1f} s")
            with Session(plain) as db:
                raw = db.connection().connection.driver_connection
                raw.autocommit = True
                raw.execute("VACUUM ANALYZE")
            plain.dispose()
        report = []
        for name, call in probes().items():
            if args.only and not any(o in name for o in args.only):
                continue
            caught = Caught(engine)
            try:
                call()
            except Exception as e:  # a probe that needs the chain: its statements up to there
                print(f"{name}: stopped at {type(e).__name__}: {e}"[:200])
            finally:
                event.remove(engine, "before_cursor_execute", caught._catch)
            for statement, parameters in caught.statements:
                if not statement.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE", "WITH")):
                    continue
                plan = explain(engine, statement, parameters)
                took = next((line for line in plan if line.startswith("Execution Time")), "?")
                flags = [w for w in ("Seq Scan", "Sort") if any(w in line for line in plan)]
                report.append(f"{name:38} {took:28} {' '.join(flags)}")
                print(f"\n== {name}: {' '.join(statement.split())[:300]}")
                print("\n".join(plan if args.plans else [line for line in plan if "->" in line or "Scan" in line][:12]))
        print("\n" + "\n".join(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
