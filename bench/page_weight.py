"""Page weight of / : the wallet app against a blank Reflex 0.10.1 app built the same way.

Both are production builds served by `reflex run --env prod --single-port` (the wallet through
wallet_app.serve, the blank app from sources generated in a temp dir), loaded in Chromium at
390x844 with a fresh context and the cache disabled. Bytes come from CDP Network events:
transferred = Network.loadingFinished.encodedDataLength (body as sent plus headers),
decoded = sum of Network.dataReceived.dataLength.

Heavy libraries must not load on / (they are lazy). Detection, on every script the page loaded:
string literals that survive minification and tree-shaking, checked at each run against
minified bundles built with bun from the installed packages (so a library upgrade that drops a
marker fails the bench instead of hiding the library), plus the script and request URLs.

Usage: source env.sh && python bench/page_weight.py [--runs 5] [--cpu-rate 4]
Exit code 0 when the ratio is within the target and no heavy library loaded, else 1.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.e2e import helpers  # noqa: E402

TARGET_RATIO = 1.3
RESULTS_FILE = REPO_ROOT / "bench" / "results" / "page_weight.json"

# Library -> (content markers, URL substrings, a tiny entry importing it for the marker check).
HEAVY_LIBS: dict[str, dict] = {
    "ethers": {
        # getBytes() error text: in every ethers v6 entry point, even getAddress alone.
        "content": ["invalid BytesLike value"],
        "url": ["ethers"],
        "probe": "import { getAddress } from 'ethers'; window.__p = getAddress;",
    },
    "argon2": {
        # argon2-browser's Emscripten export and its lib's enum name.
        "content": ["argon2_hash", "ArgonType"],
        "url": ["argon2", ".wasm"],
        "probe_files": ["argon2-browser/lib/argon2.js", "argon2-browser/dist/argon2.js"],
    },
    "jsqr": {
        "content": ["Malformed data passed to binarizer"],
        "url": ["jsqr"],
        "probe": "import jsQR from 'jsqr'; window.__p = jsQR;",
    },
    "qrcode": {
        "content": ["bad maskPattern", "toSJISFunc"],
        "url": ["qrcode"],
        "probe": "import QRCode from 'qrcode'; window.__p = QRCode.toString;",
    },
}

# Reflex's blank template (reflex_base/.templates/apps/blank), config like-for-like with the
# wallet's rxconfig.py: Radix Themes, no sitemap, no 'built with Reflex' badge, no Tailwind.
BLANK_RXCONFIG = """import reflex as rx

config = rx.Config(
    app_name="blank_app",
    telemetry_enabled=False,
    plugins=[rx.plugins.RadixThemesPlugin()],
    disable_plugins=[rx.plugins.SitemapPlugin],
    show_built_with_reflex=False,
)
"""
BLANK_PAGE = '''import reflex as rx

from rxconfig import config


class State(rx.State):
    """The app state."""


def index() -> rx.Component:
    return rx.container(
        rx.color_mode.button(position="top-right"),
        rx.vstack(
            rx.heading("Welcome to Reflex!", size="9"),
            rx.text("Get started by editing ", rx.code(f"{config.app_name}/{config.app_name}.py"), size="5"),
            rx.link(
                rx.button("Check out our docs!"),
                href="https://reflex.dev/docs/getting-started/introduction/",
                is_external=True,
            ),
            spacing="5",
            justify="center",
            min_height="85vh",
        ),
    )


app = rx.App()
app.add_page(index)
'''


def find_heavy_libs(scripts: dict[str, str], urls: list[str]) -> dict[str, list[str]]:
    """Library -> evidence ('url: …' or 'marker "…" in …') found in loaded scripts and request URLs."""
    found: dict[str, list[str]] = {}
    for lib, spec in HEAVY_LIBS.items():
        hits = [f"url: {u}" for u in urls if any(s in u.lower() for s in spec["url"])]
        for url, text in scripts.items():
            hits += [f'marker "{m}" in {url}' for m in spec["content"] if m in text]
        if hits:
            found[lib] = hits
    return found


def verify_markers(workdir: Path) -> None:
    """Each library's markers must be found in its own minified bundle (installed versions)."""
    node_modules = REPO_ROOT / "tools" / "node_modules"
    env = dict(os.environ, NODE_PATH=str(node_modules))
    for lib, spec in HEAVY_LIBS.items():
        texts = [(node_modules / f).read_text(errors="replace") for f in spec.get("probe_files", [])]
        if "probe" in spec:
            entry, out = workdir / f"probe-{lib}.js", workdir / f"probe-{lib}.out.js"
            entry.write_text(spec["probe"])
            subprocess.run([str(node_modules / ".bin" / "bun"), "build", str(entry), "--target", "browser", "--format",
                            "esm", "--minify", "--outfile", str(out)], check=True, env=env, cwd=workdir, timeout=120,
                           capture_output=True)
            texts.append(out.read_text(errors="replace"))
        for text in texts:
            if not any(m in text for m in spec["content"]):
                raise SystemExit(f"page_weight: marker check failed: none of {spec['content']} in a {lib} build; "
                                 "update HEAVY_LIBS for the installed version")


def measure_load(browser, url: str, cpu_rate: float, want_bodies: bool) -> dict:
    """One cold load of `url` in a new phone context. Returns bytes, requests, FCP and (optionally) JS bodies."""
    ctx = browser.new_context(**helpers.MOBILE_CONTEXT)
    try:
        page = ctx.new_page()
        sw_urls: list[str] = []
        # Requests made by a service worker are not in the page's CDP session: list them apart.
        ctx.on("request", lambda r: sw_urls.append(r.url) if r.service_worker else None)
        cdp = ctx.new_cdp_session(page)
        reqs: dict[str, dict] = {}

        def sent(e):
            r = reqs.setdefault(e["requestId"], {"decoded": 0, "encoded": 0, "mime": "", "type": ""})
            r["url"] = e["request"]["url"]
            r["type"] = e.get("type", r["type"])

        def response(e):
            r = reqs.setdefault(e["requestId"], {"decoded": 0, "encoded": 0, "url": e["response"]["url"], "type": ""})
            r["mime"] = e["response"].get("mimeType", "")
            r["type"] = e.get("type", r["type"])

        def data(e):
            if e["requestId"] in reqs:
                reqs[e["requestId"]]["decoded"] += e["dataLength"]

        def finished(e):
            if e["requestId"] in reqs:
                reqs[e["requestId"]]["encoded"] = e["encodedDataLength"]

        cdp.on("Network.requestWillBeSent", sent)
        cdp.on("Network.responseReceived", response)
        cdp.on("Network.dataReceived", data)
        cdp.on("Network.loadingFinished", finished)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        if cpu_rate > 1:
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu_rate})
        page.goto(url, wait_until="load", timeout=120_000)
        page.wait_for_load_state("networkidle", timeout=60_000)
        page.wait_for_function("() => performance.getEntriesByName('first-contentful-paint').length > 0",
                               timeout=30_000)
        fcp = page.evaluate("() => performance.getEntriesByName('first-contentful-paint')[0].startTime")
        real = {k: r for k, r in reqs.items() if not r["url"].startswith(("data:", "blob:"))}
        js = {k: r for k, r in real.items() if is_js(r)}
        bodies = {}
        if want_bodies:
            for k, r in js.items():
                body = cdp.send("Network.getResponseBody", {"requestId": k})
                text = (base64.b64decode(body["body"]).decode("utf-8", "replace") if body["base64Encoded"]
                        else body["body"])
                bodies[r["url"]] = text
        return {
            "requests": len(real),
            "js_requests": len(js),
            "js_transferred": sum(r["encoded"] for r in js.values()),
            "js_decoded": sum(r["decoded"] for r in js.values()),
            "all_transferred": sum(r["encoded"] for r in real.values()),
            "fcp_ms": fcp,
            "urls": sorted({r["url"] for r in real.values()}),
            # Per script (path, hash stripped by the reader): what to look at when the ratio moves.
            "js_sizes": {r["url"]: r["encoded"] for r in sorted(js.values(), key=lambda r: -r["encoded"])},
            "sw_urls": sorted(set(sw_urls)),
            "bodies": bodies,
        }
    finally:
        ctx.close()


def is_js(r: dict) -> bool:
    path = r["url"].split("?", 1)[0]
    return r.get("type") == "Script" or "javascript" in r.get("mime", "") or path.endswith((".js", ".mjs"))


def measure_app(browser, name: str, base_url: str, runs: int, cpu_rate: float) -> dict:
    normal = [measure_load(browser, base_url + "/", 1, want_bodies=(i == 0)) for i in range(runs)]
    slow = [measure_load(browser, base_url + "/", cpu_rate, want_bodies=False) for _ in range(runs)]
    med = lambda key, rs=normal: statistics.median(r[key] for r in rs)  # noqa: E731
    return {
        "name": name,
        "requests": med("requests"),
        "js_requests": med("js_requests"),
        "js_transferred": med("js_transferred"),
        "js_decoded": med("js_decoded"),
        "all_transferred": med("all_transferred"),
        "fcp_ms": med("fcp_ms"),
        "fcp_ms_slow": med("fcp_ms", slow),
        "cpu_rate": cpu_rate,
        "runs": runs,
        "urls": normal[0]["urls"],
        "js_sizes": normal[0]["js_sizes"],
        "sw_urls": sorted({u for r in normal for u in r["sw_urls"]}),
        "bodies": normal[0]["bodies"],
    }


def start_blank_app(workdir: Path, port: int, log_path: Path) -> helpers.Server:
    app_dir = workdir / "blank"
    (app_dir / "blank_app").mkdir(parents=True)
    (app_dir / "assets").mkdir()
    (app_dir / "rxconfig.py").write_text(BLANK_RXCONFIG)
    (app_dir / "blank_app" / "__init__.py").write_text("")
    (app_dir / "blank_app" / "blank_app.py").write_text(BLANK_PAGE)
    cmd = ["reflex", "run", "--env", "prod", "--single-port", "--frontend-port", str(port),
           "--backend-port", str(port), "--backend-host", "127.0.0.1"]
    return helpers.start_server("blank app", cmd, port=port, cwd=app_dir, log_path=log_path,
                                env={"PYTHONUNBUFFERED": "1"})


def kb(n: float) -> str:
    return f"{n / 1024:.1f}kB"


def report_line(a: dict) -> str:
    return (f"{a['name']:<6} requests={a['requests']:.0f} (js {a['js_requests']:.0f})  "
            f"js_transferred={kb(a['js_transferred'])}  js_decoded={kb(a['js_decoded'])}  "
            f"all_transferred={kb(a['all_transferred'])}  fcp_median={a['fcp_ms']:.0f}ms  "
            f"fcp_median@{a['cpu_rate']:g}xCPU={a['fcp_ms_slow']:.0f}ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cpu-rate", type=float, default=4)
    parser.add_argument("--start-timeout", type=float, default=600, help="seconds per server to build and start")
    parser.add_argument("--max-seconds", type=int, default=1800, help="hard limit for the whole bench")
    args = parser.parse_args()

    def _overtime(*_):
        raise TimeoutError(f"page_weight: over --max-seconds={args.max_seconds}")

    signal.signal(signal.SIGALRM, _overtime)
    signal.alarm(args.max_seconds)

    from playwright.sync_api import sync_playwright

    workdir = Path(tempfile.mkdtemp(prefix="page-weight-"))
    logs = REPO_ROOT / "bench" / "results"
    servers: list[helpers.Server] = []
    try:
        verify_markers(workdir)
        wallet = helpers.start_wallet_app(helpers.free_port(), workdir, logs / "page_weight-wallet.log")
        servers.append(wallet)
        blank = start_blank_app(workdir, helpers.free_port(), logs / "page_weight-blank.log")
        servers.append(blank)
        for s in servers:  # both build at once; wait for each
            helpers.wait_until_up(s, timeout=args.start_timeout)
        print(f"page_weight: servers up (logs in {logs})", flush=True)
        with sync_playwright() as p:
            browser = helpers.launch_chromium(p)
            try:
                results = [measure_app(browser, name, s.base_url, args.runs, args.cpu_rate)
                           for name, s in (("wallet", wallet), ("blank", blank))]
            finally:
                browser.close()
    finally:
        for s in servers:
            helpers.stop_server(s)
        shutil.rmtree(workdir, ignore_errors=True)
        signal.alarm(0)

    w, b = results
    for a in results:
        print(report_line(a))
    for a in results:
        if a["sw_urls"]:
            print(f"{a['name']}: service worker fetched {len(a['sw_urls'])}: " + " ".join(a["sw_urls"]))
    heavy = find_heavy_libs(w["bodies"], w["urls"] + w["sw_urls"])
    heavy_blank = find_heavy_libs(b["bodies"], b["urls"])
    for lib, hits in heavy.items():
        print(f"heavy library on wallet /: {lib}: " + "; ".join(hits[:5]))
    if heavy_blank:  # would mean a marker matches Reflex itself: the check is broken
        print(f"page_weight: marker false positive on the blank app: {heavy_blank}")
    ratio = w["js_transferred"] / b["js_transferred"]
    ok = ratio <= TARGET_RATIO and not heavy and not heavy_blank
    print(f"ratio js_transferred wallet/blank = {ratio:.2f}x  target <= {TARGET_RATIO}  {'PASS' if ok else 'FAIL'}")
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(
        {"ratio": ratio, "target": TARGET_RATIO, "pass": ok, "heavy_libs": heavy,
         "apps": [{k: v for k, v in a.items() if k != "bodies"} for a in results]}, indent=2))
    print(f"page_weight: js_transferred wallet={kb(w['js_transferred'])} blank={kb(b['js_transferred'])} "
          f"ratio={ratio:.2f}x (target <= {TARGET_RATIO}) heavy_libs={','.join(heavy) or 'none'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
