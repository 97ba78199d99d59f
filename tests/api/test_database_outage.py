"""The database out of reach for a while (PostgreSQL restarting or failing over, or SQLite's write
lock held past the busy timeout): a request answers 503 {"detail": "database_unavailable"} with
Retry-After, not a 500 with a traceback's text, and once the database is back the same app
serves again without a restart. On PostgreSQL a request waiting on a lock someone holds gives up
after the lock timeout, with the same answer. An unexpected fault answers 500
{"detail": "internal_error"}."""

import threading
import time
from collections.abc import Callable

import psycopg
import pytest
import sqlalchemy.exc
from sqlalchemy.engine import make_url
from starlette.testclient import TestClient

from tests.api.conftest import ORIGIN
from tests.conftest import needs_pg
from tests.db_outage import database_out_of_reach
from wallet_app.api import DATABASE_RETRY_SECONDS, build_api
from wallet_app.core import db as db_module


@pytest.fixture
def client(app):
    # The error handler's answer is what is tested: the server's re-raise (for its log) is not.
    with TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN}, raise_server_exceptions=False) as c:
        yield c


def test_a_database_out_of_reach_answers_503_and_the_app_recovers(client, login, settings_env):
    login("outage@example.com", "en")
    with database_out_of_reach(settings_env.database_url):
        refused = client.patch("/api/v1/me/locale", json={"locale": "ko"})
    assert (refused.status_code, refused.json(), refused.headers.get("retry-after")) == (
        503, {"detail": "database_unavailable"}, str(DATABASE_RETRY_SECONDS))
    assert client.get("/api/v1/me").json()["locale"] == "en"  # nothing half written

    back = client.patch("/api/v1/me/locale", json={"locale": "ko"})
    assert (back.status_code, back.json()["locale"]) == (200, "ko")


@pytest.fixture(scope="module")
def faulty_client():
    api = build_api()

    @api.get("/fault/{kind}")
    def fault(kind: str) -> None:
        if kind == "database":
            raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("server closed the connection"))
        raise RuntimeError("secret detail of a fault")

    with TestClient(api, raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("kind, status, body, retry_after", [
    ("database", 503, {"detail": "database_unavailable"}, str(DATABASE_RETRY_SECONDS)),
    ("other", 500, {"detail": "internal_error"}, None),
])
def test_an_unexpected_failure_answers_one_code_and_never_its_text(faulty_client, kind, status, body, retry_after):
    resp = faulty_client.get(f"/fault/{kind}")
    assert (resp.status_code, resp.json(), resp.headers.get("retry-after")) == (status, body, retry_after)
    assert "secret" not in resp.text and "closed" not in resp.text


HOLD_S = 15.0


@pytest.fixture
def short_lock_timeout(monkeypatch):
    """PG_LOCK_TIMEOUT_MS at 1 s for the connections this test's app opens (set before its first)."""
    monkeypatch.setattr(db_module, "PG_LOCK_TIMEOUT_MS", 1000)


def assert_refused_in_time(client, hold: Callable[[], object], release: Callable[[], object]) -> None:
    """While `hold` is in force, a write is answered 503 database_unavailable before HOLD_S, when
    `release` would have let it through (without a bound it waits until then); once released, the
    app serves it."""
    timer = threading.Timer(HOLD_S, release)
    try:
        hold()
        timer.start()
        t0 = time.monotonic()
        refused = client.patch("/api/v1/me/locale", json={"locale": "ko"})
        waited = time.monotonic() - t0
    finally:
        timer.cancel()
        release()
    assert (refused.status_code, refused.json()) == (503, {"detail": "database_unavailable"})
    assert waited < HOLD_S
    assert client.patch("/api/v1/me/locale", json={"locale": "ko"}).json()["locale"] == "ko"


@needs_pg
def test_a_request_waiting_on_a_held_lock_fails_in_time_and_the_app_serves_on(short_lock_timeout, client, login,
                                                                             settings_env):
    # An operator's transaction left open on the users table: the request gives up after the lock
    # timeout (503), not holding its thread for as long as the lock is held.
    login("locked@example.com", "en")
    holder = psycopg.connect(make_url(settings_env.database_url).set(drivername="postgresql").render_as_string(False))
    # The lock timeout (1 s here) ends the wait, not the holder.
    assert_refused_in_time(client, lambda: holder.execute("LOCK TABLE users IN ACCESS EXCLUSIVE MODE"), holder.close)


def test_requests_refused_for_the_database_are_counted_in_a_line_a_minute_not_a_traceback_each(monkeypatch, caplog):
    """Each went through the server's error middleware, which re-raised it for the server to log
    with its traceback: about 180 lines per request, thousands for a PostgreSQL restart under
    ordinary traffic (make run-scale: 6 requests while it was down wrote 1,100 lines)."""
    import wallet_app.api as api_module

    api = build_api()

    @api.get("/fault/database")
    def fault() -> None:
        raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("connection refused"))

    monkeypatch.setattr(api_module, "_outage_log", api_module._OutageLog())
    # raise_server_exceptions on: a re-raise for the server's log fails the request here.
    with TestClient(api) as c, caplog.at_level("WARNING", logger="wallet_app.api"):
        for _ in range(5):
            resp = c.get("/fault/database")
            assert (resp.status_code, resp.json()) == (503, {"detail": "database_unavailable"})
        api_module._outage_log._next = 0.0  # a minute on
        assert c.get("/fault/database").status_code == 503
    line = "GET /fault/database: out of reach (OperationalError: connection refused); {} request(s) answered 503 " \
           "database_unavailable since the last such line"
    assert [r.getMessage() for r in caplog.records] == [line.format(1), line.format(5)]


@needs_pg
def test_a_database_server_that_stops_answering_fails_requests_in_time(client, login, settings_env, monkeypatch):
    """A server that answers nothing (paused VM, stalled disk, an old primary gone silent) cannot
    enforce its own timeouts: a request waited for its answer until the server came back."""
    import psutil

    from tools.pgserver import shared_temp_server

    login("frozen@example.com", "en")
    monkeypatch.setattr(db_module._AnswerBounded, "answer_timeout", 1.0)
    postmaster = psutil.Process(shared_temp_server().proc.pid)
    server = [postmaster, *postmaster.children(recursive=True)]
    assert_refused_in_time(
        client, lambda: [proc.suspend() for proc in server], lambda: [proc.resume() for proc in server]
    )
