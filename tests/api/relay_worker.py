"""One racing relayer process for test_two_relayer_processes_racing_fifty_payments: relays the
queued payments of the chain with services.relayer.send_queued, a few per pass so that two such
processes interleave, until none is left; prints how many it sent. Settings come from the
environment (the test's)."""

import sys

from wallet_app import crud
from wallet_app.core import extensions
from wallet_app.core.db import get_session
from wallet_app.dev import DEV_RELAYER_KEY
from wallet_app.services import chain as chains
from wallet_app.services import relayer


def main(chain_id: int) -> None:
    extensions.set_relayer_key(lambda: DEV_RELAYER_KEY)
    chain = chains.get_chain(chain_id)
    sent = 0
    while True:
        with get_session() as db:
            if not crud.queued_payments(db, chain_id, 1):
                break
        sent += relayer.send_queued(chain, limit=5)["sent"]
    print("sent", sent)


if __name__ == "__main__":
    main(int(sys.argv[1]))
