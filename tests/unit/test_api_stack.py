"""The API's place in the served app (wallet_app.api): in front of Reflex's routes with no CORS of
its own, Reflex's paths matched once (PagesMount), and without FastAPI's per-request OpenTelemetry
lookups."""

import fastapi.telemetry._asgi as fastapi_telemetry
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import PlainTextResponse
from starlette.routing import Match, Route
from starlette.testclient import TestClient

from wallet_app.api import PagesMount, build_api, first_segment, in_front_of_reflex


def test_the_api_serves_its_routes_and_reflex_the_rest(settings_env):
    reached: list[str] = []

    async def reflex_app(scope, receive, send) -> None:  # Reflex's app: pages, assets, its websocket
        reached.append(scope["path"])
        await PlainTextResponse("reflex")(scope, receive, send)

    api = build_api()
    served = in_front_of_reflex(api)(reflex_app)
    assert served is api
    assert not [m for m in api.user_middleware if m.cls is CORSMiddleware]  # Reflex's, around all, is the one
    # Tried first: a page's path is matched once, not against every API route.
    assert isinstance(api.router.routes[0], PagesMount) and api.router.routes[0].api_segments == {"api"}
    with TestClient(served) as client:
        pages = ["/_event", "/", "/home", "/assets/app.js", "/apiary", "/dev-idp/authorize"]  # no dev routes here
        assert [client.get(path).text for path in pages] == ["reflex"] * len(pages)
        assert reached == pages
        assert client.get("/api/v1/me").json() == {"detail": "not_authenticated"}
        # A path under /api that no route takes, or a method its route does not: the API answers.
        assert (client.get("/api/v1/nothing-here").status_code, client.get("/api").status_code) == (404, 404)
        refused = client.delete("/api/v1/me")
        assert (refused.status_code, refused.headers["allow"]) == (405, "GET")
    assert reached == pages


@pytest.mark.parametrize("path, segment", [
    ("/api/v1/me", "api"), ("/api", "api"), ("/apiary/x", "apiary"), ("/", ""), ("//api/v1/me", ""),
    ("*", ""), ("", ""),  # OPTIONS * and an empty path: no segment (an IndexError in PagesMount before)
])
def test_first_segment(path, segment):
    assert first_segment(path) == segment
    pages = PagesMount(PlainTextResponse("reflex"), frozenset({"api"}))
    # The API's paths are not the pages'; a path without its leading "/" is nobody's (Starlette's 404).
    pages_path = path.startswith("/") and segment != "api"
    assert pages.matches({"type": "http", "path": path})[0] == (Match.FULL if pages_path else Match.NONE)


def test_a_route_at_the_root_is_refused(settings_env):
    api = build_api()
    api.router.routes.append(Route("/", lambda _request: PlainTextResponse("root")))
    with pytest.raises(AssertionError, match="would take every page's path"):
        in_front_of_reflex(api)(Starlette())


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
