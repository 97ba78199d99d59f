"""The API's session cache (services.sessions.api_user) never serves a revoked session or an old
user longer than documented: at once after a change made through this process, at once on every
worker with REDIS_URL (the user's version in Redis), and within SESSION_CACHE_SECONDS after a
change this process cannot hear of."""

import asyncio
import threading
import time

import redis

from tests.conftest import run_async, use_env
from tests.redis_fixture import redis_server  # noqa: F401 (fixture)
from tests.waits import wait_until
from wallet_app import crud
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_session
from wallet_app.services import sessions

EMAIL = "cache@example.com"
ADDRESS = "0x" + "ab" * 20


def me(client, cookie: str):
    return client.get("/api/v1/me", headers={"Cookie": f"nb_session={cookie}"})


def revoke_behind_the_cache(raw_token: str) -> int:
    """What another process does to the database (no user_changed here); the user's id."""
    with get_session() as db:
        row = crud.get_session_by_hash(db, sessions.hash_token(raw_token))
        row.revoked = True
        db.add(row)
        db.commit()
        return row.user_id


def signed_in(client, login, email: str = EMAIL) -> str:
    """Signs in; the session cookie, which every request below names itself."""
    login(email, "en")
    cookie = client.cookies["nb_session"]
    client.cookies.clear()
    return cookie


def cached(client, cookie: str) -> None:
    """Reads the session until this process caches it: with REDIS_URL only once its listener is
    subscribed to the change feed (before that nothing is cached)."""
    deadline = time.monotonic() + 5
    while get_settings().redis_url and sessions._listening_since is None:
        assert me(client, cookie).status_code == 200
        assert time.monotonic() < deadline, "the change feed was never subscribed"
        time.sleep(0.02)  # polling interval, not a fixed wait
    assert me(client, cookie).status_code == 200  # read after subscribing: cached


def test_sign_out_through_this_process_ends_the_session_at_once(monkeypatch, settings_env, client, login):
    use_env(monkeypatch, SESSION_CACHE_SECONDS="60")
    login(EMAIL, "en")
    cookie = client.cookies["nb_session"]
    assert me(client, cookie).status_code == 200
    assert client.post("/api/v1/auth/logout").status_code == 200
    assert me(client, cookie).status_code == 401


def test_user_changes_are_served_at_once(monkeypatch, settings_env, client, login):
    use_env(monkeypatch, SESSION_CACHE_SECONDS="60")
    cookie = signed_in(client, login)
    headers = {"Cookie": f"nb_session={cookie}"}
    assert me(client, cookie).json()["address"] is None  # now cached
    assert client.post("/api/v1/me/address", json={"address": ADDRESS}, headers=headers).status_code == 200
    assert me(client, cookie).json()["address"] == ADDRESS
    assert client.patch("/api/v1/me/locale", json={"locale": "ko"}, headers=headers).status_code == 200
    assert me(client, cookie).json()["locale"] == "ko"


def test_a_change_this_process_cannot_hear_of_is_seen_within_the_bound(monkeypatch, settings_env, client, login):
    use_env(monkeypatch, SESSION_CACHE_SECONDS="1")
    cookie = signed_in(client, login)
    cached(client, cookie)
    revoked_at = time.monotonic()
    revoke_behind_the_cache(cookie)
    assert me(client, cookie).status_code == 200  # the cache answers: what the bound is for
    while me(client, cookie).status_code != 401:
        assert time.monotonic() - revoked_at < 1.0 + 0.5, "a revoked session served past SESSION_CACHE_SECONDS"
        time.sleep(0.05)  # polling interval, not a fixed wait


def test_past_its_refresh_point_the_cache_answers_at_once_and_reads_again_behind(
    monkeypatch, settings_env, client, login
):
    """Entries cached in one burst must not all be read again in one (a stall of every request of
    the worker): past a random point in the bound's second half, a hit still answers from the
    cache, and the database read runs in the background."""
    use_env(monkeypatch, SESSION_CACHE_SECONDS="60")
    monkeypatch.setattr(sessions, "REFRESH_AFTER", (0.0, 0.0))  # refresh on every hit
    cookie = signed_in(client, login)
    cached(client, cookie)
    reading, release = threading.Event(), threading.Event()
    lookup = sessions._lookup_with_expiry

    def held_lookup(keys):
        reading.set()
        assert release.wait(10), "the held read was never released"
        return lookup(keys)

    monkeypatch.setattr(sessions, "_lookup_with_expiry", held_lookup)
    revoke_behind_the_cache(cookie)
    assert me(client, cookie).status_code == 200  # answered while its read is held
    assert reading.wait(5), "no background read started"
    release.set()
    # well within the 60 s bound
    wait_until(lambda: me(client, cookie).status_code == 401, 5, "the background read did not replace the entry")


def test_requests_of_one_session_share_a_read_unless_a_change_came_between(monkeypatch, settings_env, client, login):
    """On a saturated worker a read in a thread takes long, and every request of the session
    arriving meanwhile started its own: they now share it. A request after a sign-out heard of
    does not join a read begun before it (that read may still find the session live)."""
    use_env(monkeypatch, SESSION_CACHE_SECONDS="60")
    cookie = signed_in(client, login)
    reads: list[list[str]] = []
    release = threading.Event()
    lookup = sessions._lookup_with_expiry

    def held_lookup(keys):
        found = lookup(keys)  # what the database holds when the read begins
        reads.append(keys)
        assert release.wait(10), "the held read was never released"
        return found

    monkeypatch.setattr(sessions, "_lookup_with_expiry", held_lookup)

    async def until(condition, failure: str) -> None:
        deadline = time.monotonic() + 5
        while not condition():
            assert time.monotonic() < deadline, failure
            await asyncio.sleep(0.01)  # polling interval, not a fixed wait

    async def scenario():
        before = [asyncio.create_task(sessions.api_user(cookie)) for _ in range(5)]
        await until(lambda: len(reads) >= 1, "no read started")
        await asyncio.to_thread(sessions.revoke_session, cookie)  # a sign-out through this process
        after = asyncio.create_task(sessions.api_user(cookie))
        await until(lambda: len(reads) >= 2, "the request after the sign-out joined the read begun before it")
        release.set()
        return await asyncio.gather(*before), await after

    users_before, user_after = run_async(scenario())
    assert len(reads) == 2  # one for the five requests before the sign-out, one after it
    assert [u.email if u else None for u in users_before] == [EMAIL] * 5
    assert user_after is None
    assert me(client, cookie).status_code == 401


def test_sessions_asked_for_together_are_read_in_one_query(monkeypatch, settings_env, client, login):
    """After a restart or a quiet spell every client comes back at once: their sessions are read
    together, each request still getting its own user."""
    use_env(monkeypatch, SESSION_CACHE_SECONDS="60")
    emails = [f"together{i}@example.com" for i in range(3)]
    cookies = [signed_in(client, login, email) for email in emails]
    reads: list[list[str]] = []
    lookup = sessions._lookup_with_expiry

    def counted_lookup(keys):
        reads.append(keys)
        return lookup(keys)

    monkeypatch.setattr(sessions, "_lookup_with_expiry", counted_lookup)

    async def all_at_once():
        return await asyncio.gather(*(sessions.api_user(cookie) for cookie in cookies + cookies))

    users = run_async(all_at_once())
    assert [u.email for u in users] == emails + emails
    assert [sorted(keys) for keys in reads] == [sorted(sessions.hash_token(c) for c in cookies)]


def refresher_idle() -> None:
    wait_until(lambda: sessions._refresher is None or sessions._refresher.done(), 5, "the background reads never ended")


def test_entries_falling_due_together_are_read_again_in_one_query(monkeypatch, settings_env, client, login):
    """One background read per session every few seconds was a sixth of a worker's CPU under a
    payment burst: the hits of one REFRESH_BATCH_SECONDS are read again together."""
    use_env(monkeypatch, SESSION_CACHE_SECONDS="60")
    monkeypatch.setattr(sessions, "REFRESH_AFTER", (0.0, 0.0))  # due on every hit
    monkeypatch.setattr(sessions, "REFRESH_BATCH_SECONDS", 1.0)  # three requests well inside it
    cookies = [signed_in(client, login, f"batch{i}@example.com") for i in range(3)]
    for cookie in cookies:
        cached(client, cookie)
    refresher_idle()
    reads: list[list[str]] = []
    lookup = sessions._lookup_with_expiry

    def counted_lookup(keys):
        reads.append(sorted(keys))
        return lookup(keys)

    monkeypatch.setattr(sessions, "_lookup_with_expiry", counted_lookup)
    revoke_behind_the_cache(cookies[0])
    for cookie in cookies:
        assert me(client, cookie).status_code == 200  # all three answered from the cache
    refresher_idle()
    assert reads == [sorted(sessions.hash_token(c) for c in cookies)]
    assert [me(client, c).status_code for c in cookies] == [401, 200, 200]  # what the one read found


def test_with_redis_a_change_on_another_worker_is_seen_at_once(
    monkeypatch,
    settings_env,
    client,
    login,
    redis_server,  # noqa: F811
):
    use_env(monkeypatch, REDIS_URL=redis_server.url, SESSION_CACHE_SECONDS="60")
    cookie = signed_in(client, login)
    cached(client, cookie)  # the worker's listener subscribes on its first request
    user_id = revoke_behind_the_cache(cookie)
    assert me(client, cookie).status_code == 200  # cached: nothing told this process yet
    # Another worker's user_changed: published on its own connection to Redis.
    redis.Redis.from_url(redis_server.url).publish(sessions.CHANGES_CHANNEL, str(user_id))
    published = time.monotonic()
    while me(client, cookie).status_code != 401:
        assert time.monotonic() - published < 1.0, "another worker's change not seen within 1 s"
        time.sleep(0.01)  # polling interval, not a fixed wait


def test_with_redis_gone_nothing_is_served_from_the_cache(
    monkeypatch,
    settings_env,
    client,
    login,
):
    from tools.redisserver import RedisServer

    with RedisServer() as server:
        use_env(monkeypatch, REDIS_URL=server.url, SESSION_CACHE_SECONDS="60")
        cookie = signed_in(client, login)
        cached(client, cookie)
    # Redis stopped: the listener loses its feed and empties the cache; the database answers.
    revoke_behind_the_cache(cookie)
    wait_until(lambda: me(client, cookie).status_code == 401, 2,
               "a revoked session still served with the change feed gone")


def test_no_cache_with_zero_seconds(monkeypatch, settings_env, client, login):
    use_env(monkeypatch, SESSION_CACHE_SECONDS="0")
    cookie = signed_in(client, login)
    assert me(client, cookie).status_code == 200
    revoke_behind_the_cache(cookie)
    assert me(client, cookie).status_code == 401
