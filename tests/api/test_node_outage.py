"""A chain node that accepts connections and never answers (overloaded, a dead backend behind its
provider's balancer): the requests that read the chain must not pile up on it, and the health
check must not mistake their pile-up for a database outage."""

import json
import socket
import threading
import time

import pytest

from wallet_app.core.config import REPO_ROOT, get_settings
from wallet_app.services import chain as chain_svc
from wallet_app.services import tokens

ADDRESS = "0x" + "ab" * 20
TIMEOUT_S = 3.0  # the node's timeout here (15 s in the app)


class HangingNode:
    """A TCP server that accepts every connection and never answers a byte; counts them."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(512)
        self.server.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                self.held.append(self.server.accept()[0])
            except OSError:  # the accept timeout: a look at stop
                continue

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for conn in self.held:
            conn.close()
        self.server.close()


@pytest.fixture
def hanging_chain(monkeypatch, settings_env, deployed, deployments_dir, tmp_path):
    node = HangingNode()
    entries = json.loads((REPO_ROOT / "chains.dev.json").read_text())
    for e in entries:
        e["rpc_url"] = node.url
    path = tmp_path / "chains-hanging.json"
    path.write_text(json.dumps(entries))
    monkeypatch.setenv("CHAINS_FILE", str(path))
    monkeypatch.setenv("DEPLOYMENTS_DIR", str(deployments_dir))
    monkeypatch.setenv("RATE_LIMIT_BALANCES", "1000/second")
    get_settings.cache_clear()
    monkeypatch.setattr(chain_svc, "RPC_TIMEOUT_SECONDS", TIMEOUT_S)
    chain_svc._clients.clear()  # made again with this timeout
    yield node
    chain_svc._clients.clear()
    node.close()


@pytest.fixture
def with_address(client, login):
    login("node@example.com", "en")
    assert client.post("/api/v1/me/address", json={"address": ADDRESS}).status_code == 200
    return client


def timed(call):
    t0 = time.monotonic()
    answer = call()
    return answer, time.monotonic() - t0


def test_a_node_that_let_a_request_time_out_is_left_alone_for_a_while(hanging_chain, with_address, monkeypatch,
                                                                     caplog):
    """Each read waited the whole timeout, and again for its retry: a worker's 40 threads were all
    waiting on the node within seconds of ordinary traffic, and every route of the worker with them."""
    client = with_address
    monkeypatch.setattr(tokens, "_unavailable_logged", {})
    answer, seconds = timed(lambda: client.get("/api/v1/assets"))
    assert answer.status_code == 200 and seconds < 2 * TIMEOUT_S  # the retry does not wait again
    asked = len(hanging_chain.held)
    said = [r.getMessage() for r in caplog.records if "balances of chain" in r.getMessage()]
    assert said == ["balances of chain 31337 unavailable: rpc_unavailable: RPC not reachable: RequestTimedOut"]
    caplog.clear()
    with caplog.at_level("WARNING", logger="wallet_app.services.tokens"):
        for _ in range(20):
            answer, seconds = timed(lambda: client.get("/api/v1/assets"))
            assert (answer.status_code, answer.json()) == (200, []) and seconds < TIMEOUT_S  # no wait on the node
    assert len(hanging_chain.held) == asked  # not asked again during its quiet spell
    # Nor a line per request: the chain's trouble was logged at the first, and is again a minute on.
    assert [r.getMessage() for r in caplog.records if "balances of chain" in r.getMessage()] == []
    for w3 in chain_svc._clients.values():  # the spell over: the next request asks it again
        w3.provider._quiet_until = time.monotonic()
    assert client.get("/api/v1/assets").status_code == 200
    assert len(hanging_chain.held) > asked
