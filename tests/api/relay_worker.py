"""One racing relayer process for test_two_relayer_processes_racing_fifty_payments: relays the jobs of a JSON file (row id,
pay() calldata, gas limit) with services.relayer.relay, all at once, as a web worker's
executes would. Settings come from the environment (the test's)."""

import json
import sys
from concurrent.futures import ThreadPoolExecutor

from wallet_app.core import extensions
from wallet_app.dev import DEV_RELAYER_KEY
from wallet_app.services import chain as chains
from wallet_app.services import relayer


def main(jobs_file: str, chain_id: int) -> None:
    extensions.set_relayer_key(lambda: DEV_RELAYER_KEY)
    chain = chains.get_chain(chain_id)
    jobs = json.loads(open(jobs_file).read())
    with ThreadPoolExecutor(len(jobs)) as pool:
        list(pool.map(lambda job: relayer.relay(job[0], chain, job[1], job[2]), jobs))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
