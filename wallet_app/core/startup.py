"""What a server process does once it has started."""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Takes what start-up made (modules, settings, engines, the app's routes and pages, web3's ABI
    tables: about 200,000 objects in a worker or the relayer) out of the collector's walks: it lives
    as long as the process. Without it a full collection walked all of it, 100-270 ms holding the
    interpreter, and a burst of requests set one off every second or so (bench/payments: two in
    the relayer inside a 0.7 s pay phase). Objects made later are collected as before; a start-up
    object in a reference cycle that becomes garbage later is never freed (bounded: start-up runs
    once per process)."""
    gc.freeze()
