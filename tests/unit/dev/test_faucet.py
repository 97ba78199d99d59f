"""The dev faucet stops cleanly, and two workers funding at once do not clash: a send to a node that has stopped
is one log line without a traceback, and stop() cancels the sends that have not started."""

import logging
import subprocess
import sys
import threading

import pytest
from eth_account import Account
from web3 import Web3

from contracts.deploy import deploy
from tests.waits import wait_until
from wallet_app.core.config import REPO_ROOT
from wallet_app.dev import faucet
from wallet_app.dev.anvil import Anvil


@pytest.fixture(scope="module")
def url() -> str:
    """The RPC URL of a node that has stopped."""
    with Anvil(port=0) as node:
        return node.url


def test_a_stopped_node_is_one_line_without_traceback(url, caplog, tmp_path):
    address = Account.create().address
    with caplog.at_level(logging.INFO, logger=faucet.__name__):
        assert faucet._fund(address, [(31337, url)], tmp_path) == {}
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records] == [
        ("WARNING", f"dev faucet: chain 31337 at {url} does not answer (ConnectionError); {address} not funded", None)
    ]


def test_stop_cancels_the_sends_not_started(url, caplog, tmp_path):
    with caplog.at_level(logging.INFO, logger=faucet.__name__):
        with faucet._send_lock:  # a send under way: the new workers wait behind it
            workers = [faucet._spawn(Account.create().address, [(31337, url)], tmp_path) for _ in range(3)]
            stopped: list[bool] = []
            stopper = threading.Thread(target=lambda: stopped.append(faucet.stop(10)))
            stopper.start()
            wait_until(faucet._stopping.is_set, 10, "stop() did not start")
        stopper.join(10)
    assert stopped == [True] and not any(w.is_alive() for w in workers)
    assert caplog.records == []  # none of them tried the stopped node
    assert not faucet._stopping.is_set()  # funding works again afterwards


FUND_MANY = """
import sys
from eth_account import Account
from wallet_app.dev import faucet
url, deployments, out = sys.argv[1:]
addresses = [Account.create().address for _ in range(6)]
print("ready", flush=True)
sys.stdin.readline()  # both processes start sending together
for a in addresses:
    assert faucet._fund(a, [(31337, url)], deployments), a
open(out, "w").write("\\n".join(addresses))
"""


def test_two_workers_fund_at_once_without_nonce_clashes(tmp_path):
    # Two processes (two backend workers) share one deployer key: the file lock orders their sends.
    with Anvil(port=0) as node:
        deploy(node.url, tmp_path)
        procs = [
            subprocess.Popen([sys.executable, "-c", FUND_MANY, node.url, str(tmp_path), str(tmp_path / f"out{i}")],
                             cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for i in range(2)
        ]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        assert [proc.wait(120) for proc in procs] == [0, 0]
        w3 = Web3(Web3.HTTPProvider(node.url))
        funded = [a for i in range(2) for a in (tmp_path / f"out{i}").read_text().split()]
        assert len(funded) == 12
        assert all(w3.eth.get_balance(a) > 0 for a in funded)
