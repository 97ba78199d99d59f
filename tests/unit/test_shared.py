"""core.shared on memory and on a real private Redis, and what lives there with REDIS_URL: the
API's fast refusals (core.ratelimit) and the spent login attempts (services.google), seen by
every worker (here: separate clients, as separate processes have)."""


import time

import pytest
import redis

from tests.conftest import run_async, use_env
from tests.redis_fixture import redis_server  # noqa: F401 (fixture)
from tests.waits import wait_until
from wallet_app.core import ratelimit, shared
from wallet_app.errors import AppError
from wallet_app.services import google


@pytest.fixture(params=["memory", "redis"])
def store_env(request, settings_env, monkeypatch):
    """Settings with REDIS_URL on the private Redis (flushed), or without (memory)."""
    if request.param == "redis":
        server = request.getfixturevalue("redis_server")
        redis.Redis.from_url(server.url).flushdb()
        use_env(monkeypatch, REDIS_URL=server.url)
    else:
        use_env(monkeypatch, REDIS_URL="")
    return request.param


def test_the_store_follows_redis_url(store_env):
    expected = shared.RedisMarks if store_env == "redis" else shared.MemoryMarks
    assert isinstance(shared.marks("t"), expected)


def test_mark_left_and_expiry(store_env):
    marks = shared.marks("t")
    assert marks.left("a") == 0
    marks.mark("a", 30)
    assert 29 < marks.left("a") <= 30
    marks.mark("b", 0.2)
    assert marks.left("b") > 0
    wait_until(lambda: marks.left("b") == 0)
    assert marks.left("a") > 29  # only b expired


def test_add_new_only_once_until_expired(store_env):
    marks = shared.marks("t")
    assert marks.add_new("x", 1.5)  # long enough that a loaded machine makes the second call in time
    assert not marks.add_new("x", 1.5)
    wait_until(lambda: marks.left("x") == 0)
    # Redis answers PTTL 0 during the key's last millisecond, when the key still holds: the next
    # add_new may come just before the expiry (a failure seen on CI), so it is waited for too.
    wait_until(lambda: marks.add_new("x", 30))
    assert not marks.add_new("x", 30)


def test_values_put_get_and_take_once(store_env):
    values = shared.marks("t")
    assert values.get("c") is None and values.take("c") is None
    values.put("c", '{"sub": "1"}', 30)
    assert values.get("c") == '{"sub": "1"}'
    assert values.take("c") == '{"sub": "1"}'
    assert values.take("c") is None and values.get("c") is None
    values.put("d", "v", 0.2)
    wait_until(lambda: values.get("d") is None)


def test_namespaces_are_apart(store_env):
    shared.marks("one").mark("k", 30)
    assert shared.marks("two").left("k") == 0


def test_memory_store_stays_bounded(monkeypatch):
    monkeypatch.setattr(shared, "MAX_MEMORY_KEYS", 10)
    marks = shared.MemoryMarks()
    for i in range(25):
        marks.mark(str(i), 60)
    assert len(marks._until) <= 10
    assert marks.left("24") > 0  # the newest stays


def test_redis_keys_are_seen_by_another_worker(redis_server, settings_env, monkeypatch):  # noqa: F811
    use_env(monkeypatch, REDIS_URL=redis_server.url)
    other = shared.RedisMarks(redis_server.url, "refused", redis.Redis.from_url(redis_server.url))
    run_async(ratelimit.remember_refusal(("GET", "/api/v1/me", "10.0.0.1"), 30))
    assert 29 < other.left("GET /api/v1/me 10.0.0.1") <= 30
    other.mark("POST /api/v1/x 10.0.0.2", 5)
    assert run_async(ratelimit.refused_for(("POST", "/api/v1/x", "10.0.0.2"))) == 5
    assert run_async(ratelimit.refused_for(("POST", "/api/v1/x", "10.0.0.3"))) == 0


def test_the_app_s_redis_clients_skip_client_setinfo(redis_server, settings_env, monkeypatch):  # noqa: F811
    """redis-py sends two CLIENT SETINFO on every new connection unless told not to (two more
    commands, and its own version looked up among the installed packages each time): the app's
    command clients (sync and asyncio) and the rate limiter's connect without them. Seen in the
    server's statistics: Debian's Redis 7.0 refuses the command (two ERR each connection), a
    newer one counts it."""
    use_env(monkeypatch, REDIS_URL=redis_server.url)

    def setinfos(stats: redis.Redis) -> int:
        errors = stats.info("errorstats").get("errorstat_ERR", {}).get("count", 0)
        return errors + stats.info("commandstats").get("cmdstat_client|setinfo", {}).get("calls", 0)

    stats = redis.Redis.from_url(redis_server.url, driver_info=None)
    stats.config_resetstat()
    redis.Redis.from_url(redis_server.url).ping()  # redis-py's default, to show what is counted
    assert setinfos(stats) == 2
    stats.config_resetstat()
    connections = stats.info("stats")["total_connections_received"]
    shared._client.cache_clear()
    shared.publish("nb:test", "x")
    run_async(ratelimit.remember_refusal(("GET", "/api/v1/me", "10.0.0.9"), 30))
    ratelimit.hit("payment_execute", "setinfo-test")
    assert stats.info("stats")["total_connections_received"] - connections >= 3  # new connections, all three
    assert setinfos(stats) == 0


def test_a_login_attempt_spent_on_one_worker_is_refused_on_another(redis_server, settings_env, monkeypatch):  # noqa: F811
    use_env(monkeypatch, REDIS_URL=redis_server.url)
    attempt = google.new_login_attempt()
    assert run_async(google.require_login_attempt(attempt)) == attempt
    other = shared.RedisMarks(redis_server.url, "spent_login", redis.Redis.from_url(redis_server.url))
    assert other.add_new(attempt, 600)  # the other worker signs in with it first
    with pytest.raises(AppError) as refused:
        run_async(google.require_login_attempt(attempt))
    assert refused.value.code == "login_attempt_expired"
    with pytest.raises(AppError) as again:
        run_async(google.spend_login_attempt(attempt))
    assert again.value.code == "login_attempt_expired"
    assert 590 < redis.Redis.from_url(redis_server.url).ttl(f"nb:spent_login:{attempt}") <= 600


def test_unreachable_redis_refuses_sign_in_but_not_the_api(settings_env, monkeypatch):
    use_env(monkeypatch, REDIS_URL="redis://127.0.0.1:9/0")  # nothing listens there
    attempt = google.new_login_attempt()
    for call in (google.require_login_attempt, google.spend_login_attempt):
        with pytest.raises(AppError) as refused:
            run_async(call(attempt))
        assert refused.value.code == "shared_state_unavailable"
    run_async(ratelimit.remember_refusal(("GET", "/api/v1/me", "10.0.0.1"), 30))  # logged, not raised
    assert run_async(ratelimit.refused_for(("GET", "/api/v1/me", "10.0.0.1"))) == 0


def _hit_passes(kind: str, key: str) -> bool:
    try:
        ratelimit.hit(kind, key)
    except AppError as e:
        assert e.code == "rate_limited"
        return False
    return True


@pytest.mark.parametrize("ahead", [5, -5])
def test_rate_limit_windows_go_by_redis_clock_not_each_workers(redis_server, settings_env, monkeypatch,  # noqa: F811
                                                               ahead):
    """Two workers whose clocks differ by 5 s share the counters in Redis. Stamped with each
    worker's clock (limits' own scripts), the entries of the one 5 s ahead were in the future for
    the other: a "2/second" limit met there refused the user on the other worker for 6 s
    (Retry-After 6, remembered for every worker); those of the one 5 s behind were already gone
    for the other, which let the limit through again."""
    redis.Redis.from_url(redis_server.url).flushdb()
    use_env(monkeypatch, REDIS_URL=redis_server.url, RATE_LIMIT_TX_BUILD="2/second")
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + ahead)  # the first worker's clock
    assert _hit_passes("tx_build", "user:1") and _hit_passes("tx_build", "user:1")
    monkeypatch.setattr(time, "time", real)  # the second worker's (right)
    with pytest.raises(AppError) as refused:
        ratelimit.hit("tx_build", "user:1")
    assert refused.value.params["retry_after"] == 1
    wait_until(lambda: _hit_passes("tx_build", "user:1"), 2.5, "still refused a second after the window")
