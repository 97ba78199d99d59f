"""`python -m wallet_app.relayer`: reconciles payments and indexes incoming transfers until SIGTERM / Ctrl-C
(see the package doc)."""

from __future__ import annotations

import logging
import signal
import sys
import threading

from wallet_app.core import extensions
from wallet_app.core.config import SettingsError, get_settings
from wallet_app.core.db import upgrade_schema
from wallet_app.core.startup import freeze_startup_objects, restore_recursion_limit
from wallet_app.relayer import run, run_indexer
from wallet_app.services import merchant_webhooks


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="relayer %(levelname)s %(name)s: %(message)s")
    try:
        settings = get_settings()
    except SettingsError as e:
        print(e, file=sys.stderr)
        return 2
    if settings.dev_mode:
        # An entry point, like wallet_app.py: development's relayer key comes from the stand-ins.
        from wallet_app.dev import DEV_RELAYER_KEY, hidden_senders

        extensions.set_relayer_key(lambda: DEV_RELAYER_KEY)
        extensions.set_hidden_senders(hidden_senders)
    # The schema may be newer than the database when the relayer starts before the web server
    # (make run starts both): migrate first, under upgrade_schema's lock, as the web server does.
    logging.getLogger("alembic").setLevel(logging.WARNING)  # its per-plugin INFO lines are noise here
    upgrade_schema()
    restore_recursion_limit()  # the JSON it parses comes from nodes and merchants' servers
    freeze_startup_objects()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    logging.getLogger(__name__).info(
        "relaying every %s s, indexing every %s s", settings.relayer_interval_seconds, settings.indexer_interval_seconds
    )
    indexing = threading.Thread(target=run_indexer, args=(stop,), name="indexer", daemon=True)
    indexing.start()
    merchant_webhooks.start(stop)  # a thread of its own: a slow merchant never holds the relaying
    run(stop)
    indexing.join(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
