"""Security headers for every response (pages, chunks, assets, API), as one ASGI middleware.

Reflex mounts its static files before api_transformer runs, so wrapping the whole ASGI app
reaches everything (design.md section 8). The inline scripts Reflex's prerendered HTML needs
are allowed by hash, computed from the build output (the hashes change with every build).

The full policy (about 1.5 kB with the hashes) only governs documents and workers; a browser
ignores a script's, style sheet's, image's or JSON answer's own CSP, COOP and Permissions-Policy
when it uses them. So those get a short policy that forbids everything (should one be opened as
a document, e.g. an SVG, nothing in it runs) and no document-only headers: on / that is some
35 kB of headers less over HTTP/1.1 (bench/page_weight.py).
"""

import base64
import hashlib
import os
import re
from pathlib import Path

from wallet_app.core.config import REPO_ROOT, get_settings

# Reflex builds into REFLEX_WEB_WORKDIR when set (the e2e servers each use their own).
BUILD_DIR = REPO_ROOT / os.environ.get("REFLEX_WEB_WORKDIR", ".web") / "build" / "client"
_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S)
GOOGLE_SCRIPT_HOSTS = "https://accounts.google.com/gsi/client"
GOOGLE_CONNECT_HOSTS = "https://accounts.google.com https://oauth2.googleapis.com https://www.googleapis.com"
GOOGLE_FRAME_HOSTS = "https://accounts.google.com"
# Over https: browsers come back only over https for two years, subdomains included.
HSTS = b"max-age=63072000; includeSubDomains"
# Worker scripts: a worker's policy is its own script's response header (design.md section 8).
WORKER_SCRIPTS = {"/sw.js", "/kdf-worker.js"}
# What a response that says nothing about caching gets, outside /api/ and /assets/.
REVALIDATE = "no-cache"
# For everything that is neither a document nor a worker.
SUBRESOURCE_CSP = "default-src 'none'; frame-ancestors 'none'"


def inline_script_hashes(build_dir: Path) -> list[str]:
    """'sha256-…' for every inline script in the prerendered pages."""
    found: set[str] = set()
    for html in sorted(build_dir.rglob("*.html")):
        for body in _INLINE_SCRIPT.findall(html.read_bytes()):
            found.add("'sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode() + "'")
    return sorted(found)


def content_security_policy(script_hashes: list[str], google: bool, wasm: bool = False) -> str:
    script = ["'self'", *script_hashes]
    connect = ["'self'"]
    frame = ["'none'"]
    style = ["'self'", "'unsafe-inline'"]
    if google:
        script.append(GOOGLE_SCRIPT_HOSTS)
        connect.append(GOOGLE_CONNECT_HOSTS)
        frame = [GOOGLE_FRAME_HOSTS]
        style.append("https://accounts.google.com/gsi/style")
    if wasm:
        script.append("'wasm-unsafe-eval'")
    return "; ".join(
        [
            "default-src 'self'",
            "script-src " + " ".join(script),
            "style-src " + " ".join(style),
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src " + " ".join(connect),
            "frame-src " + " ".join(frame),
            "worker-src 'self'",
            "manifest-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def governs_a_document(path: str, content_type: bytes) -> bool:
    """Whether the response's own CSP, COOP and Permissions-Policy take effect: an HTML page
    (or the API docs) is a document, /sw.js and /kdf-worker.js are workers."""
    return path in WORKER_SCRIPTS or content_type.split(b";")[0].strip().lower() in (b"text/html", b"")


def cache_control(path: str, status: int = 200) -> str:
    """API answers are never stored. Only a hashed build chunk found may be reused unasked; anything
    else (pages, /sw.js, the files from assets/) is revalidated each time, a 304 when unchanged
    (REVALIDATE, unless its route sets its own). Without a Cache-Control a browser may reuse a
    page unasked for a tenth of its age (from its Last-Modified), through the service worker's
    network-first fetch too, and start the old build after a deploy. A chunk not found (asked of
    an old worker during a deploy) must not be kept."""
    if path.startswith("/api/"):
        return "no-store"
    if path.startswith("/assets/"):  # the build's chunks, named by their hash (assets/ files are at the root)
        return "public, max-age=31536000, immutable" if status in (200, 304) else "no-store"
    return REVALIDATE


class SecurityHeaders:
    def __init__(self, app):
        self.app = app
        self._hashes: list[str] | None = None
        self._stamp: float | None = None
        self._google = not get_settings().dev_mode
        self._hsts = get_settings().https

    def _script_hashes(self) -> list[str]:
        index = BUILD_DIR / "index.html"
        stamp = index.stat().st_mtime if index.exists() else None
        if self._hashes is None or stamp != self._stamp:
            self._hashes = inline_script_hashes(BUILD_DIR) if stamp else []
            self._stamp = stamp
        return self._hashes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                cache: str | None = cache_control(path, message["status"])
                headers = list(message.get("headers", []))
                own_cache = any(k.lower() == b"cache-control" for k, _ in headers)
                if own_cache and cache == REVALIDATE:
                    cache = None  # a page's route chose its own (the development stand-ins' no-store)
                drop = {b"content-security-policy"} | ({b"cache-control"} if cache else set())
                headers = [(k, v) for k, v in headers if k.lower() not in drop]
                content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                document = governs_a_document(path, content_type)
                # Only a document's policy needs the build's hashes: their check is two stat calls,
                # 6-7 % of a worker's samples while it served /api/v1/me (bench/README.md, stop 28).
                csp = (
                    content_security_policy(self._script_hashes(), self._google, wasm=path == "/kdf-worker.js")
                    if document
                    else SUBRESOURCE_CSP
                )
                headers += [
                    (b"content-security-policy", csp.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    # Also governs the requests a style sheet makes (fonts, url()): on every response.
                    (b"referrer-policy", b"strict-origin-when-cross-origin"),
                ]
                if document:
                    headers += [
                        (b"permissions-policy", b"camera=(self), microphone=(), geolocation=()"),
                        (b"cross-origin-opener-policy", b"same-origin-allow-popups"),
                    ]
                if cache:
                    headers.append((b"cache-control", cache.encode()))
                if self._hsts:
                    headers.append((b"strict-transport-security", HSTS))
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, send_with_headers)
