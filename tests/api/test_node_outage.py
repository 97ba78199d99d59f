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


OFFLINE_CHAIN = {
    # An RPC that refuses every connection (127.0.0.2 is loopback; nothing listens on port 9 there).
    "chain_id": 31338, "chain_name": "Newbl Offline", "rpc_url": "http://127.0.0.2:9",
    "multicall_address": "0x" + "11" * 20, "payment_contract": None, "native_symbol": "ETH", "native_name": "Ether",
    "native_decimals": 18, "explorer_url": None,
    "tokens": [{"token_address": "0x" + "22" * 20, "token_symbol": "tOFF", "token_name": "Offline Token",
                "token_decimals": 6}],
}


@pytest.fixture
def one_chain_down(monkeypatch, chain_env, chains_file, tmp_path):
    """The test anvil's chain, and a second chain whose node does not answer."""
    path = tmp_path / "chains-one-down.json"
    path.write_text(json.dumps([*json.loads(chains_file.read_text()), OFFLINE_CHAIN]))
    monkeypatch.setenv("CHAINS_FILE", str(path))
    get_settings.cache_clear()
    chain_svc._clients.clear()
    yield
    chain_svc._clients.clear()


def test_assets_name_the_chains_whose_balances_could_not_be_read(one_chain_down, client, login):
    """A chain whose node did not answer was left out of the list and nothing said so: a list
    without it read as "nothing held there" (a user whose only chain was down saw no tokens at
    all). Its id is in X-Unavailable-Chains; the items of the chains that answered are as ever."""
    from contracts.deploy import FAUCET_TOKEN_UNITS
    from wallet_app.dev import faucet

    login("half@example.com", "en")
    assert client.post("/api/v1/me/address", json={"address": ADDRESS}).status_code == 200
    assert faucet.wait_idle(60)
    answer = client.get("/api/v1/assets")
    assert answer.status_code == 200
    assert [(i["chain_id"], i["token_symbol"]) for i in answer.json()] == [
        (31337, "tUSD"), (31337, "tKRW"), (31337, "ETH")]
    assert answer.json()[0]["balance"] == str(FAUCET_TOKEN_UNITS)
    assert answer.headers["X-Unavailable-Chains"] == "31338"
    assert tokens.asset_balances(tokens_user(client)).unavailable == [
        {"chain_id": 31338, "chain_name": "Newbl Offline"}]


def test_assets_of_a_single_chain_that_hangs_say_so(hanging_chain, with_address):
    """The only chain's node hangs (its first read times out, the next ones meet its quiet spell):
    the list is empty, and the answer says that this is not "no tokens"."""
    for _ in range(2):
        answer = with_address.get("/api/v1/assets")
        assert (answer.status_code, answer.json()) == (200, [])
        assert answer.headers["X-Unavailable-Chains"] == "31337"


def test_assets_of_chains_that_all_answered_carry_no_such_header(chain_env, client, login):
    login("whole@example.com", "en")
    assert client.post("/api/v1/me/address", json={"address": ADDRESS}).status_code == 200
    answer = client.get("/api/v1/assets")
    assert answer.status_code == 200 and answer.json()
    assert "X-Unavailable-Chains" not in answer.headers


def tokens_user(client):
    from wallet_app.services import sessions

    return sessions.lookup_user(client.cookies.get(sessions.SESSION_COOKIE))
