"""Builds the wallet_js test bundle, serves it on 127.0.0.1 and drives Chromium.

Shared by tests/js and bench/kdf.py. Layout served (all beside each other, like
assets/ at the site root in the app):
  /index.html  /bundle.js  /kdf-worker.js  /argon2/{lib,dist}/...
plus broken copies of the worker used to check 'failed to load argon2':
  /nolib/ (no argon2 files), /nowasm/ (no .wasm), /badwasm/ (garbage .wasm),
  /nocsp/ (worker served without 'wasm-unsafe-eval');
and /nosimd/, where the SIMD file holds the plain build, to check that build too.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from custom_components.wallet_js.vendor import ARGON2_FILES, copy_argon2  # noqa: E402
from tests.e2e.helpers import CHROMIUM, CHROMIUM_ARGS, CHROMIUM_DESKTOP  # noqa: E402,F401  (the project's; re-exported)

PAGE_CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'self'"
WORKER_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'"
INDEX_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>wallet_js</title>
<script type="module" src="/bundle.js"></script></head><body></body></html>"""


def build_bundle(out_file: Path, entry: Path = REPO / "tests" / "js" / "entry.js") -> None:
    """bun build of `entry` (tests/js/entry.js by default); 'ethers' resolves from tools/node_modules."""
    env = dict(os.environ)
    env["NODE_PATH"] = str(REPO / "tools" / "node_modules")
    env.setdefault("BUN_INSTALL_CACHE_DIR", str(REPO / ".cache" / "bun-install"))
    env.setdefault("BUN_RUNTIME_TRANSPILER_CACHE_PATH", str(REPO / ".cache" / "bun-transpiler"))
    bun = REPO / "tools" / "node_modules" / ".bin" / "bun"
    subprocess.run(
        [str(bun), "build", str(entry), "--target", "browser",
         "--format", "esm", "--outfile", str(out_file)],
        check=True, env=env, cwd=REPO, timeout=120, capture_output=True,
    )


def prepare_site(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    build_bundle(root / "bundle.js")
    (root / "index.html").write_text(INDEX_HTML)
    worker = REPO / "assets" / "kdf-worker.js"
    shutil.copyfile(worker, root / "kdf-worker.js")
    copy_argon2(root / "argon2")
    for name in ("nolib", "nowasm", "badwasm", "nocsp", "nosimd"):
        d = root / name
        d.mkdir(exist_ok=True)
        shutil.copyfile(worker, d / "kdf-worker.js")
        if name != "nolib":
            copy_argon2(d / "argon2")
    for rel in ARGON2_FILES:
        if rel.endswith(".wasm"):
            (root / "nowasm" / "argon2" / rel).unlink()
            (root / "badwasm" / "argon2" / rel).write_bytes(b"\x00asm\x01\x00\x00\x00garbage")
    nosimd = root / "nosimd" / "argon2" / "dist"
    shutil.copyfile(nosimd / "argon2.wasm", nosimd / "argon2-simd.wasm")
    return root


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".wasm": "application/wasm",
    }

    def end_headers(self) -> None:
        path = self.path.split("?")[0]
        if path.endswith("kdf-worker.js"):
            csp = PAGE_CSP if path.startswith("/nocsp/") else WORKER_CSP
        else:
            csp = PAGE_CSP
        self.send_header("Content-Security-Policy", csp)
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, *args) -> None:  # keep test output quiet
        pass


@contextlib.contextmanager
def serve(root: Path):
    """Threaded static server on 127.0.0.1 (a secure context); yields its base URL."""
    handler = functools.partial(_Handler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def launch(pw):
    return pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True, timeout=30_000)


@contextlib.contextmanager
def chromium():
    """A Chromium with its own Playwright driver, for scripts (the tests share the `pw` fixture)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser, base_url: str):
    """New context (fresh localStorage) with the bundle loaded; returns (context, page)."""
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{base_url}/index.html")
    page.wait_for_function("() => window.nb !== undefined", timeout=30_000)
    return context, page
