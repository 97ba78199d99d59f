"""core.ratelimit on the memory storage: the limit table of the settings, counting per kind and
key, retry_after, and the storage chosen by REDIS_URL (no redis-server on this machine: the
Redis storage is checked by the URI and the storage object it builds, without a connection)."""

import time

import pytest
from limits import RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.storage import MemoryStorage, RedisStorage, storage_from_string

from wallet_app.core import ratelimit
from wallet_app.core.config import Settings, get_settings
from wallet_app.errors import AppError


def use(monkeypatch, **env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()


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
    use(monkeypatch, RATE_LIMIT_TOKEN_ADD="3/minute")
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
    use(monkeypatch, RATE_LIMIT_TX_BUILD="1/second;100/minute")
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
    use(monkeypatch, RATE_LIMIT_ADDRESS="1/hour")
    ratelimit.hit("address", "user:1")
    with pytest.raises(AppError):
        ratelimit.hit("address", "user:1")
    get_settings.cache_clear()
    ratelimit.hit("address", "user:1")


def test_storage_is_memory_unless_redis_url(settings_env, monkeypatch):
    assert ratelimit.storage_uri(settings_env) == "memory://"
    assert isinstance(ratelimit._current().storage, MemoryStorage)
    use(monkeypatch, REDIS_URL="redis://127.0.0.1:6399/2")
    assert ratelimit.storage_uri(get_settings()) == "redis://127.0.0.1:6399/2"
    assert isinstance(storage_from_string(ratelimit.storage_uri(get_settings())), RedisStorage)


def test_unreachable_redis_does_not_refuse_users(settings_env, monkeypatch):
    # Nothing listens on this port: the action goes through (logged), it is not refused.
    use(monkeypatch, REDIS_URL="redis://127.0.0.1:9/0", RATE_LIMIT_SIGN_IN="1/minute")
    for _ in range(3):
        ratelimit.hit("sign_in", "127.0.0.1")
