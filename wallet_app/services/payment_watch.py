"""Waiting for a payment to become final: GET /payment/status?wait=N and the payment page hold
their status read until the payment is ok or failed, or N seconds have passed, so the payer
sees it as soon as the relayer has settled it rather than at the next 1 s poll.

One watch per event loop (a worker's), for every waiter of that process: with REDIS_URL it
listens on CHANNEL, where the relayer process announces each payment it made final with its
status (announce_final, called by services.relayer), and wakes that payment's waiters at once; a
query of every watched payment every REDIS_POLL_SECONDS catches a message lost while
(re)subscribing. Without Redis (or while it is unreachable) the query runs every DB_POLL_SECONDS
instead: one query per process for all waiters, never one per waiter. Either way the waiter is
handed the final answer and does not read the row again. The watch runs only while someone waits.

The other direction, web workers to the relayer process: announce_queued() after execute has
queued a payment wakes the relayer (wallet_app.relayer) to send it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref

import redis.asyncio
from redis import RedisError

from wallet_app import crud
from wallet_app.core import shared
from wallet_app.core.config import get_settings
from wallet_app.core.db import read_session
from wallet_app.core.threads import in_status_thread
from wallet_app.models import Payment

log = logging.getLogger(__name__)

CHANNEL = "nb:payments:final"  # message: JSON {id, user, status, reason} of a payment the relayer made final
QUEUED_CHANNEL = "nb:payments:queued"  # message: a chain id where execute queued a payment (wakes the relayer)
DB_POLL_SECONDS = 0.05  # without Redis: how soon a final status is seen (as often as the relayer looks for queued ones)
REDIS_POLL_SECONDS = 1.0  # with Redis: the query behind the messages
MAX_WAIT_SECONDS = 25.0  # GET /payment/status?wait=: under common proxies' 30 s idle timeout


def status_answer(status: str, reason: str | None) -> dict:
    """What GET /payment/status answers for a payment row in this state."""
    if status == "ok":
        return {"status": "ok"}
    if status == "failed":
        return {"status": "failed", "reason": reason or "failed"}
    return {"status": "pending"}


# A waiter's payment: (user id, payment id). A payment id is the user's own (a merchant link's ref
# is the payment id of each user who pays it): another user's payment of the same ref, settled,
# must not end this user's wait with its status.
Key = tuple[int, str]


def final_answers(keys: list[Key]) -> dict[Key, dict]:
    with read_session() as db:
        return {key: status_answer(*row) for key, row in crud.final_payments(db, keys).items()}


def parse_announcement(data: bytes) -> tuple[str, int | None, dict | None]:
    """A CHANNEL message -> (payment_id, user id, its answer); without its user or a status (an
    older relayer's message, a bare payment_id) -> (payment_id, None, None): every waiter of that
    payment id reads its own row."""
    text = data.decode(errors="replace")
    try:
        fields = json.loads(text)
        pid, user, reason = str(fields["id"]), fields.get("user"), fields.get("reason")
        if not isinstance(user, int) or isinstance(user, bool):
            return pid, None, None
        return pid, user, status_answer(str(fields["status"]), reason if isinstance(reason, str) else None)
    except (ValueError, TypeError, KeyError, AttributeError):
        return text, None, None


class _Waiter:
    __slots__ = ("event", "answer")

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.answer: dict | None = None  # the final status, when the watch knows it


class _Watch:
    """The waiters of one event loop, by payment (Key), and the task that wakes them."""

    def __init__(self) -> None:
        self.waiters: dict[Key, set[_Waiter]] = {}
        self.task: asyncio.Task | None = None

    def add(self, key: Key) -> _Waiter:
        waiter = _Waiter()
        self.waiters.setdefault(key, set()).add(waiter)
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._serve())
        return waiter

    def remove(self, key: Key, waiter: _Waiter) -> None:
        waiters = self.waiters.get(key)
        if waiters is not None:
            waiters.discard(waiter)
            if not waiters:
                del self.waiters[key]

    def wake(self, key: Key, answer: dict | None) -> None:
        for waiter in self.waiters.get(key, ()):
            waiter.answer = answer
            waiter.event.set()

    def announced(self, payment_id: str, user: int | None, answer: dict | None) -> None:
        """A CHANNEL message (parse_announcement's): its payment's waiters, or without its user every
        waiter of the payment id, with no answer (each reads its own row)."""
        if user is not None:
            self.wake((user, payment_id), answer)
            return
        for key in [k for k in self.waiters if k[1] == payment_id]:
            self.wake(key, None)

    async def _poll(self) -> None:
        keys = list(self.waiters)
        if keys:
            for key, answer in (await in_status_thread(final_answers, keys)).items():
                self.wake(key, answer)

    async def _serve(self) -> None:
        pubsub = await _subscribe()
        try:
            last = 0.0  # the first query right away: what became final before the subscription
            while self.waiters:
                every = REDIS_POLL_SECONDS if pubsub is not None else DB_POLL_SECONDS
                if time.monotonic() - last >= every:
                    last = time.monotonic()
                    try:
                        await self._poll()
                    except Exception:  # a database hiccup: the waiters time out or the next query finds it
                        log.exception("payment status watch: the query failed")
                left = max(0.0, every - (time.monotonic() - last))
                if pubsub is None:
                    await asyncio.sleep(left)
                    continue
                try:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
                except (RedisError, OSError):
                    log.warning("payment status watch: Redis lost; the database is asked every %s s", DB_POLL_SECONDS)
                    await _close(pubsub)
                    pubsub = None
                    continue
                if message is not None and isinstance(message.get("data"), bytes):
                    self.announced(*parse_announcement(message["data"]))
        finally:
            # Before any await: a waiter added from here on starts a new task.
            if self.task is asyncio.current_task():
                self.task = None
            await _close(pubsub)


async def _subscribe() -> redis.asyncio.client.PubSub | None:
    url = get_settings().redis_url
    if not url:
        return None
    client = redis.asyncio.Redis.from_url(url, **shared.LISTEN_OPTIONS)
    pubsub = client.pubsub()
    try:
        await asyncio.wait_for(pubsub.subscribe(CHANNEL), 2 * shared.REDIS_TIMEOUT_SECONDS)
    except (RedisError, OSError, TimeoutError):
        log.warning("payment status watch: no Redis; the database is asked every %s s", DB_POLL_SECONDS)
        await _close(pubsub)
        return None
    return pubsub


async def _close(pubsub: redis.asyncio.client.PubSub | None) -> None:
    if pubsub is not None:
        with contextlib.suppress(Exception):
            await pubsub.aclose()
            await pubsub.connection_pool.disconnect()


_watches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watch] = weakref.WeakKeyDictionary()


def _watch() -> _Watch:
    return _watches.setdefault(asyncio.get_running_loop(), _Watch())


async def until_final(key: Key, wait: float, read):
    """read() (a blocking status read, run in a status thread) now and, while it answers pending, the
    final answer the watch is handed once the payment is ok or failed, or read()'s pending answer
    after `wait` seconds."""
    if wait <= 0:
        return await in_status_thread(read)
    watch = _watch()
    waiter = watch.add(key)  # before the first read: a change right after it still wakes us
    try:
        out = await in_status_thread(read)
        if out.get("status") != "pending":
            return out
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiter.event.wait(), min(wait, MAX_WAIT_SECONDS))
        if not waiter.event.is_set():
            return out
        return waiter.answer if waiter.answer is not None else await in_status_thread(read)
    finally:
        watch.remove(key, waiter)


def announce_final(rows: list[Payment]) -> None:
    """The relayer's side: these payments became final (after its commit). Published on CHANNEL
    with their status, with REDIS_URL (one pipeline); without Redis the watches' query finds them."""
    url = get_settings().redis_url
    if not url or not rows:
        return
    messages = [
        json.dumps({"id": r.payment_id, "user": r.user_id, "status": r.status, "reason": r.reason}) for r in rows
    ]
    try:
        shared.publish(CHANNEL, *messages)
    except RedisError:  # the waiters' query finds them within REDIS_POLL_SECONDS
        log.warning("final payments not announced (Redis): %s", len(rows))


def announce_queued(chain_id: int) -> None:
    """execute's side: a payment is queued (after its commit), so the relayer process sends it
    now rather than at its next pass (wallet_app.relayer listens with REDIS_URL)."""
    if not get_settings().redis_url:
        return
    try:
        shared.publish(QUEUED_CHANNEL, str(chain_id))
    except RedisError:  # the relayer's next pass sends it
        log.warning("queued payment not announced (Redis)")
