"""GET /api/v1/health, a load balancer's check: 200 while the database and (with REDIS_URL) Redis
answer; 503, naming the part, while one does not; 200 again once it is back. No session needed."""

import os
import re
import signal
import threading
import time

import redis
from starlette.testclient import TestClient

from tests.api.conftest import ORIGIN
from tests.conftest import needs_pg
from tests.db_outage import database_out_of_reach
from wallet_app.core.config import get_settings


def expected_redis() -> str:
    return "ok" if get_settings().redis_url else "unused"


def test_healthy_without_a_session(client):
    resp = client.get("/api/v1/health")
    assert (resp.status_code, resp.json()) == (200, {"database": "ok", "redis": expected_redis()})


@needs_pg  # SQLite's outage here is another process's write lock, and the check only reads
def test_the_database_out_of_reach_is_named(client, settings_env):
    with database_out_of_reach(settings_env.database_url):
        resp = client.get("/api/v1/health")
    assert (resp.status_code, resp.json()) == (503, {"database": "unavailable", "redis": expected_redis()})
    assert client.get("/api/v1/health").status_code == 200


def test_redis_not_answering_is_named_and_its_return_seen(redis_env, app, caplog):
    with TestClient(app, base_url=ORIGIN) as c, caplog.at_level("WARNING", logger="wallet_app.services.health"):
        assert c.get("/api/v1/health").json() == {"database": "ok", "redis": "ok"}
        os.kill(redis_env.proc.pid, signal.SIGSTOP)  # connections accepted, nothing answered
        for _ in range(3):
            resp = c.get("/api/v1/health")
            assert (resp.status_code, resp.json()) == (503, {"database": "ok", "redis": "unavailable"})
        os.kill(redis_env.proc.pid, signal.SIGCONT)
        redis.Redis.from_url(redis_env.url, socket_timeout=5).ping()
        for _ in range(2):
            assert c.get("/api/v1/health").json() == {"database": "ok", "redis": "ok"}
    # Logged when it went and when it came back, not at every check (a balancer asks every few seconds).
    assert [re.sub(r"\d+\.\d s", "N s", r.getMessage()) for r in caplog.records] == [
        "health: redis unavailable (TimeoutError)",
        "health: redis answers again after N s",
    ]


def test_every_shared_thread_held_is_no_database_outage(client, login, monkeypatch):
    """The sync routes' 40 shared threads all waiting (on a node that hangs, say): the check's
    database read waited for one of them its 5 s, answered 503 'database unavailable', and a
    balancer took a worker whose database was fine out of rotation."""
    from wallet_app.services import tokens

    login("health@example.com", "en")
    inside, release = [], threading.Event()

    def held(_user):
        inside.append(1)
        assert release.wait(30), "never released"
        return tokens.Balances([], [])

    monkeypatch.setattr(tokens, "asset_balances", held)
    holders = [threading.Thread(target=lambda: client.get("/api/v1/assets")) for _ in range(45)]
    try:
        for t in holders:
            t.start()
        deadline = time.monotonic() + 10
        while len(inside) < 40:
            assert time.monotonic() < deadline, f"only {len(inside)} routes hold a thread"
            time.sleep(0.01)  # polling interval, not a fixed wait
        t0 = time.monotonic()
        resp = client.get("/api/v1/health")
        assert (resp.status_code, resp.json()) == (200, {"database": "ok", "redis": expected_redis()})
        assert time.monotonic() - t0 < 2.0
    finally:
        release.set()
        for t in holders:
            t.join()
