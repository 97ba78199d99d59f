"""JSON-RPC over HTTP for web3: its HTTPProvider with urllib3 underneath instead of requests.

requests spent two thirds of a call's CPU around the call itself (it looks through the whole
environment for proxy settings on every request, then merges settings and hooks): 0.5 ms of a
0.17 ms urllib3 POST to a local node, on every chain read of an execute and of every relayer pass.
The proxy the environment names for the URL (HTTPS_PROXY, NO_PROXY, ...) is looked up once here.

Failures keep web3's types, so callers tell them apart as before: no answer in time ->
RequestTimedOut; no connection, a broken one or an HTTP error status -> ProviderConnectionError.
Nothing is retried here (a send must never go twice; chain reads retry themselves).
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import certifi
import urllib3
from web3 import HTTPProvider
from web3._utils.batching import sort_batch_response_by_response_ids
from web3.exceptions import ProviderConnectionError, RequestTimedOut
from web3.types import RPCEndpoint, RPCResponse

POOL_CONNECTIONS = 64  # kept open per node: the API's threads (40) and the relayer's passes at once
HEADERS = {"Content-Type": "application/json", "User-Agent": "newbl-wallet"}


def pool_for(url: str) -> urllib3.PoolManager:
    """Connections to `url`, through the proxy the environment names for it, if any."""
    options: dict[str, Any] = {"maxsize": POOL_CONNECTIONS, "ca_certs": certifi.where()}
    parts = urlsplit(url)
    proxies = {} if parts.hostname and proxy_bypass(parts.hostname) else getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    return urllib3.ProxyManager(proxy, **options) if proxy else urllib3.PoolManager(**options)


class RpcOverHttp(HTTPProvider):
    def __init__(self, url: str, timeout: float) -> None:
        super().__init__(url, exception_retry_configuration=None)
        self._pool = pool_for(url)
        self._timeout = urllib3.Timeout(timeout)

    def post(self, body: bytes) -> bytes:
        try:
            answer = self._pool.request(
                "POST", str(self.endpoint_uri), body=body, headers=HEADERS, timeout=self._timeout, retries=False
            )
        except urllib3.exceptions.NewConnectionError as e:  # urllib3 files it under its timeouts
            raise ProviderConnectionError(f"{self.endpoint_uri}: no connection") from e
        except urllib3.exceptions.TimeoutError as e:
            raise RequestTimedOut(f"{self.endpoint_uri}: no answer in time") from e
        except urllib3.exceptions.HTTPError as e:
            raise ProviderConnectionError(f"{self.endpoint_uri}: {type(e).__name__}") from e
        if not 200 <= answer.status < 300:
            raise ProviderConnectionError(f"{self.endpoint_uri}: HTTP {answer.status}")
        return answer.data

    def _make_request(self, method: RPCEndpoint, request_data: bytes) -> bytes:
        return self.post(request_data)

    def make_batch_request(self, batch_requests: list[tuple[RPCEndpoint, Any]]) -> list[RPCResponse] | RPCResponse:
        response = self.decode_rpc_response(self.post(self.encode_batch_rpc_request(batch_requests)))
        if not isinstance(response, list):  # the node refused the whole batch: one error object
            return response
        return cast(list[RPCResponse], sort_batch_response_by_response_ids(response))
