"""JSON-RPC over HTTP for web3: its HTTPProvider with urllib3 underneath instead of requests.

requests spent two thirds of a call's CPU around the call itself (it looks through the whole
environment for proxy settings on every request, then merges settings and hooks): 0.5 ms of a
0.17 ms urllib3 POST to a local node, on every chain read of an execute and of every relayer pass.
The proxy the environment names for the URL (HTTPS_PROXY, NO_PROXY, ...) is looked up once here.

Failures keep web3's types, so callers tell them apart as before: no answer in time ->
RequestTimedOut; no connection, a broken one or an HTTP error status -> ProviderConnectionError.
Nothing is retried here (a send must never go twice; chain reads retry themselves).

An answer that is no JSON-RPC answer to the method asked (a provider's HTML page, a result of
the wrong kind: answer_problem) is MalformedAnswer, a ProviderConnectionError: as if the node had
not been reached. web3 would otherwise fail on it in a dozen ways deep in its formatters
(TypeError, binascii.Error, AttributeError), which the app can only call an internal error.
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any, cast
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import certifi
import urllib3
from web3 import HTTPProvider
from web3.exceptions import ProviderConnectionError, RequestTimedOut
from web3.types import RPCEndpoint, RPCResponse

from wallet_app.core.config import url_for_logs

# What a healthy node answers, by method: hex data (may be "0x"), a hex quantity, an object (or
# null: no such block, or a transaction not mined or unknown), a list. Other methods are not checked.
HEX_DATA = re.compile(r"0x[0-9a-fA-F]*")  # and an even length: whole bytes
HEX_QUANTITY = re.compile(r"0x[0-9a-fA-F]{1,64}")
DATA_METHODS = frozenset({"eth_call", "eth_getCode", "eth_getStorageAt", "eth_sendRawTransaction"})
QUANTITY_METHODS = frozenset(
    {
        "eth_blockNumber",
        "eth_chainId",
        "eth_estimateGas",
        "eth_gasPrice",
        "eth_getBalance",
        "eth_getTransactionCount",
        "eth_maxPriorityFeePerGas",
    }
)
OBJECT_OR_NULL_METHODS = frozenset(
    {
        "eth_getBlockByHash",
        "eth_getBlockByNumber",
        "eth_getTransactionByHash",
        "eth_getTransactionReceipt",
    }
)
LIST_METHODS = frozenset({"eth_getLogs"})


class MalformedAnswer(ProviderConnectionError):
    """The node's answer is no JSON-RPC answer to the method asked."""


def answer_problem(method: str, answer: Any) -> str | None:
    """Pure: what is wrong with `answer` as the JSON-RPC answer to `method`, or None. An error
    object is an answer (web3 raises it as the node's refusal)."""
    if not isinstance(answer, dict):
        return "not a JSON-RPC answer"
    if "error" in answer:
        error = answer["error"]
        ok = isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
        return None if ok else "an error that is not a JSON-RPC error"
    if "result" not in answer:
        return "neither a result nor an error"
    result = answer["result"]
    if method in DATA_METHODS:
        ok = isinstance(result, str) and len(result) % 2 == 0 and HEX_DATA.fullmatch(result) is not None
    elif method in QUANTITY_METHODS:
        ok = isinstance(result, str) and HEX_QUANTITY.fullmatch(result) is not None
    elif method in OBJECT_OR_NULL_METHODS:
        ok = result is None or isinstance(result, dict)
    elif method in LIST_METHODS:
        ok = isinstance(result, list)
    else:
        ok = True
    return None if ok else f"a result of the wrong kind for {method}"


def in_request_order(answers: list[Any], ids: list[int]) -> list[Any] | None:
    """Pure: a batch's answers in the order of its requests' ids, or None unless each request has
    exactly one answer. (Sorting by id alone paired a duplicated or unknown id's answer with
    another request: a balance or a send's outcome read as another's.)"""
    by_id: dict[int, Any] = {}
    for answer in answers:
        key = answer.get("id") if isinstance(answer, dict) else None
        if not isinstance(key, int) or isinstance(key, bool) or key in by_id:
            return None
        by_id[key] = answer
    if sorted(by_id) != sorted(ids):
        return None
    return [by_id[i] for i in ids]


POOL_CONNECTIONS = 64  # kept open per node: the API's threads (40) and the relayer's passes at once
HEADERS = {"Content-Type": "application/json", "User-Agent": "newbl-wallet"}


def pool_for(url: str) -> urllib3.PoolManager:
    """Connections to `url`, through the proxy the environment names for it, if any."""
    options: dict[str, Any] = {"maxsize": POOL_CONNECTIONS, "ca_certs": certifi.where()}
    parts = urlsplit(url)
    proxies = {} if parts.hostname and proxy_bypass(parts.hostname) else getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    return urllib3.ProxyManager(proxy, **options) if proxy else urllib3.PoolManager(**options)


# After a request to a node got no answer in time, its next requests fail at once (RequestTimedOut)
# for this long, and then one goes through to see whether it answers again. A node that hangs
# (overloaded, a dead backend behind a provider's balancer) otherwise held every thread that asked
# it for the whole timeout, twice with a read's retry: 40 of them held every API route of the
# worker, the health check's database read included (which then said the database was gone).
NODE_QUIET_SECONDS = 10.0
# Only these answer quickly from a healthy node, so only their timeout says it hangs: a log search
# over many blocks, a simulation or a send may take the whole timeout from a node that is fine, and
# one of them (an unauthenticated merchant look-up's eth_getLogs, the indexer's) must not shut the
# process off the node for everyone.
QUICK_METHODS = frozenset(
    {
        "eth_blockNumber",
        "eth_chainId",
        "net_version",
        "eth_gasPrice",
        "eth_maxPriorityFeePerGas",
        "eth_feeHistory",
        "eth_getBalance",
        "eth_getTransactionCount",
        "eth_getCode",
        "eth_call",
        "eth_getTransactionReceipt",
        "eth_getTransactionByHash",
        "eth_getBlockByNumber",
    }
)


class RpcOverHttp(HTTPProvider):
    def __init__(self, url: str, timeout: float) -> None:
        super().__init__(url, exception_retry_configuration=None)
        self._where = url_for_logs(url)  # in error texts: never the path or query, where an API key is
        self._pool = pool_for(url)
        self._timeout = urllib3.Timeout(timeout)
        self._timeout_seconds = timeout
        self._lock = threading.Lock()
        self._quiet_until: float | None = None  # time.monotonic() until which it is not asked (None: it answers)

    def _ask(self) -> bool:
        """RequestTimedOut at once while the node is left alone; else the request may go. -> whether
        it is the one let through after a quiet spell (the others fail at once until its outcome)."""
        with self._lock:
            if self._quiet_until is None:
                return False
            now = time.monotonic()
            if now < self._quiet_until:
                raise RequestTimedOut(f"{self._where}: not answering; asked again in {self._quiet_until - now:.0f} s")
            self._quiet_until = now + self._timeout_seconds
            return True

    def _quiet(self, quiet: bool) -> None:
        with self._lock:
            self._quiet_until = time.monotonic() + NODE_QUIET_SECONDS if quiet else None

    def post(self, body: bytes, quick: bool = False) -> bytes:
        """`quick`: every call in `body` is of QUICK_METHODS, so a timeout means the node hangs."""
        probing = self._ask()
        try:
            answer = self._pool.request(
                "POST", str(self.endpoint_uri), body=body, headers=HEADERS, timeout=self._timeout, retries=False
            )
        except urllib3.exceptions.NewConnectionError as e:  # urllib3 files it under its timeouts
            self._quiet(probing)  # refused at once (no thread waits on it): left alone only if it was
            raise ProviderConnectionError(f"{self._where}: no connection") from e
        except urllib3.exceptions.TimeoutError as e:
            if quick or probing:  # a slow log search or simulation says nothing of the node's health
                self._quiet(True)
            raise RequestTimedOut(f"{self._where}: no answer in time") from e
        except urllib3.exceptions.HTTPError as e:
            self._quiet(probing)
            raise ProviderConnectionError(f"{self._where}: {type(e).__name__}") from e
        self._quiet(False)
        if not 200 <= answer.status < 300:
            raise ProviderConnectionError(f"{self._where}: HTTP {answer.status}")
        return answer.data

    def _make_request(self, method: RPCEndpoint, request_data: bytes) -> bytes:
        return self.post(request_data, quick=method in QUICK_METHODS)

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        answer = self._decoded(self._make_request(method, self.encode_rpc_request(method, params)))
        if problem := answer_problem(method, answer):
            raise MalformedAnswer(f"{self._where}: {method}: {problem}")
        return cast(RPCResponse, answer)

    def make_batch_request(self, batch_requests: list[tuple[RPCEndpoint, Any]]) -> list[RPCResponse] | RPCResponse:
        body = self.encode_batch_rpc_request(batch_requests)
        response = self._decoded(self.post(body, quick=all(m in QUICK_METHODS for m, _ in batch_requests)))
        if not isinstance(response, list):  # the node refused the whole batch: one error object
            if answer_problem("", response) or "error" not in response:
                raise MalformedAnswer(f"{self._where}: batch: neither answers nor an error")
            return cast(RPCResponse, response)
        answers = in_request_order(response, [request["id"] for request in json.loads(body)])
        if answers is None:
            raise MalformedAnswer(f"{self._where}: batch: not one answer to each request")
        for (method, _params), answer in zip(batch_requests, answers, strict=True):
            if problem := answer_problem(method, answer):
                raise MalformedAnswer(f"{self._where}: batch: {method}: {problem}")
        return answers

    def _decoded(self, body: bytes) -> Any:
        try:
            return self.decode_rpc_response(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise MalformedAnswer(f"{self._where}: the answer is not JSON") from e
