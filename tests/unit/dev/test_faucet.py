"""The dev faucet stops cleanly: a send to a node that has stopped is one log line without a
traceback, and stop() cancels the sends that have not started."""

import logging
import threading
import time

import pytest
from eth_account import Account

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
            deadline = time.monotonic() + 10
            while not faucet._stopping.is_set():
                assert time.monotonic() < deadline, "stop() did not start"
                time.sleep(0.01)
        stopper.join(10)
    assert stopped == [True] and not any(w.is_alive() for w in workers)
    assert caplog.records == []  # none of them tried the stopped node
    assert not faucet._stopping.is_set()  # funding works again afterwards
