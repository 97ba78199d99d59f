"""A Redis that stops answering (SIGSTOP: connections accepted, nothing answered) or is gone must not
stall the API: the worker's event loop keeps serving signed-in requests at once, and sign-in gets
its documented refusal (503 shared_state_unavailable) within the Redis timeouts, not a hang."""

import asyncio
import os
import re
import signal
import threading
import time

import httpx
import pytest
import redis

from tests.api.conftest import ORIGIN, start_attempt
from tests.conftest import run_async
from wallet_app.core.config import get_settings
from wallet_app.dev import idp
from wallet_app.services import sessions

BOUND_S = 2.0  # the Redis timeouts are 0.5 s: anything near this is a hang


@pytest.fixture
def signed_in(redis_env, client, login):
    login("outage@example.com", "en")
    return client


def concurrent_me(app, cookies, n=20) -> tuple[list[int], float]:
    """n GET /me at once on one event loop, as a worker receives them: statuses and seconds."""

    async def run():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=ORIGIN, cookies=cookies) as c:
            t0 = time.monotonic()
            answers = await asyncio.gather(*(c.get("/api/v1/me") for _ in range(n)))
            return [a.status_code for a in answers], time.monotonic() - t0

    return run_async(run())


def sign_in(client) -> tuple[httpx.Response, float]:
    token = idp.issue_id_token("outage@example.com", nonce=start_attempt(client))
    t0 = time.monotonic()
    resp = client.post("/api/v1/auth/google", json={"id_token": token, "locale": "en"})
    return resp, time.monotonic() - t0


@pytest.mark.parametrize("outage", ["hanging", "stopped"])
def test_redis_outage_neither_stalls_requests_nor_lets_sign_in_through(outage, signed_in, redis_env, app):
    cookies = dict(signed_in.cookies)
    statuses, _ = concurrent_me(app, cookies)
    assert statuses == [200] * 20
    if outage == "hanging":
        os.kill(redis_env.proc.pid, signal.SIGSTOP)
    else:
        redis_env.stop()
    statuses, seconds = concurrent_me(app, cookies)
    assert statuses == [200] * 20
    assert seconds < BOUND_S, f"20 concurrent /me took {seconds:.1f} s while Redis was {outage}"
    resp, seconds = sign_in(signed_in)
    assert (resp.status_code, resp.json()) == (503, {"detail": "shared_state_unavailable"})
    assert seconds < BOUND_S, f"the refused sign-in took {seconds:.1f} s while Redis was {outage}"


def test_sign_in_works_again_when_redis_answers_again(signed_in, redis_env):
    os.kill(redis_env.proc.pid, signal.SIGSTOP)
    assert sign_in(signed_in)[0].status_code == 503
    os.kill(redis_env.proc.pid, signal.SIGCONT)
    redis.Redis.from_url(redis_env.url, socket_timeout=5).ping()
    resp, _ = sign_in(signed_in)
    assert resp.status_code == 200, resp.text


@pytest.mark.parametrize("outage", ["hanging", "stopped"])
def test_limits_hold_per_process_while_redis_is_out(outage, signed_in, redis_env, monkeypatch):
    monkeypatch.setenv("RATE_LIMIT_ADDRESS", "2/minute")
    get_settings.cache_clear()
    if outage == "hanging":
        os.kill(redis_env.proc.pid, signal.SIGSTOP)
    else:
        redis_env.stop()
    # Each attempt counts, bad input or good: the third is over the limit, Redis or not.
    statuses = [signed_in.post("/api/v1/me/address", json={"address": "0x1234"}).status_code for _ in range(3)]
    assert statuses == [400, 400, 429]


def test_a_refused_session_is_remembered_in_redis_by_its_hash_only(signed_in, redis_env, monkeypatch):
    """Session tokens are kept only hashed: a 429 remembered in Redis (api.RefuseWhileLimited)
    must not put the raw token there (a Redis snapshot would then hold live sessions)."""
    monkeypatch.setenv("RATE_LIMIT_ADDRESS", "1/minute")
    get_settings.cache_clear()
    for _ in range(2):
        signed_in.post("/api/v1/me/address", json={"address": "0x1234"})
    token = signed_in.cookies[sessions.session_cookie_name()]
    keys = [k.decode() for k in redis.Redis.from_url(redis_env.url).keys("nb:refused:*")]
    assert len(keys) == 1
    assert token not in keys[0]
    assert sessions.hash_token(token) in keys[0]


def until(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)  # polling interval, not a fixed wait


@pytest.fixture
def attempts(monkeypatch) -> list[str]:
    """Counts the Redis clients made (each listener makes one per try to subscribe)."""
    made: list[str] = []
    for cls in (redis.Redis, redis.asyncio.Redis):
        real = cls.from_url

        def counted(*args, _real=real, **kwargs):
            made.append(args[0])
            return _real(*args, **kwargs)

        monkeypatch.setattr(cls, "from_url", counted)
    return made


# The warnings of the session-cache listener and the relayer's wake listener through one outage each.
LOST_AND_BACK = [
    "session cache: the change feed is lost; sessions are read from the database until it is back",
    "session cache: the change feed is back after N s",
    "queue announcements lost (Redis); the queue is read every 0.05 s",
    "queue announcements are back after N s",
]


def listeners_through(url: str, outage, caplog) -> list[str]:
    """The session-cache listener, then the relayer's wake listener, subscribed to `url`, each
    through outage(subscribed) (it returns once the listener is subscribed again): the warnings
    logged, their durations as N."""
    from wallet_app import relayer as relayer_loop

    stop = threading.Event()

    async def session_listener() -> None:
        task = asyncio.get_running_loop().create_task(sessions._listen(url))
        try:
            await asyncio.to_thread(until, lambda: sessions._listening_since is not None, "never subscribed")
            await asyncio.to_thread(outage, lambda: sessions._listening_since is not None)
        finally:
            task.cancel()

    try:
        with caplog.at_level("WARNING"):
            run_async(session_listener())
            wake = relayer_loop._Wake(stop, url)
            until(lambda: wake.subscribed, "the relayer never subscribed")
            outage(lambda: wake.subscribed)
    finally:
        stop.set()
    return [re.sub(r"after \d+\.\d s", "after N s", r.getMessage()) for r in caplog.records]


def test_the_lost_change_feed_and_queue_announcements_are_logged_once_each_way(monkeypatch, caplog, attempts):
    """Redis out: each worker's session-cache listener and the relayer's wake listener try again
    every second, and each try logged a warning (three lines a second from two workers and the
    relayer, for as long as Redis was out); its return was not logged at all."""
    from tools.redisserver import RedisServer
    from wallet_app import relayer as relayer_loop

    monkeypatch.setattr(sessions, "LISTEN_RETRY_SECONDS", 0.02)
    monkeypatch.setattr(relayer_loop, "LISTEN_RETRY_SECONDS", 0.02)
    server = RedisServer().start()

    def redis_out_and_back(subscribed) -> None:
        nonlocal server
        port = server.port
        server.stop()
        tried = len(attempts)
        until(lambda: len(attempts) >= tried + 5, "the listener stopped trying")
        server = RedisServer(port=port).start()
        until(subscribed, "never subscribed again")

    try:
        assert listeners_through(server.url, redis_out_and_back, caplog) == LOST_AND_BACK
    finally:
        server.stop()


def test_a_subscription_that_hears_nothing_is_taken_for_lost_and_made_again(monkeypatch, caplog):
    """A subscription's connection can die without a word (a frozen Redis here: SIGSTOP, so the
    socket stays open and nothing answers). The session-cache listener read on for good and kept
    serving from the cache as if other workers' sign-outs would reach it; the relayer kept waiting
    for announcements. Each now pings a quiet subscription and, hearing nothing, takes it for lost
    (cache unused, the queue read on a timer) and subscribes again once Redis answers."""
    from tools.redisserver import RedisServer
    from wallet_app import relayer as relayer_loop
    from wallet_app.core import shared

    monkeypatch.setattr(shared, "LISTEN_PING_SECONDS", 0.2)
    monkeypatch.setattr(sessions, "LISTEN_RETRY_SECONDS", 0.02)
    monkeypatch.setattr(relayer_loop, "LISTEN_RETRY_SECONDS", 0.02)
    server = RedisServer().start()

    def frozen_and_thawed(subscribed) -> None:
        # A healthy quiet subscription first: its pongs keep it (a false "lost" would add lines).
        time.sleep(3 * shared.LISTEN_PING_SECONDS)
        os.kill(server.proc.pid, signal.SIGSTOP)
        try:
            until(lambda: not subscribed(), "a frozen Redis still counted as subscribed", timeout=5)
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
        until(subscribed, "never subscribed again", timeout=5)

    try:
        assert listeners_through(server.url, frozen_and_thawed, caplog) == LOST_AND_BACK
    finally:
        server.stop()
