"""The relayer on its own: `python -m wallet_app.relayer` (started by `make run` next to the web
server) passes over every payment chain on a timer: it relays the payments the web workers'
executes queued (services.relayer.send_queued: nonces in one transaction, the sends in one
batch), then follows them: receipts -> ok / failed, lost sends re-sent, stuck ones re-priced
(services.relayer.reconcile). Nobody's status poll drives it.

The same process runs the incoming-transfer indexer in a thread of its own (run_indexer, every
settings.indexer_interval_seconds; services.indexer): incoming transfers into the activity lists,
and the statuses of the users' own sends from their receipts. A long catch-up there never delays
a payment. Its lease in the database lets exactly one of several relayer processes index a chain.

A process rather than a task leased inside the web workers: it has one clear lifetime and log,
needs no lease table, and scales apart from the workers. Nonce allocation is safe across
processes by itself (services.relayer), so a second relayer process would be harmless, only
wasteful.
"""

from __future__ import annotations

import logging
import threading
import time

from wallet_app.core.config import get_settings
from wallet_app.services import chain as chains
from wallet_app.services import indexer, relayer

log = logging.getLogger(__name__)


def run_once() -> dict[str, int]:
    """One pass over every chain with a payment contract: queued payments sent, then every
    unsettled one followed (the receipts of those just sent included). The summed counters."""
    total: dict[str, int] = {}
    for chain in chains.get_chains():
        if not chain.payment_contract:
            continue
        for step in (relayer.send_queued, relayer.reconcile):
            try:
                counts = step(chain)
            except Exception:  # one chain's trouble (a node down, a bad row) must not stop the others
                log.exception("%s of chain %s failed", step.__name__, chain.chain_id)
                continue
            for k, v in counts.items():
                total[k] = total.get(k, 0) + v
    return total


def run(stop: threading.Event, interval: float | None = None) -> None:
    """run_once() every `interval` s (settings.relayer_interval_seconds) until `stop` is set."""
    every = get_settings().relayer_interval_seconds if interval is None else interval
    while not stop.is_set():
        started = time.monotonic()
        counts = run_once()
        if any(counts.get(k) for k in ("sent", "ok", "failed", "resent", "replaced")):  # idle passes stay quiet
            log.info("pass in %.2f s: %s", time.monotonic() - started, counts)
        stop.wait(every)


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
            if counts.get("blocks", 0) < indexer.PASS_BLOCKS:
                stop.wait(every)
    finally:
        for chain in chains.get_chains():
            try:
                indexer.release_lease(chain.chain_id, owner)
            except Exception:  # the database is gone at shutdown: the lease just expires
                log.warning("indexer lease of chain %s not released", chain.chain_id)
