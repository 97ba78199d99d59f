"""The API's one exception handler: every AppError answers {"detail": code} with REGISTRY's status."""

import pytest
from starlette.testclient import TestClient

from wallet_app.api import build_api
from wallet_app.errors import REGISTRY, AppError

SERVER_CODES = [code for code in REGISTRY if not code.isupper()]  # upper case: the browser's own


@pytest.fixture(scope="module")
def raising_client():
    api = build_api()

    @api.get("/raise/{code}")
    def raise_it(code: str) -> None:
        raise AppError(code, "a message for logs only")

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
