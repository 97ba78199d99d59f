"""The API's one exception handler: every AppError answers {"detail": code} with REGISTRY's status."""

import pytest
from starlette.testclient import TestClient
from web3.exceptions import RequestTimedOut, Web3RPCError

from wallet_app.api import build_api
from wallet_app.errors import REGISTRY, AppError
from wallet_app.services.rpc_http import MalformedAnswer

SERVER_CODES = [code for code in REGISTRY if not code.isupper()]  # upper case: the browser's own


@pytest.fixture(scope="module")
def raising_client():
    api = build_api()

    @api.get("/raise/{code}")
    def raise_it(code: str) -> None:
        raise AppError(code, "a message for logs only")

    @api.get("/node/{kind}")
    def node_trouble(kind: str) -> None:
        url = "https://mainnet.example/v3/KEY123"
        raise {
            "refused": Web3RPCError("refused", rpc_response={"error": {"code": -32005, "message": "over quota"}}),
            "timeout": RequestTimedOut(f"{url}: no answer in time"),
            "page": MalformedAnswer(f"{url}: the answer is not JSON"),
        }[kind]

    with TestClient(api) as c:
        yield c


@pytest.mark.parametrize("code", SERVER_CODES)
def test_every_server_code_maps_through_the_registry(raising_client, code):
    resp = raising_client.get(f"/raise/{code}")
    assert (resp.status_code, resp.json()) == (REGISTRY[code].status, {"detail": code})


def test_statuses_the_rest_contract_names():
    assert {c: REGISTRY[c].status for c in ("not_authenticated", "no_address", "unknown_payment", "quote_mismatch",
                                            "rpc_unavailable", "identity_provider_error", "invalid_address")} == {
        "not_authenticated": 401, "no_address": 409, "unknown_payment": 404, "quote_mismatch": 409,
        "rpc_unavailable": 503, "identity_provider_error": 502, "invalid_address": 400}


def test_a_schema_refusal_answers_one_code(raising_client):
    # FastAPI's default echoes pydantic's error list (input included); ours is one code like any other.
    resp = raising_client.patch("/api/v1/me/locale", content=b"{not json", headers={"content-type": "application/json"})
    assert (resp.status_code, resp.json()) == (422, {"detail": "invalid_request"})


@pytest.mark.parametrize("kind, said", [
    ("refused", "Web3RPCError: -32005 over quota"),
    ("timeout", "RequestTimedOut"),
    ("page", "MalformedAnswer"),
])
def test_node_trouble_no_route_expected_is_rpc_unavailable_and_one_log_line(raising_client, caplog, kind, said):
    """A provider past its quota refuses every request for a while: each answered rpc_unavailable
    and logged in one line, without a traceback or the node's URL (where its API key is)."""
    resp = raising_client.get(f"/node/{kind}")  # raise_server_exceptions: a traceback would raise here
    assert (resp.status_code, resp.json()) == (503, {"detail": "rpc_unavailable"})
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records] == [
        ("WARNING", f"GET /node/{kind}: the chain node: {said}", None)]
