"""services.rpc_http: web3's calls over urllib3, its failures as web3's, an answer that is no JSON-RPC
answer as if the node had not been reached, the environment's proxy."""

import json

import pytest
import urllib3
from web3 import Web3
from web3.exceptions import ProviderConnectionError, RequestTimedOut

from tests.conftest import ODD_BODIES
from tools.ports import free_port
from wallet_app.errors import AppError
from wallet_app.services import chain as chain_mod
from wallet_app.services import relayer
from wallet_app.services.chain import ChainConfig
from wallet_app.services.rpc_http import MalformedAnswer, RpcOverHttp, answer_problem, in_request_order, pool_for


def test_calls_and_batches_reach_the_node(anvil_node):
    provider = RpcOverHttp(anvil_node.url, 10)
    w3 = Web3(provider)
    assert w3.eth.chain_id == 31337
    answers = provider.make_batch_request([("eth_chainId", []), ("eth_blockNumber", []), ("no_such_method", [])])
    assert [a.get("result") for a in answers[:2]] == ["0x7a69", hex(w3.eth.block_number)]
    assert "error" in answers[2]


def test_no_node_is_a_connection_error_and_the_chain_read_says_rpc_unavailable():
    w3 = Web3(RpcOverHttp(f"http://127.0.0.1:{free_port()}", 5))
    with pytest.raises(ProviderConnectionError):
        w3.eth.get_block_number()
    assert isinstance(ProviderConnectionError("x"), chain_mod._NETWORK_ERRORS)


@pytest.mark.parametrize("code", [429, 500, 502])
def test_an_http_error_status_is_a_connection_error(odd_node, code):
    with pytest.raises(ProviderConnectionError, match=f"HTTP {code}"):
        Web3(RpcOverHttp(f"{odd_node}/status/{code}", 5)).eth.get_block_number()


def test_no_error_text_names_the_path_where_a_providers_key_is(odd_node, caplog):
    """An RPC URL keeps a provider's API key in its path (Infura's /v3/<key>): the errors' texts went
    into logs whole (the indexer logs a node's failure with its text; found by an audit)."""
    from wallet_app.services import indexer

    port = free_port()
    cases = [
        (f"http://127.0.0.1:{port}/v3/KEY123", f"http://127.0.0.1:{port}: no connection"),
        (f"{odd_node}/status/502?apikey=KEY123", f"{odd_node}: HTTP 502"),
        (f"{odd_node}/hang?apikey=KEY123", f"{odd_node}: no answer in time"),
    ]
    for url, text in cases:
        with pytest.raises(ProviderConnectionError if "hang" not in url else RequestTimedOut) as e:
            Web3(RpcOverHttp(url, 0.3)).eth.get_block_number()
        assert str(e.value) == text
    chain = ChainConfig(999, "Down", cases[0][0], "0x" + "11" * 20, None, "ETH", "Ether", 18, None, ())
    assert "KEY123" not in repr(chain)
    indexer._failing.clear()
    indexer.run_once("test", [chain])
    assert "indexer index of chain 999 failed" in caplog.text and "KEY123" not in caplog.text


def test_an_answer_over_200_is_read(odd_node):
    assert Web3(RpcOverHttp(f"{odd_node}/status/200", 5)).eth.get_block_number() == 1


def test_no_answer_in_time_is_a_timeout(odd_node):
    with pytest.raises(RequestTimedOut):
        Web3(RpcOverHttp(f"{odd_node}/hang", 0.3)).eth.get_block_number()


@pytest.mark.parametrize(
    ("env", "url", "proxy"),
    [
        ({}, "https://rpc.example.org/v3/key", None),
        ({"HTTPS_PROXY": "http://proxy.internal:3128"}, "https://rpc.example.org/v3/key", "http://proxy.internal:3128"),
        ({"HTTPS_PROXY": "http://proxy.internal:3128"}, "http://127.0.0.1:8545", None),
        ({"HTTP_PROXY": "http://proxy.internal:3128", "NO_PROXY": "127.0.0.1"}, "http://127.0.0.1:8545", None),
        (
            {"HTTP_PROXY": "http://proxy.internal:3128", "NO_PROXY": "example.org"},
            "http://node.lan:8545",
            "http://proxy.internal:3128",
        ),
        ({"ALL_PROXY": "http://proxy.internal:3128", "NO_PROXY": "example.org"}, "https://rpc.example.org", None),
    ],
)
def test_the_environment_proxy_is_used_for_its_urls(monkeypatch, env, url, proxy):
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    pool = pool_for(url)
    if proxy is None:
        assert not isinstance(pool, urllib3.ProxyManager)
    else:
        assert isinstance(pool, urllib3.ProxyManager) and pool.proxy.url == proxy


@pytest.mark.parametrize(("method", "answer", "problem"), [
    ("eth_call", {"result": "0x"}, None),
    ("eth_call", {"result": "0x00ff"}, None),
    ("eth_call", {"result": "0x0"}, "a result of the wrong kind for eth_call"),  # half a byte
    ("eth_call", {"result": None}, "a result of the wrong kind for eth_call"),
    ("eth_getCode", {"result": 12}, "a result of the wrong kind for eth_getCode"),
    ("eth_sendRawTransaction", {"result": "0x" + "ab" * 32}, None),
    ("eth_blockNumber", {"result": "0x1b4"}, None),
    ("eth_blockNumber", {"result": "0x"}, "a result of the wrong kind for eth_blockNumber"),
    ("eth_gasPrice", {"result": None}, "a result of the wrong kind for eth_gasPrice"),
    ("eth_getBalance", {"result": "0x" + "f" * 65}, "a result of the wrong kind for eth_getBalance"),  # > uint256
    ("eth_getTransactionReceipt", {"result": None}, None),  # not mined
    ("eth_getTransactionReceipt", {"result": {"status": "0x1"}}, None),
    ("eth_getBlockByNumber", {"result": "0x1"}, "a result of the wrong kind for eth_getBlockByNumber"),
    ("eth_getLogs", {"result": []}, None),
    ("eth_getLogs", {"result": {}}, "a result of the wrong kind for eth_getLogs"),
    ("anvil_mine", {"result": None}, None),  # a method not checked
    ("eth_call", {"error": {"code": -32005, "message": "limit exceeded"}}, None),  # the node's refusal
    ("eth_call", {"error": "busy"}, "an error that is not a JSON-RPC error"),
    ("eth_call", {"jsonrpc": "2.0", "id": 1}, "neither a result nor an error"),
    ("eth_call", [], "not a JSON-RPC answer"),
    ("eth_call", "0x", "not a JSON-RPC answer"),
])
def test_answer_problem(method, answer, problem):
    assert answer_problem(method, answer) == problem


def _ids(*ids):
    return [{"jsonrpc": "2.0", "id": i, "result": f"0x{i}"} for i in ids]


@pytest.mark.parametrize(("answers", "ids", "ordered"), [
    (_ids(7, 8), [7, 8], _ids(7, 8)),
    (_ids(8, 7), [7, 8], _ids(7, 8)),  # any order: matched by id
    ([], [], []),
    (_ids(7, 7), [7, 8], None),  # one answer twice, none for 8
    (_ids(7), [7, 8], None),
    (_ids(7, 8, 9), [7, 8], None),
    (_ids(7, 9), [7, 8], None),  # an id not asked
    ([{"result": "0x1"}, *_ids(8)], [7, 8], None),  # an answer without its id
    ([{"id": True, "result": "0x1"}, *_ids(8)], [1, 8], None),  # true is no id
    ([{"id": [7], "result": "0x1"}], [7], None),
    (["0x1", *_ids(8)], [7, 8], None),
])
def test_in_request_order(answers, ids, ordered):
    assert in_request_order(answers, ids) == ordered


def test_a_batch_answered_for_other_requests_is_malformed(monkeypatch):
    """Two answers with the same id, the right count: sorted by id, web3 paired the second
    request with the first one's answer."""
    provider = RpcOverHttp("http://127.0.0.1:9", 5)
    monkeypatch.setattr(provider, "post", lambda body, quick=False: json.dumps(
        [{"jsonrpc": "2.0", "id": request["id"], "result": "0x1"} for request in [json.loads(body)[0]] * 2]
    ).encode())
    with pytest.raises(MalformedAnswer):
        provider.make_batch_request([("eth_blockNumber", []), ("eth_gasPrice", [])])


@pytest.mark.parametrize("body", list(ODD_BODIES))
def test_an_answer_that_is_no_json_rpc_answer_is_as_if_the_node_was_not_reached(odd_node, body):
    provider = RpcOverHttp(f"{odd_node}/body/{body}", 5)
    with pytest.raises(MalformedAnswer):
        Web3(provider).eth.get_code("0x" + "11" * 20)
    with pytest.raises(MalformedAnswer):
        provider.make_batch_request([("eth_blockNumber", []), ("eth_gasPrice", [])])
    assert isinstance(MalformedAnswer("x"), ProviderConnectionError)  # the chain reads' network errors
    # A read retries once, then says the network is not reachable (its text for the user).
    with pytest.raises(AppError) as e:
        chain_mod._read(lambda: Web3(provider).eth.call({"to": "0x" + "11" * 20, "data": "0x"}))
    assert e.value.code == "rpc_unavailable"


@pytest.mark.parametrize("body", ["html", "bad-hex", "null-result", "number"])
def test_a_send_answered_with_no_json_rpc_answer_is_unknown_never_rejected(odd_node, body):
    """The node may have taken the transaction: a send whose answer cannot be read keeps its nonce
    and is sent again (UNKNOWN). Read as a refusal (REJECTED, as web3's ValueError for an HTML page
    or a bad hex hash was), its nonce would go to another transaction and the payment fail, while
    the first could still be mined: a user paying again would pay twice."""
    chain = ChainConfig(31337, "Dev", f"{odd_node}/body/{body}", "0x" + "11" * 20, None, "ETH", "Ether", 18, None, ())
    raw = "0x" + "f8" * 60
    assert relayer._send_raw(chain, raw)[0] == relayer.SendOutcome.UNKNOWN
    assert [outcome for outcome, _ in relayer._send_batch(chain, [raw, raw])] == [relayer.SendOutcome.UNKNOWN] * 2


def test_a_node_that_timed_out_is_left_alone_then_asked_once_and_trusted_again_when_it_answers(odd_node):
    provider = RpcOverHttp(f"{odd_node}/hang", 0.3)
    w3 = Web3(provider)
    with pytest.raises(RequestTimedOut, match="no answer in time"):
        w3.eth.get_block_number()
    with pytest.raises(RequestTimedOut, match=r"not answering; asked again in \d+ s"):
        w3.eth.get_block_number()  # at once, without a request
    provider.endpoint_uri = f"{odd_node}/status/200"  # it answers again
    with pytest.raises(RequestTimedOut, match="not answering"):
        w3.eth.get_block_number()  # not asked before its quiet spell is over
    provider._quiet_until = 0.0  # the spell over
    assert w3.eth.get_block_number() == 1  # asked once, and it answered
    assert provider._quiet_until is None and w3.eth.get_block_number() == 1


def test_a_log_search_or_a_send_that_times_out_leaves_the_node_asked(odd_node):
    """Only a quick read's timeout says the node hangs: a log search over many blocks, a
    simulation or a send may take the whole timeout from a healthy node, and one of them (a
    merchant's look-up needs no session) shut every request of the process off the node."""
    provider = RpcOverHttp(f"{odd_node}/hang", 0.3)
    w3 = Web3(provider)
    with pytest.raises(RequestTimedOut, match="no answer in time"):
        w3.eth.get_logs({"fromBlock": 0, "toBlock": 1})
    with pytest.raises(RequestTimedOut, match="no answer in time"):
        provider.make_batch_request([("eth_blockNumber", []), ("eth_sendRawTransaction", ["0x00"])])
    assert provider._quiet_until is None
    provider.endpoint_uri = f"{odd_node}/status/200"
    assert w3.eth.get_block_number() == 1  # asked, not refused at once
