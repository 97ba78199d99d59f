"""services.rpc_http: web3's calls over urllib3, its failures as web3's, the environment's proxy."""

import http.server
import threading

import pytest
import urllib3
from web3 import Web3
from web3.exceptions import ProviderConnectionError, RequestTimedOut

from tools.ports import free_port
from wallet_app.services import chain as chain_mod
from wallet_app.services.rpc_http import RpcOverHttp, pool_for


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


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


@pytest.fixture
def odd_node():
    """A node that answers POST /status/<code> with that status and hangs on POST /hang."""
    release = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers["Content-Length"]))
            if self.path == "/hang":
                release.wait(10)
                return
            body = b'{"jsonrpc":"2.0","id":0,"result":"0x1"}'
            self.send_response(int(self.path.rsplit("/", 1)[1]))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    release.set()
    server.shutdown()


@pytest.mark.parametrize("code", [429, 500, 502])
def test_an_http_error_status_is_a_connection_error(odd_node, code):
    with pytest.raises(ProviderConnectionError, match=f"HTTP {code}"):
        Web3(RpcOverHttp(f"{odd_node}/status/{code}", 5)).eth.get_block_number()


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
