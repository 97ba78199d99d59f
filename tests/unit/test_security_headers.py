import base64
import hashlib

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from wallet_app.core.security import (
    SUBRESOURCE_CSP,
    SecurityHeaders,
    cache_control,
    content_security_policy,
    governs_a_document,
    inline_script_hashes,
)


def test_inline_script_hashes_cover_only_inline_scripts(tmp_path):
    body = b"window.x = 1;"
    (tmp_path / "index.html").write_bytes(
        b"<html><script>" + body + b"</script><script src='/a.js'></script>"
        b"<script type=\"module\" async=\"\">import '/b.js';</script></html>"
    )
    hashes = inline_script_hashes(tmp_path)
    expected = "'sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode() + "'"
    assert expected in hashes
    assert len(hashes) == 2  # the module bootstrap counts, the src= script does not


def test_policy_without_google_allows_only_self():
    csp = content_security_policy(["'sha256-abc'"], google=False)
    assert "script-src 'self' 'sha256-abc'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "google" not in csp
    assert "unsafe-eval" not in csp
    assert "wasm-unsafe-eval" not in csp


def test_policy_with_google_adds_sign_in_and_drive_hosts():
    csp = content_security_policy([], google=True)
    assert "https://accounts.google.com/gsi/client" in csp
    assert "https://www.googleapis.com" in csp


def test_kdf_worker_may_compile_wasm():
    assert "'wasm-unsafe-eval'" in content_security_policy([], google=False, wasm=True)


def test_cache_control():
    assert cache_control("/assets/root-abc.js") == "public, max-age=31536000, immutable"
    assert cache_control("/assets/root-abc.js", 304) == "public, max-age=31536000, immutable"
    assert cache_control("/sw.js") == "no-cache"
    assert cache_control("/api/v1/me") == "no-store"
    # Pages are revalidated (a cached page would start an old build after a deploy), and so is
    # every other file without a hash in its name.
    assert cache_control("/home") == "no-cache"
    assert cache_control("/") == "no-cache"
    assert cache_control("/theme.css") == "no-cache"
    # A chunk not found (an old worker asked for a new build's chunk) is not kept for a year.
    assert cache_control("/assets/root-new.js", 404) == "no-store"


def test_the_cache_control_follows_the_answer():
    inner = Starlette(routes=[
        Route("/assets/root-abc.js", lambda _r: HTMLResponse("x", headers={"cache-control": "max-age=60"})),
        Route("/home", lambda _r: HTMLResponse("<html></html>")),
        Route("/dev-idp/x", lambda _r: HTMLResponse("<html></html>", headers={"cache-control": "no-store"})),
    ])
    client = TestClient(SecurityHeaders(inner))
    assert client.get("/dev-idp/x").headers.get_list("cache-control") == ["no-store"]  # the route's own
    assert client.get("/assets/root-abc.js").headers.get_list("cache-control") == [
        "public, max-age=31536000, immutable"]
    assert client.get("/assets/root-new.js").headers.get_list("cache-control") == ["no-store"]
    assert client.get("/home").headers.get_list("cache-control") == ["no-cache"]


@pytest.mark.parametrize(
    "path, content_type, full",
    [
        ("/", b"text/html; charset=utf-8", True),
        ("/home", b"text/html", True),
        ("/api/v1/docs", b"text/html; charset=utf-8", True),
        ("/dev-idp/authorize", b"TEXT/HTML", True),
        ("/no-type", b"", True),  # unknown: treated as a document (the full policy)
        ("/sw.js", b"text/javascript", True),  # workers take their policy from their script
        ("/kdf-worker.js", b"application/javascript", True),
        ("/assets/root-abc.js", b"text/javascript", False),
        ("/assets/__reflex_global_styles-x.css", b"text/css", False),
        ("/icon-192.png", b"image/png", False),
        ("/register-sw.js", b"text/javascript", False),
        ("/api/v1/me", b"application/json", False),
        ("/logo.svg", b"image/svg+xml", False),  # opened as a document, SUBRESOURCE_CSP runs nothing
    ],
)
def test_which_responses_carry_the_full_policy(path, content_type, full):
    assert governs_a_document(path, content_type) is full


def test_the_subresource_policy_forbids_everything():
    assert SUBRESOURCE_CSP == "default-src 'none'; frame-ancestors 'none'"


def test_only_a_document_reads_the_builds_script_hashes(monkeypatch):
    """The hashes' freshness check costs two stat calls: an API answer must not pay for it."""
    inner = Starlette(routes=[
        Route("/api/v1/me", lambda _r: JSONResponse({"ok": True})),
        Route("/home", lambda _r: HTMLResponse("<html></html>")),
    ])
    reads: list[str] = []
    monkeypatch.setattr(SecurityHeaders, "_script_hashes", lambda self: reads.append("read") or ["'sha256-abc'"])
    client = TestClient(SecurityHeaders(inner))

    assert client.get("/api/v1/me").headers["content-security-policy"] == SUBRESOURCE_CSP
    assert reads == []
    assert "'sha256-abc'" in client.get("/home").headers["content-security-policy"]
    assert reads == ["read"]
