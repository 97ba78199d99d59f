"""The API's place in the served app (wallet_app.api): in front of Reflex's routes with no CORS of
its own, and without FastAPI's per-request OpenTelemetry lookups."""

import fastapi.telemetry._asgi as fastapi_telemetry
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from wallet_app.api import build_api, in_front_of_reflex


def test_the_api_serves_its_routes_and_reflex_the_rest(settings_env):
    reflex_app = Starlette(routes=[Route("/_event", lambda _request: PlainTextResponse("reflex"))])
    api = build_api()
    served = in_front_of_reflex(api)(reflex_app)
    assert served is api
    assert not [m for m in api.user_middleware if m.cls is CORSMiddleware]  # Reflex's, around all, is the one
    with TestClient(served) as client:
        assert client.get("/_event").text == "reflex"
        assert client.get("/api/v1/me").json() == {"detail": "not_authenticated"}


def test_requests_do_not_look_for_telemetry_providers(monkeypatch):
    """Even with a provider configured (as an SDK would), the API neither looks nor traces."""
    looked: list[object] = []

    def configured(provider: object) -> bool:
        looked.append(provider)
        return False

    monkeypatch.setattr(fastapi_telemetry, "_unconfigured", configured)
    assert FastAPI()._native_telemetry.enabled()  # FastAPI's default would trace
    looked.clear()
    assert not build_api()._native_telemetry.enabled()
    assert looked == []
