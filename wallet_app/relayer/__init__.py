"""The relayer on its own: `python -m wallet_app.relayer` (started by `make run` next to the web
server) reconciles every payment chain on a timer: receipts -> ok / failed, lost sends re-sent,
stuck ones re-priced (services.relayer.reconcile). Nobody's status poll drives it.

A process rather than a task leased inside the web workers: it has one clear lifetime and log,
needs no lease table, and scales apart from the workers. Nonce allocation (execute, in the
workers) is safe across processes by itself (services.relayer), so a second relayer process
would be harmless, only wasteful.
"""

from __future__ import annotations

import logging
import threading

from wallet_app.core.config import get_settings
from wallet_app.services import chain as chains
from wallet_app.services import relayer

log = logging.getLogger(__name__)


def run_once() -> dict[str, int]:
    """One pass over every chain with a payment contract; the summed reconcile counters."""
    total: dict[str, int] = {}
    for chain in chains.get_chains():
        if not chain.payment_contract:
            continue
        try:
            counts = relayer.reconcile(chain)
        except Exception:  # one chain's trouble (a node down, a bad row) must not stop the others
            log.exception("reconcile of chain %s failed", chain.chain_id)
            continue
        for k, v in counts.items():
            total[k] = total.get(k, 0) + v
    return total


def run(stop: threading.Event, interval: float | None = None) -> None:
    """run_once() every `interval` s (settings.relayer_interval_seconds) until `stop` is set."""
    every = get_settings().relayer_interval_seconds if interval is None else interval
    while not stop.is_set():
        run_once()
        stop.wait(every)
