"""QrScanButton (custom_components/wallet_js/qr_scan.jsx) in real Chromium with a fake camera.

The test page (tests/js/qr_entry.jsx) is bundled by bun with code splitting, so the lazily
imported jsqr becomes its own chunk whose fetch we can watch. React, @radix-ui/themes
resolve from .web/node_modules (installed by the Reflex build), jsqr from tools/node_modules.
Two extra Chromiums share the session's Playwright:
  scanner: fake UI + fake device fed a Y4M of a QR code (tests/e2e/y4m.py)
  plain:   fake device (its built-in test pattern, no QR) and no fake UI, so the camera
           permission decides: not granted -> NotAllowedError, granted -> a live stream. The
           desktop build: the headless shell has no permission prompt (NotSupportedError).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading

import pytest

import browser_harness
from browser_harness import CHROMIUM, CHROMIUM_ARGS, CHROMIUM_DESKTOP, REPO

sys.path.insert(0, str(REPO))
from custom_components.wallet_js.qr_scan import QrScanButton  # noqa: E402
from tests.e2e.y4m import write_qr_y4m  # noqa: E402
from wallet_app.i18n import ERROR_TEXTS  # noqa: E402

ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55 mixed case, kept as is
QR_TEXT = f"Pay {ADDRESS} please"
HEX40 = "ab" * 20
INDEX = """<!doctype html><html><head><meta charset="utf-8"><title>qr</title>
<script src="/error_texts.js"></script>
<script type="module" src="/qr_entry.js"></script></head><body></body></html>"""
SCAN = "Scan QR code"
# The app's policy (design.md section 8): Radix's dialog adds an inline <style> (scroll lock).
APP_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'self'"
CONSTRAINTS = {"audio": False, "video": {"facingMode": {"ideal": "environment"},
                                         "width": {"ideal": 1280}, "height": {"ideal": 720}}}


def _build_site(root):
    """bun build --splitting of qr_entry.jsx; returns the jsqr chunk's file name."""
    node_modules = REPO / ".web" / "node_modules"
    if not (node_modules / "react").is_dir() or not (node_modules / "@radix-ui" / "themes").is_dir():
        pytest.fail(".web/node_modules lacks react or @radix-ui/themes: build the app once (reflex export)")
    env = dict(os.environ)
    env["NODE_PATH"] = os.pathsep.join([str(node_modules), str(REPO / "tools" / "node_modules")])
    env.setdefault("BUN_INSTALL_CACHE_DIR", str(REPO / ".cache" / "bun-install"))
    env.setdefault("BUN_RUNTIME_TRANSPILER_CACHE_PATH", str(REPO / ".cache" / "bun-transpiler"))
    subprocess.run(
        [str(REPO / "tools" / "node_modules" / ".bin" / "bun"), "build", str(REPO / "tests" / "js" / "qr_entry.jsx"),
         "--target", "browser", "--format", "esm", "--splitting", "--outdir", str(root)],
        check=True, env=env, cwd=REPO, timeout=120, capture_output=True,
    )
    (root / "index.html").write_text(INDEX)
    # The code -> text map the app hands the component (wallet_app.i18n.error_messages(), en).
    (root / "error_texts.js").write_text(f"window.ERROR_TEXTS = {json.dumps(ERROR_TEXTS['en'])};\n")
    (root / "favicon.ico").write_bytes(b"")  # no 404 in the console
    chunks = [p.name for p in root.glob("*.js") if "inversionAttempts" in p.read_text()]
    assert len(chunks) == 1 and chunks[0] != "qr_entry.js", chunks  # jsqr is split out
    return chunks[0]


class _Handler(browser_harness._Handler):
    """The harness's quiet static handler with the app's CSP instead of the crypto pages' one."""

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", APP_CSP)
        self.send_header("Cache-Control", "no-store")
        http.server.SimpleHTTPRequestHandler.end_headers(self)


@pytest.fixture(scope="module")
def qr_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("qr_site")
    jsqr_chunk = _build_site(root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", jsqr_chunk
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def scanner(browser, tmp_path_factory):
    video = write_qr_y4m(tmp_path_factory.mktemp("y4m") / "qr.y4m", QR_TEXT)
    b = browser.browser_type.launch(executable_path=CHROMIUM, headless=True, timeout=30_000, args=[
        *CHROMIUM_ARGS, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-video-capture={video}"])
    yield b
    b.close()


@pytest.fixture(scope="module")
def plain(browser):
    b = browser.browser_type.launch(executable_path=CHROMIUM_DESKTOP, headless=True, timeout=30_000,
                                    args=[*CHROMIUM_ARGS, "--use-fake-device-for-media-stream"])
    yield b
    b.close()


def _open(b, qr_site, grant=False):
    url, _ = qr_site
    context = b.new_context()
    if grant:
        context.grant_permissions(["camera"], origin=url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    requests = []
    page.on("request", lambda r: requests.append(r.url.rsplit("/", 1)[-1]))
    issues = []
    page.on("pageerror", lambda e: issues.append(str(e)))
    page.on("console", lambda m: m.type == "error" and issues.append(m.text))
    page.goto(f"{url}/index.html")
    page.get_by_role("button", name=SCAN).wait_for()
    return context, page, requests, issues


def _qr(page, expr):
    return page.evaluate(f"() => window.qr.{expr}")


# --- pure functions ---------------------------------------------------------------------

RECIPIENT_CASES = [
    (QR_TEXT, ADDRESS),                                       # the address in a text, case kept
    (f" ethereum:{ADDRESS}@31337 ", f"ethereum:{ADDRESS}@31337"),  # EIP-681 URI: whole, for the server
    (f"ETHEREUM:pay-{ADDRESS}@1/transfer?address=0x{HEX40}&uint256=1e6",
     f"ETHEREUM:pay-{ADDRESS}@1/transfer?address=0x{HEX40}&uint256=1e6"),
    (f"see ethereum:{ADDRESS}", ADDRESS),                     # a URI inside a text is no URI
    (f"  {ADDRESS}\n", ADDRESS),
    (f"pay0x{HEX40}now", f"0x{HEX40}"),                       # no word boundary needed
    (f"0x{HEX40} 0x{'cd' * 20}", f"0x{HEX40}"),               # two addresses -> the first
    (f"0x{HEX40}f", f"0x{HEX40}"),                            # 41 hex -> its first 40 (substring rule)
    (f" 0x{HEX40[:39]} ", f"0x{HEX40[:39]}"),                 # 39 hex: no address -> trimmed text
    (f"0X{HEX40}", f"0X{HEX40}"),                             # only a lowercase 0x prefix counts
    (f"0xzz 0x{HEX40}", f"0x{HEX40}"),                        # a bad 0x first, then an address
    ("  hello world \t", "hello world"),
    ("   ", ""),
    ("", ""),
    (None, ""),
]


def test_recipient_from_scan_table(browser, qr_site):
    context, page, _, _ = _open(browser, qr_site)
    try:
        got = page.evaluate("(cases) => cases.map((t) => window.qr.recipientFromScan(t))",
                            [c[0] for c in RECIPIENT_CASES])
        assert got == [c[1] for c in RECIPIENT_CASES]
    finally:
        context.close()


ORIGIN = "https://wallet.example.com"
OWN_LINK = f"{ORIGIN}/payment?merchant={ADDRESS}&chain_id=31337&token=0x{HEX40}&amount=1.5"
OWN_LINK_CASES = [
    # a merchant link to this wallet: whole (trimmed), for Send to open it, not its first address
    (f" {OWN_LINK}\n", ORIGIN, OWN_LINK),
    (f"{ORIGIN}/payment/?token=0x{HEX40}&merchant={ADDRESS}", ORIGIN,
     f"{ORIGIN}/payment/?token=0x{HEX40}&merchant={ADDRESS}"),
    # another site's, another page, no query, or no origin given: the scanner's rule as before
    (OWN_LINK.replace(ORIGIN, "https://evil.example"), ORIGIN, ADDRESS),
    (OWN_LINK.replace(ORIGIN, "http://wallet.example.com"), ORIGIN, ADDRESS),
    (OWN_LINK.replace("/payment", "/sign"), ORIGIN, ADDRESS),
    (f"{ORIGIN}/payment", ORIGIN, f"{ORIGIN}/payment"),
    (f"see {OWN_LINK}", ORIGIN, ADDRESS),
    (OWN_LINK, "", ADDRESS),
]


def test_recipient_from_scan_keeps_a_link_to_this_wallet_whole(browser, qr_site):
    context, page, _, _ = _open(browser, qr_site)
    try:
        got = page.evaluate("(cases) => cases.map(([t, o]) => window.qr.recipientFromScan(t, o))",
                            [[c[0], c[1]] for c in OWN_LINK_CASES])
        assert got == [c[2] for c in OWN_LINK_CASES]
    finally:
        context.close()


def test_camera_error_code_table(browser, qr_site):
    context, page, _, _ = _open(browser, qr_site)
    try:
        got = page.evaluate("""() => {
            const f = window.qr.cameraErrorCode;
            const dom = (name, msg = '') => new DOMException(msg, name);
            return [
              f(dom('NotAllowedError', 'Permission denied')),
              f(dom('SecurityError')),
              f(dom('NotFoundError', 'Requested device not found')),
              f(dom('OverconstrainedError')),
              f(dom('NotReadableError', 'Could not start video source')),  // the browser's English: not shown
              f(dom('AbortError')),
              f(new Error('')),
              f(null),
            ];
        }""")
        assert got == ["CAMERA_PERMISSION", "CAMERA_PERMISSION", "CAMERA_NOT_FOUND", "CAMERA_NOT_FOUND",
                       "CAMERA_FAILED", "CAMERA_FAILED", "CAMERA_FAILED", "CAMERA_FAILED"]
    finally:
        context.close()


def test_error_text_table(browser, qr_site):
    """errors.js errorText: the code's text with {placeholders} filled; an unknown code (or none)
    shows the generic text, never the code."""
    context, page, _, _ = _open(browser, qr_site)
    try:
        got = page.evaluate("""() => {
            const e = window.qr.ERRORS, f = window.qr.errorText;
            return [
              f(e, 'CAMERA_PERMISSION'),
              f(e, 'DRIVE_LIST_FAILED', {status: 401}),
              f(e, 'DRIVE_LIST_FAILED', {status: 0}),
              f(e, 'DRIVE_LIST_FAILED'),
              f(e, 'NO_SUCH_CODE'),
              f(e, 'toString'),
              f(e, undefined),
              f(e, 'max_decimals', {decimals: 6}),
            ];
        }""")
        assert got == ["Camera permission is required.", "Drive list failed: 401", "Drive list failed: 0",
                       "Drive list failed: ", "Unknown error", "Unknown error", "Unknown error",
                       "max 6 decimal places"]
    finally:
        context.close()


# --- the component in Chromium ----------------------------------------------------------

def test_scan_hands_the_address_to_on_scan(scanner, qr_site):
    context, page, requests, issues = _open(scanner, qr_site)
    try:
        jsqr_chunk = qr_site[1]
        assert jsqr_chunk not in requests  # lazily loaded: not before the dialog opens
        assert _qr(page, "constraints.length") == 0
        page.get_by_role("button", name=SCAN).click()
        page.wait_for_function("() => window.qr.scans.length > 0", timeout=10_000)
        assert _qr(page, "scans") == [ADDRESS]
        assert _qr(page, "errors") == []
        assert jsqr_chunk in requests
        assert _qr(page, "constraints") == [CONSTRAINTS]
        # Closed and the camera released.
        page.get_by_role("dialog").wait_for(state="detached")
        assert _qr(page, "streamCount()") == 1
        assert _qr(page, "liveTracks()") == 0
        assert issues == []
    finally:
        context.close()


def test_permission_denied_shows_the_permission_text(plain, qr_site):
    context, page, _, _ = _open(plain, qr_site)  # no fake UI, permission not granted
    try:
        page.get_by_role("button", name=SCAN).click()
        dialog = page.get_by_role("dialog")
        alert = dialog.get_by_role("alert")
        alert.wait_for()
        assert alert.inner_text() == "Camera permission is required."
        assert _qr(page, "errors") == ["Camera permission is required."]
        assert _qr(page, "streamCount()") == 0
        dialog.get_by_role("button", name="Close").click()
        dialog.wait_for(state="detached")
        assert _qr(page, "scans") == []
    finally:
        context.close()


def test_close_while_scanning_stops_the_camera(plain, qr_site):
    context, page, _, issues = _open(plain, qr_site, grant=True)  # test pattern, no QR
    try:
        page.get_by_role("button", name=SCAN).click()
        page.wait_for_function("() => window.qr.liveTracks() === 1 && document.querySelector('video').readyState >= 2")
        page.get_by_role("dialog").get_by_role("button", name="Close").click()
        page.get_by_role("dialog").wait_for(state="detached")
        assert _qr(page, "liveTracks()") == 0
        assert _qr(page, "scans") == [] and _qr(page, "errors") == []
        assert issues == []
    finally:
        context.close()


def test_close_while_starting_stops_the_late_stream(plain, qr_site):
    context, page, _, _ = _open(plain, qr_site, grant=True)
    try:
        page.evaluate("() => { window.qr.delayMs = 800; }")
        page.get_by_role("button", name=SCAN).click()
        page.get_by_role("dialog").get_by_role("button", name="Close").click()
        page.get_by_role("dialog").wait_for(state="detached")
        page.wait_for_function("() => window.qr.streamCount() === 1")  # granted after the close
        page.wait_for_function("() => window.qr.liveTracks() === 0")
        assert _qr(page, "errors") == []
    finally:
        context.close()


def test_camera_start_timeout(plain, qr_site):
    """getUserMedia slower than 5 s: 'Failed to access camera.', and the late stream is stopped."""
    context, page, _, _ = _open(plain, qr_site, grant=True)
    try:
        page.evaluate("() => { window.qr.delayMs = 5200; }")
        started = page.evaluate("() => performance.now()")
        page.get_by_role("button", name=SCAN).click()
        alert = page.get_by_role("dialog").get_by_role("alert")
        alert.wait_for(timeout=8_000)
        assert page.evaluate("() => performance.now()") - started >= 4_900
        assert alert.inner_text() == "Failed to access camera."
        assert _qr(page, "errors") == ["Failed to access camera."]
        page.wait_for_function("() => window.qr.streamCount() === 1", timeout=5_000)
        page.wait_for_function("() => window.qr.liveTracks() === 0")
    finally:
        context.close()


# --- the Reflex wrapper -----------------------------------------------------------------

def test_wrapper_renders_the_component_and_pins_jsqr():
    import reflex as rx

    pinned = json.loads((REPO / "tools" / "package.json").read_text())["dependencies"]["jsqr"]
    assert QrScanButton.lib_dependencies == [f"jsqr@{pinned}"]
    comp = QrScanButton.create(messages={"scan_qr": "Scan"}, errors={"UNKNOWN": "Unknown"}, on_scan=rx.console_log,
                               on_error=rx.console_log)
    rendered = str(comp)
    assert rendered.startswith("jsx(QrScanButton,")
    assert "onScan:" in rendered and "onError:" in rendered and '["scan_qr"] : "Scan"' in rendered
    imports = comp._get_all_imports()
    assert any(k.endswith("/qr_scan/qr_scan.jsx") for k in imports)
    assert "jsqr@1.4.0" in imports
