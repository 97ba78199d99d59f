"""core.ratelimit on the memory storage: the limit table of the settings, counting per kind and
key, retry_after, and the storage chosen by REDIS_URL (no redis-server on this machine: the
Redis storage is checked by the URI and the storage object it builds, without a connection)."""

import time

import pytest
from limits import RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.storage import MemoryStorage, RedisStorage, storage_from_string

from tests.conftest import run_async, use_env
from wallet_app.core import ratelimit, shared
from wallet_app.core.config import Settings, get_settings
from wallet_app.errors import AppError


@pytest.fixture
def run_redis():
    """This module is about the memory storage: settings_env gives it no REDIS_URL, under
    TEST_REDIS=1 too (with Redis the counters are the workers' shared ones)."""
    return None


def default(kind: str) -> str:
    """The shipped default (the tests themselves run with generous limits: tests/rate_limits_env.py)."""
    return Settings.model_fields[f"rate_limit_{kind}"].default


@pytest.mark.parametrize("kind", ratelimit.KINDS)
def test_every_kind_has_a_valid_default_a_real_user_never_meets(kind):
    items = ratelimit.limits_of(default(kind))
    assert items
    assert min(item.amount * 60 / item.get_expiry() for item in items) >= 10, kind  # per minute
    assert all(item.amount >= 2 for item in items), kind  # a double click passes


def test_the_payment_page_polling_stays_under_the_quote_limit():
    # The page polls the quote once a second after an approve: at most E + 1 quotes in E seconds.
    items = ratelimit.limits_of(default("payment_quote"))
    assert all(item.amount >= item.get_expiry() + 1 for item in items)


def test_the_tests_run_with_generous_limits(settings_env):
    assert all(getattr(settings_env, f"rate_limit_{kind}") == "100000/minute" for kind in ratelimit.KINDS)


@pytest.mark.parametrize(("spec", "expected"), [
    ("30/minute", [RateLimitItemPerMinute(30)]),
    ("5/second;150/minute", [RateLimitItemPerSecond(5), RateLimitItemPerMinute(150)]),
])
def test_limit_strings(spec, expected):
    assert ratelimit.limits_of(spec) == expected


def test_over_the_limit_raises_rate_limited_with_retry_after(settings_env, monkeypatch):
    use_env(monkeypatch, RATE_LIMIT_TOKEN_ADD="3/minute")
    for _ in range(3):
        ratelimit.hit("token_add", "user:1")
    with pytest.raises(AppError) as refused:
        ratelimit.hit("token_add", "user:1")
    assert refused.value.code == "rate_limited"
    assert refused.value.spec.status == 429
    assert 1 <= refused.value.params["retry_after"] <= 60
    # Other keys and other kinds count apart.
    ratelimit.hit("token_add", "user:2")
    ratelimit.hit("token_metadata", "user:1")


def test_the_shortest_window_decides_retry_after(settings_env, monkeypatch):
    use_env(monkeypatch, RATE_LIMIT_TX_BUILD="1/second;100/minute")
    ratelimit.hit("tx_build", "k")
    with pytest.raises(AppError) as refused:
        ratelimit.hit("tx_build", "k")
    assert refused.value.params["retry_after"] == 1
    deadline = time.monotonic() + 3
    while True:  # the one-second window passes
        try:
            ratelimit.hit("tx_build", "k")
            break
        except AppError:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_new_settings_start_fresh_counters(settings_env, monkeypatch):
    use_env(monkeypatch, RATE_LIMIT_ADDRESS="1/hour")
    ratelimit.hit("address", "user:1")
    with pytest.raises(AppError):
        ratelimit.hit("address", "user:1")
    get_settings.cache_clear()
    ratelimit.hit("address", "user:1")


def test_storage_is_memory_unless_redis_url(settings_env, monkeypatch):
    assert ratelimit.storage_uri(settings_env) == "memory://"
    assert isinstance(ratelimit._current().storage, MemoryStorage)
    use_env(monkeypatch, REDIS_URL="redis://127.0.0.1:6399/2")
    assert ratelimit.storage_uri(get_settings()) == "redis://127.0.0.1:6399/2"
    assert isinstance(storage_from_string(ratelimit.storage_uri(get_settings())), RedisStorage)


def test_unreachable_redis_counts_in_this_process(settings_env, monkeypatch):
    # Nothing listens on this port: the first action goes through (logged), and the limit still
    # holds, counted in this process's memory until Redis answers again.
    use_env(monkeypatch, REDIS_URL="redis://127.0.0.1:9/0", RATE_LIMIT_SIGN_IN="1/minute")
    ratelimit.hit("sign_in", "127.0.0.1")
    with pytest.raises(AppError) as refused:
        ratelimit.hit("sign_in", "127.0.0.1")
    assert refused.value.code == "rate_limited"
    ratelimit.hit("sign_in", "127.0.0.2")  # another client has its own count


def test_a_redis_outage_is_logged_once_and_asked_again_only_after_a_while(settings_env, monkeypatch, caplog):
    """Each ask of a Redis that is out waits out its timeout and logged a traceback: per limited
    request, while it lasted. Now: one traceback when it begins, REDIS_RETRY_SECONDS without asking,
    one line when it answers again."""
    use_env(monkeypatch, REDIS_URL="redis://127.0.0.1:9/0", RATE_LIMIT_SIGN_IN="100/minute")
    monkeypatch.setattr(ratelimit._limits_outage, "down", None)
    asked = []
    limiter = ratelimit._current()
    real_hit = limiter.hit
    monkeypatch.setattr(limiter, "hit", lambda *a: asked.append(1) or real_hit(*a))
    clock = [1000.0]
    monkeypatch.setattr(ratelimit.time, "monotonic", lambda: clock[0])
    with caplog.at_level("WARNING", logger="wallet_app.core.ratelimit"):
        for _ in range(5):
            ratelimit.hit("sign_in", "127.0.0.1")
        assert (len(asked), len(caplog.records)) == (1, 1)
        assert caplog.records[0].exc_info is not None  # the traceback, once
        clock[0] += ratelimit.REDIS_RETRY_SECONDS
        ratelimit.hit("sign_in", "127.0.0.1")  # asked again: still out, not logged again
        assert (len(asked), len(caplog.records)) == (2, 1)
        clock[0] += ratelimit.REDIS_RETRY_SECONDS
        monkeypatch.setattr(limiter, "hit", lambda *a: asked.append(1) or True)  # it answers again
        ratelimit.hit("sign_in", "127.0.0.1")
    assert [r.getMessage() for r in caplog.records] == [
        "rate limit storage unavailable; limits counted in each process until it answers",
        "rate limit storage answers again",
    ]
    assert ratelimit._limits_outage.down is None


def test_an_outage_of_the_refusals_storage_is_logged_once_and_asked_again_only_after_a_while(
    settings_env, monkeypatch, caplog
):
    """The fast refusals (api.RefuseWhileLimited) looked Redis up on every limited request and
    logged a traceback every REDIS_RETRY_SECONDS, and every refusal remembered while it was out
    logged one more. Now as the counters: one traceback, then one line when it answers again."""
    use_env(monkeypatch, REDIS_URL="redis://127.0.0.1:9/0")
    monkeypatch.setattr(ratelimit._refusals_outage, "down", None)
    asked = []
    for name in ("left_async", "mark_async"):
        real = getattr(shared.RedisMarks, name)
        monkeypatch.setattr(shared.RedisMarks, name, lambda self, *a, _real=real: asked.append(1) or _real(self, *a))
    clock = [1000.0]
    monkeypatch.setattr(ratelimit.time, "monotonic", lambda: clock[0])
    key = ("POST", "/api/v1/payment/execute", "ip:192.0.2.1")
    with caplog.at_level("WARNING", logger="wallet_app.core.ratelimit"):
        assert run_async(ratelimit.refused_for(key)) == 0
        for _ in range(3):
            run_async(ratelimit.remember_refusal(key, 30))
            assert run_async(ratelimit.refused_for(key)) == 0  # the route's own limiter decides
        assert (len(asked), len(caplog.records)) == (1, 1)
        assert caplog.records[0].exc_info is not None
        clock[0] += ratelimit.REDIS_RETRY_SECONDS
        assert run_async(ratelimit.refused_for(key)) == 0  # asked again: still out, not logged again
        assert (len(asked), len(caplog.records)) == (2, 1)
        clock[0] += ratelimit.REDIS_RETRY_SECONDS

        async def left(self, _key):
            asked.append(1)
            return 7.5

        monkeypatch.setattr(shared.RedisMarks, "left_async", left)  # it answers again
        assert run_async(ratelimit.refused_for(key)) == 8
    assert [r.getMessage() for r in caplog.records] == [
        "refusal storage unavailable; refusals not remembered until it answers",
        "refusal storage answers again",
    ]
    assert ratelimit._refusals_outage.down is None


def test_the_memory_storage_cleans_up_at_most_once_a_second_and_still_limits(monkeypatch):
    """limits' own clean-up ran every 10 ms after a hit, each time in a new thread walking every
    key: a growing share of a loaded worker. Once a second frees the memory as well; the window
    never needed it (it counts only the events inside it)."""
    use_env(monkeypatch, RATE_LIMIT_TOKEN_ADD="2/second")
    store = ratelimit._current().storage
    assert isinstance(store, ratelimit.MemoryStorage)
    passes: list[float] = []
    clean_up = MemoryStorage._MemoryStorage__expire_events  # type: ignore[attr-defined]
    monkeypatch.setattr(MemoryStorage, "_MemoryStorage__expire_events", lambda s: (passes.append(1), clean_up(s)))
    started = time.monotonic()
    refused = 0
    while time.monotonic() - started < 0.5:  # 0.5 s of hits by many keys
        for key in range(20):
            try:
                ratelimit.hit("token_add", key)
            except AppError:
                refused += 1
        time.sleep(0.005)  # pacing, not a wait for a condition
    assert len(passes) <= 1, f"{len(passes)} clean-up passes in 0.5 s"
    assert refused > 0  # 2 a second per key: the window still limits
    deadline = time.monotonic() + 5
    while True:  # allowed again once the window has moved on
        try:
            ratelimit.hit("token_add", 0)
            break
        except AppError:
            assert time.monotonic() < deadline, "still refused after the window"
            time.sleep(0.05)  # polling interval
    # That hit scheduled the next pass: it frees every expired event, keeping only that hit's.
    while sum(len(events) for events in store.events.values()) != 1:
        assert time.monotonic() < deadline, "expired events never freed"
        time.sleep(0.05)  # polling interval
