"""The relayer on its own: `python -m wallet_app.relayer` (started by `make run` next to the web
server) passes over every payment chain on a timer, and at once when a web worker has queued a
payment (announced on Redis with REDIS_URL, else seen by a cheap query of the queue): it relays
the payments the web workers' executes queued (services.relayer.send_queued: nonces in one
transaction, the sends in one batch), and follows them in a loop of its own: receipts -> ok /
failed, lost sends re-sent, stuck ones re-priced (services.relayer.reconcile). Nobody's status
poll drives it.

The same process runs the incoming-transfer indexer in a thread of its own (run_indexer, every
settings.indexer_interval_seconds; services.indexer): incoming transfers into the activity lists,
and the statuses of the users' own sends from their receipts. A long catch-up there never delays
a payment. Its lease in the database lets exactly one of several relayer processes index a chain.
That thread also deletes, once an hour, the rows nobody can use any more (services.retention:
sessions long expired, quotes never executed), off the payments' path.

A process rather than a task leased inside the web workers: it has one clear lifetime and log,
needs no lease table, and scales apart from the workers. Nonce allocation is safe across
processes by itself (services.relayer), so a second relayer process would be harmless, only
wasteful.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

import redis
from redis import RedisError

from wallet_app import crud
from wallet_app.core import shared
from wallet_app.core.config import get_settings
from wallet_app.core.db import CommitWatch, get_session
from wallet_app.errors import outage_line, unexpected_code
from wallet_app.services import chain as chains
from wallet_app.services import indexer, payment_watch, relayer, retention
from wallet_app.services.chain import ChainConfig

log = logging.getLogger(__name__)


def run_once(steps: tuple[Callable[[ChainConfig], dict[str, int]], ...] | None = None) -> dict[str, int]:
    """One pass over every chain with a payment contract: queued payments sent, then every
    unsettled one followed (the receipts of those just sent included), or only `steps` of
    these. The summed counters."""
    total: dict[str, int] = {}
    for chain in chains.get_chains():
        if not chain.payment_contract:
            continue
        for step in steps or (relayer.send_queued, relayer.reconcile):
            try:
                counts = step(chain)
            except Exception as e:  # one chain's trouble (a node down, a bad row) must not stop the others
                if not _database_outage.failed(e):
                    log.exception("%s of chain %s failed", step.__name__, chain.chain_id)
                continue
            _database_outage.passed()
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
    return total


def run(stop: threading.Event, interval: float | None = None) -> None:
    """Until `stop` is set, two loops: sending (send_queued) every `interval` s
    (settings.relayer_interval_seconds) and at once when a payment is queued (_Wake), and
    following (reconcile) every `interval` s and at once after a send; a loop whose last pass had
    nothing to do waits IDLE_PASS_SECONDS instead (the wakes still come at once). Apart, because a payment
    queued while the receipts of the last ones are collected is sent without waiting for that
    (on a busy PostgreSQL a pass of each took about half a second). They may overlap: both are
    safe against another relayer process doing the other (services.relayer), so against a thread."""
    settings = get_settings()
    every = settings.relayer_interval_seconds if interval is None else interval
    wake, sent = _Wake(stop, settings.redis_url), threading.Event()
    follower = threading.Thread(target=_follow, args=(stop, every, sent, wake), name="relayer-follow", daemon=True)
    follower.start()
    while not stop.is_set():
        started = time.monotonic()
        counts = _logged("sent", (relayer.send_queued,))
        if counts.get("sent") or counts.get("failed"):
            sent.set()
        wake.wait(_until_next_pass(every, counts))
        # Each execute announces itself: a burst is sent in batches, a pass (and the follow after
        # it) at most every QUEUE_CHECK_SECONDS, as often as the queue is looked at without Redis.
        # Passes of one or two payments each cost the relayer, the database and the node the
        # CPU that the web workers needed (a burst of 100 took 20 passes).
        stop.wait(max(0.0, QUEUE_CHECK_SECONDS - (time.monotonic() - started)))
    sent.set()  # the follower may be in an idle wait: it ends now
    follower.join()


def run_indexer(stop: threading.Event, interval: float | None = None) -> None:
    """services.indexer.run_once() every `interval` s (settings.indexer_interval_seconds) until
    `stop` is set; a pass that caught up on many blocks is followed by the next at once."""
    every = get_settings().indexer_interval_seconds if interval is None else interval
    owner = indexer.new_owner()
    try:
        while not stop.is_set():
            started = time.monotonic()
            counts = indexer.run_once(owner)
            if any(counts.get(k) for k in ("received", "ok", "failed")) or counts.get("blocks", 0) > 100:
                log.info("indexer pass in %.2f s: %s", time.monotonic() - started, counts)
            retention.run_due()
            if counts.get("blocks", 0) < indexer.PASS_BLOCKS:
                stop.wait(every)
    finally:
        for chain in chains.get_chains():
            try:
                indexer.release_lease(chain.chain_id, owner)
            except Exception:  # the database is gone at shutdown: the lease just expires
                log.warning("indexer lease of chain %s not released", chain.chain_id)


def _follow(stop: threading.Event, every: float, sent: threading.Event, wake: _Wake) -> None:
    while not stop.is_set():
        counts = _logged("followed", (relayer.reconcile,))
        if counts.get("ok") or counts.get("failed"):
            wake.poke()  # a payment held back for its payer's earlier ones may go now
        sent.wait(_until_next_pass(every, counts))
        sent.clear()


def _until_next_pass(every: float, counts: dict[str, int]) -> float:
    """How long a loop waits for its next timer pass: `every`, or IDLE_PASS_SECONDS after a pass
    that found nothing to do."""
    return every if any(counts.values()) else max(every, IDLE_PASS_SECONDS)


def _logged(what: str, steps: tuple) -> dict[str, int]:
    started = time.monotonic()
    counts = run_once(steps)
    if any(counts.get(k) for k in ("sent", "ok", "failed", "resent", "replaced")):  # idle passes stay quiet
        log.info("%s in %.2f s: %s", what, time.monotonic() - started, counts)
    return counts


class _DatabaseOutage:
    """The database out of reach (a restart, a failover) is logged once when it begins and once
    when it ends: not a traceback on every pass of both loops (ten a second)."""

    def __init__(self) -> None:
        self.since: float | None = None

    def failed(self, error: Exception) -> bool:
        """True when `error` is the database out of reach (logged here, once per outage)."""
        if unexpected_code(error) != "database_unavailable":
            return False
        if self.since is None:
            self.since = time.monotonic()
            log.warning("the database is out of reach (%s); relaying waits for it", outage_line(error))
        return True

    def passed(self) -> None:
        if self.since is not None:
            log.warning("the database is back after %.1f s; relaying goes on", time.monotonic() - self.since)
            self.since = None


_database_outage = _DatabaseOutage()

QUEUE_CHECK_SECONDS = 0.05  # without Redis: how often the queue is looked at between passes
# A loop whose last pass found nothing to send or follow: its next timer pass waits this long. An
# idle relayer otherwise read the database 10 times a second for nothing; a queued payment and a
# send still wake the loops at once, and what the timer alone finds (a payment held back for its
# payer's allowance, a node that was down) waits at most this long.
IDLE_PASS_SECONDS = 2.0
LISTEN_RETRY_SECONDS = 1.0  # Redis out: how often the announcements' subscription is tried again
STOP_CHECK_SECONDS = 0.25  # a wait for an announcement sees a stop (SIGTERM) within this


class _Wake:
    """Between passes: returns after `every` s, or as soon as a payment is queued. With REDIS_URL
    a thread listens for execute's announcements (payment_watch.QUEUED_CHANNEL); without Redis,
    or while it is unreachable, a cheap query of the queue every QUEUE_CHECK_SECONDS stands in
    (a full pass that often would ask the node for receipts that often), and on SQLite only
    when something was committed since the last look (CommitWatch)."""

    def __init__(self, stop: threading.Event, redis_url: str | None) -> None:
        self.stop, self.event, self.subscribed = stop, threading.Event(), False
        if redis_url:
            threading.Thread(target=self._listen, args=(redis_url,), name="relayer-wake", daemon=True).start()

    def wait(self, every: float) -> None:
        end = time.monotonic() + every
        while (left := end - time.monotonic()) > 0 and not self.stop.is_set():
            if self.subscribed:
                if self.event.wait(min(left, STOP_CHECK_SECONDS)):
                    break
            elif self.event.wait(min(left, QUEUE_CHECK_SECONDS)) or _anything_queued():
                break
        self.event.clear()

    def poke(self) -> None:
        """Ends the current wait now."""
        self.event.set()

    def _listen(self, url: str) -> None:
        feed = shared.FeedLost(
            log,
            f"queue announcements lost (Redis); the queue is read every {QUEUE_CHECK_SECONDS} s",
            "queue announcements are back",
        )
        while not self.stop.is_set():
            pubsub = redis.Redis.from_url(url, **shared.LISTEN_OPTIONS).pubsub()
            try:
                pubsub.subscribe(payment_watch.QUEUED_CHANNEL)
                beat = shared.Heartbeat()
                while not self.stop.is_set():
                    message = pubsub.get_message(timeout=beat.read_seconds())
                    if beat.after(message):
                        pubsub.ping()
                    if message is None:
                        continue
                    if message["type"] == "subscribe":
                        self.subscribed = True
                        feed.back()
                    elif message["type"] == "message":
                        self.event.set()
            except (RedisError, OSError):
                feed.lost()  # once until it is back: this retries every LISTEN_RETRY_SECONDS
            finally:
                self.subscribed = False
                with contextlib.suppress(Exception):
                    pubsub.close()
            self.stop.wait(LISTEN_RETRY_SECONDS)


_commits = CommitWatch()


def _anything_queued() -> bool:
    if not _commits.maybe_committed():  # nothing written since the last look: nothing newly queued
        return False
    try:
        with get_session() as db:
            paying = [chain.chain_id for chain in chains.get_chains() if chain.payment_contract]
            return any(crud.queued_payments(db, chain_id, 1) for chain_id in paying)
    except Exception:  # the database is down: the next pass logs it
        return False
