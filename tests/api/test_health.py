"""GET /api/v1/health, a load balancer's check: 200 while the database and (with REDIS_URL) Redis
answer; 503, naming the part, while one does not; 200 again once it is back. No session needed."""

import os
import signal

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


def test_redis_not_answering_is_named_and_its_return_seen(redis_env, app):
    with TestClient(app, base_url=ORIGIN) as c:
        assert c.get("/api/v1/health").json() == {"database": "ok", "redis": "ok"}
        os.kill(redis_env.proc.pid, signal.SIGSTOP)  # connections accepted, nothing answered
        resp = c.get("/api/v1/health")
        assert (resp.status_code, resp.json()) == (503, {"database": "ok", "redis": "unavailable"})
        os.kill(redis_env.proc.pid, signal.SIGCONT)
        redis.Redis.from_url(redis_env.url, socket_timeout=5).ping()
        assert c.get("/api/v1/health").json() == {"database": "ok", "redis": "ok"}
