"""Load: GET /api/v1/me, GET /api/v1/assets and a page load's websocket events at 50 concurrent
clients, on SQLite with 1 worker and on PostgreSQL + Redis with 2 workers, in one run.

Each stack is the real app (wallet_app.serve through tests/e2e/helpers.start_wallet_app: prod
build on one port, its own anvil, development sign-in) with DEV_BENCH_CEILING=1, which mounts a
bare Starlette route (/dev-bench/ceiling) in the same process: the ceiling, what the server
answers when a route does nothing. The second stack runs on a private PostgreSQL
(tools/pgserver.py, temp data) and a private Redis (tools/redisserver.py): REDIS_URL makes
serve.py start 2 granian workers.

Both stacks run at once. Per stack: --clients users sign in (bench/devstack.sign_in, each with a
registered address). Then --rounds rounds, the stacks taking turns (first one, then the other, the
order reversed each round), so a machine that slows down or speeds up during the run weighs on
both alike: in each, at --clients concurrent connections for --seconds / --rounds per route, the
ceiling, /me, /assets (wrk,
Debian's C load generator, installed with apt-get when missing; keep-alive, each request with
the next user's cookie), and page loads of /home: each a new websocket that replays the frames
Chromium sent on a real load of /home in this stack (captured once with Playwright: the
hydrate_and_load in the socket.io CONNECT, then the page's own events, each sent after as many
server updates as Chromium had seen), done when the server has sent as many updates as it did
to Chromium. The page loads run in --ws-procs processes (asyncio + websockets, raw frames),
for --seconds per stack after the rounds. A route's req/s is over all its rounds, its p50 and p99
the median of the rounds' (each round's are printed as it ends, with the CPU the idle stack used).

Prints req/s, p50, p99 and errors per route and stack, the CPU the server and the load
generator used, the machine's load average, the ratios (route/ceiling, 2 workers/1 worker),
and PASS/FAIL: /me p99 < 20 ms on each stack; /me req/s with 2 workers >= 1.6x with 1.

    source env.sh && python bench/load.py [--clients 50] [--seconds 30] [--rounds 3] [--only sqlite|pg]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.devstack import sign_in  # noqa: E402
from tests.e2e import helpers  # noqa: E402

RESULTS = REPO / "bench" / "results"
TARGET_ME_P99_MS = 20.0
TARGET_WORKER_SCALING = 1.6
CEILING_PATH = "/dev-bench/ceiling"  # wallet_app.dev.CEILING_PATH (not imported: dev stays out of the client)
PAGE = "/home"
WS_LOAD_TIMEOUT = 10.0  # a page load not done by then counts as an error
WRK_TIMEOUT = "10s"
WRK_ERRORS = ("connect", "read", "write", "status", "timeout")

# wrk's script: every request carries the next user's cookie (pre-formatted once per thread), and
# the summary is written as one JSON line so nothing parses wrk's human output.
WRK_SCRIPT = """
local cookies = {%(cookies)s}
local requests, i = {}, 0
function init(args)
  for k, c in ipairs(cookies) do
    requests[k] = wrk.format("GET", "%(path)s", {["Cookie"] = c})
  end
end
function request()
  i = i %% #requests + 1
  return requests[i]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests": %%d, "duration_us": %%d, "connect": %%d, "read": %%d, ' ..
    '"write": %%d, "status": %%d, "timeout": %%d, "p50_us": %%d, "p99_us": %%d, "max_us": %%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
"""


@dataclass
class Result:
    stack: str
    route: str
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int
    server_cpu_s: float  # the app's process tree (workers, relayer)
    client_cpu_s: float  # the load generator's own
    load_average: float

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


# ---------------------------------------------------------------- the load generators


def ensure_wrk() -> str:
    """wrk, from Debian's package (installed when missing, as root)."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() != 0:
        raise SystemExit("wrk is not installed: run `apt-get install wrk` as root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, timeout=600)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "wrk"], check=True, env=env, timeout=600, stdout=subprocess.DEVNULL
    )
    found = shutil.which("wrk")
    if not found:
        raise SystemExit("apt-get installed wrk but it is not on PATH")
    return found


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_wrk(wrk: str, base: str, path: str, cookies: list[str], clients: int, seconds: float, tmp: Path) -> dict:
    """One wrk run; its JSON summary plus its own CPU seconds."""
    script = tmp / "wrk.lua"
    script.write_text(WRK_SCRIPT % {"cookies": ", ".join(json.dumps(c) for c in cookies), "path": path})
    # One thread: wrk's event loop drives 50 connections on a fraction of a core, and a second thread
    # would take a core from the server on this 2-core machine.
    cmd = [
        wrk,
        "-t1",
        f"-c{clients}",
        f"-d{round(seconds)}s",
        f"--timeout={WRK_TIMEOUT}",
        "-s",
        str(script),
        base + path,
    ]
    before = children_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    cpu = children_cpu() - before
    match = re.search(r"^WRK_JSON (.*)$", proc.stdout, re.M)
    if proc.returncode != 0 or not match:
        raise RuntimeError(f"wrk failed ({proc.returncode}): {proc.stdout}\n{proc.stderr}")
    return {**json.loads(match.group(1)), "cpu_s": cpu}


@dataclass
class PageScript:
    """A page load as Chromium did it: the websocket URL's path, the socket.io CONNECT frame, the
    frames it sent after (each with the number of server updates seen before it), how many
    updates the server sent in all, and what they set (update_shape)."""

    ws_path: str
    connect: str
    sends: list[tuple[int, str]]
    updates: int
    shape: frozenset[str]


def update_shape(frames: list[str]) -> frozenset[str]:
    """The state vars and frontend events that socket.io update frames carry (values differ
    between loads: tokens, headers; names do not)."""
    names: set[str] = set()
    for frame in frames:
        body = json.loads(frame[frame.index("[") :])[1]
        names.update(f"{state}.{var}" for state, delta in body.get("delta", {}).items() for var in delta)
        names.update(f"event:{e.get('name')}" for e in body.get("events", []))
    return frozenset(names)


def capture_page_load(base: str, cookies: dict[str, str], quiet_s: float = 2.0, limit_s: float = 30.0) -> PageScript:
    """Loads PAGE in Chromium with the user's cookies and records its websocket frames until the
    socket has been quiet for `quiet_s` (bounded by `limit_s`)."""
    from playwright.sync_api import sync_playwright

    frames: list[tuple[str, float, str]] = []
    urls: list[str] = []

    def on_ws(ws) -> None:
        urls.append(ws.url)
        ws.on("framesent", lambda p: frames.append(("sent", time.monotonic(), p)))
        ws.on("framereceived", lambda p: frames.append(("recv", time.monotonic(), p)))

    with sync_playwright() as pw:
        browser = helpers.launch_chromium(pw)
        try:
            ctx = browser.new_context(base_url=base, **helpers.MOBILE_CONTEXT)
            ctx.add_cookies([{"name": k, "value": v, "url": base} for k, v in cookies.items()])
            page = ctx.new_page()
            page.on("websocket", on_ws)
            page.goto(PAGE)
            end = time.monotonic() + limit_s
            while time.monotonic() < end:
                last = frames[-1][1] if frames else time.monotonic()
                if frames and time.monotonic() - last > quiet_s:
                    break
                page.wait_for_timeout(100)  # lets Playwright deliver the frame events
        finally:
            browser.close()
    if len(urls) != 1:
        raise RuntimeError(f"expected one websocket on {PAGE}, saw {urls}")
    connect, sends, updates, received = None, [], 0, []
    for direction, _, payload in frames:
        if direction == "recv" and payload.startswith("42"):
            updates += 1
            received.append(payload)
        elif direction == "sent" and payload.startswith("40"):
            connect = payload
        elif direction == "sent" and payload.startswith("42"):
            sends.append((updates, payload))
    if connect is None or updates == 0:
        raise RuntimeError(f"no socket.io CONNECT or no update in the capture: {frames[:5]}")
    url = urls[0]
    return PageScript(
        url[url.index("/", len("ws://")) :].split("?")[0], connect, sends, updates, update_shape(received)
    )


async def page_load(base_ws: str, script: PageScript, cookie: str, origin: str) -> list[str]:
    """One page load: a new websocket (new client token) replaying `script`; the updates received."""
    import websockets

    url = f"{base_ws}{script.ws_path}?token={uuid.uuid4()}&EIO=4&transport=websocket"
    async with websockets.connect(
        url,
        additional_headers={"Cookie": cookie, "Origin": origin},
        subprotocols=None,
        compression=None,
        open_timeout=WS_LOAD_TIMEOUT,
    ) as ws:
        opened = await ws.recv()
        if not str(opened).startswith("0"):
            raise RuntimeError(f"no engine.io open: {opened!r}")
        await ws.send(script.connect)
        received: list[str] = []
        sends = list(script.sends)
        while len(received) < script.updates:
            while sends and sends[0][0] <= len(received):
                await ws.send(sends.pop(0)[1])
            frame = str(await ws.recv())
            if frame.startswith("42"):
                received.append(frame)
            elif frame == "2":  # engine.io ping
                await ws.send("3")
            elif frame.startswith("44"):
                raise RuntimeError(f"socket.io connect refused: {frame[:200]}")
        return received


def check_replay(base: str, origin: str, script: PageScript, cookie: str) -> None:
    """One replayed load must get what Chromium got (same vars and events), or the bench would
    time something else (e.g. a signed-out page)."""
    received = asyncio.run(page_load("ws" + base[len("http") :], script, cookie, origin))
    if update_shape(received) != script.shape:
        raise RuntimeError(
            f"the replayed page load differs from Chromium's: missing "
            f"{sorted(script.shape - update_shape(received))}, extra {sorted(update_shape(received) - script.shape)}"
        )


def ws_worker(
    base: str, origin: str, script: PageScript, cookies: list[str], clients: int, seconds: float, out
) -> None:
    """`clients` loops of page loads for `seconds`; puts (latencies_ms, errors, cpu_s) on `out`."""
    base_ws = "ws" + base[len("http") :]
    latencies: list[float] = []
    errors: list[str] = []

    async def loop(i: int, end: float) -> None:
        while time.monotonic() < end:
            t0 = time.perf_counter()
            try:
                await asyncio.wait_for(page_load(base_ws, script, cookies[i % len(cookies)], origin), WS_LOAD_TIMEOUT)
                latencies.append((time.perf_counter() - t0) * 1000)
            except Exception as e:  # noqa: BLE001 (counted and reported)
                errors.append(f"{type(e).__name__}: {str(e)[:120]}")
            i += clients

    async def main() -> None:
        end = time.monotonic() + seconds
        await asyncio.gather(*(loop(i, end) for i in range(clients)))

    cpu0 = time.process_time()
    asyncio.run(main())
    out.put((latencies, errors, time.process_time() - cpu0))


def run_page_loads(
    base: str, origin: str, script: PageScript, cookies: list[str], clients: int, seconds: float, procs: int
) -> dict:
    out: multiprocessing.Queue = multiprocessing.Queue()
    shares = [clients // procs + (1 if k < clients % procs else 0) for k in range(procs)]
    workers = [
        multiprocessing.Process(target=ws_worker, args=(base, origin, script, cookies[k::procs], n, seconds, out))
        for k, n in enumerate(shares)
        if n
    ]
    for w in workers:
        w.start()
    latencies, errors, cpu = [], [], 0.0
    try:
        for _ in workers:
            lat, err, c = out.get(timeout=seconds + WS_LOAD_TIMEOUT + 60)
            latencies += lat
            errors += err
            cpu += c
    finally:
        for w in workers:
            w.join(timeout=10)
            if w.is_alive():
                w.kill()
    return {"latencies": latencies, "errors": errors, "cpu_s": cpu}


# ---------------------------------------------------------------- the stacks


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its live descendants."""
    total = 0.0
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                total += t.user + t.system
    except psutil.Error:
        pass
    return total


@contextlib.contextmanager
def running_stack(name: str, workdir: Path, extra_env: dict[str, str]) -> Iterator[helpers.Server]:
    """The wallet app as the e2e tests start it (own anvil, dev sign-in, generous rate limits, its
    own web folder: the second stack copies the first one's build), with the ceiling route."""
    # Every page load comes from 127.0.0.1: --clients at once, and the next one opened as the last closes.
    env = {"DEV_BENCH_CEILING": "1", "SOCKET_MAX_PER_IP": "100000", **extra_env}
    log = RESULTS / f"load-{name}.log"
    log.unlink(missing_ok=True)
    with helpers.running_wallet_app(workdir, log, env) as server:
        yield server


def sign_in_users(base: str, workdir: Path, n: int) -> list[str]:
    """n users signed in with a registered address; their Cookie headers."""
    import httpx
    from eth_account import Account

    from wallet_app.core.config import get_settings

    # The ID tokens are made here with the server's dev IdP key and issuer (same settings).
    os.environ.update(
        {
            "PUBLIC_BASE_URL": base,
            "DEV_MODE": "1",
            "GOOGLE_CLIENT_ID": "",
            "DEV_IDP_KEY_FILE": str(workdir / "dev-idp-key.json"),
        }
    )
    get_settings.cache_clear()
    cookies = []
    for i in range(n):
        with httpx.Client(base_url=base + "/api/v1", timeout=60) as c:
            sign_in(c, f"load{i}@example.com", Account.create().address)
            cookies.append("; ".join(f"{k}={v}" for k, v in c.cookies.items()))
    return cookies


@dataclass
class Stack:
    name: str
    server: helpers.Server
    base: str  # 127.0.0.1, for wrk and the websockets
    cookies: list[str]
    script: PageScript


def prepare_stack(name: str, server: helpers.Server, workdir: Path, args) -> Stack:
    """Signs the users in and captures the page load (checked by a replay)."""
    cookies = sign_in_users(server.base_url, workdir, args.clients)
    cookie_dicts = [dict(kv.split("=", 1) for kv in c.split("; ")) for c in cookies]
    base = server.base_url.replace("localhost", "127.0.0.1")
    script = capture_page_load(server.base_url, cookie_dicts[0])
    check_replay(base, server.base_url, script, cookies[1 % len(cookies)])
    print(
        f"[{name}] page load of {PAGE}: {len(script.sends)} events after the hydrate, "
        f"{script.updates} updates ({len(script.shape)} vars and events), replay checked",
        flush=True,
    )
    return Stack(name, server, base, cookies, script)


def measure_routes(stacks: list[Stack], args, wrk: str) -> list[Result]:
    """The HTTP routes, in rounds (see the module's text); one Result per stack and route."""
    routes = (CEILING_PATH, "/api/v1/me") if args.me_only else (CEILING_PATH, "/api/v1/me", "/api/v1/assets")
    seconds = max(1, round(args.seconds / args.rounds))
    warm_errors: dict[tuple[str, str], int] = {}
    rounds: dict[tuple[str, str], list[Result]] = {(st.name, route): [] for st in stacks for route in routes}
    with tempfile.TemporaryDirectory() as tmp:
        # A short warm-up: first requests open DB connections and import lazily. Its errors count
        # (the first requests at once are where races show).
        for st in stacks:
            for route in routes:
                warm = run_wrk(wrk, st.base, route, st.cookies, args.clients, 2, Path(tmp))
                warm_errors[(st.name, route)] = sum(warm[e] for e in WRK_ERRORS)
        for n in range(args.rounds):
            for st in stacks if n % 2 == 0 else stacks[::-1]:
                others = [o for o in stacks if o is not st]
                for route in routes:
                    cpu0, idle0 = tree_cpu(st.server.proc.pid), sum(tree_cpu(o.server.proc.pid) for o in others)
                    r = run_wrk(wrk, st.base, route, st.cookies, args.clients, seconds, Path(tmp))
                    result = Result(
                        st.name,
                        route,
                        r["requests"],
                        r["duration_us"] / 1e6,
                        r["p50_us"] / 1000,
                        r["p99_us"] / 1000,
                        sum(r[e] for e in WRK_ERRORS),
                        tree_cpu(st.server.proc.pid) - cpu0,
                        r["cpu_s"],
                        os.getloadavg()[0],
                    )
                    rounds[(st.name, route)].append(result)
                    idle = (sum(tree_cpu(o.server.proc.pid) for o in others) - idle0) / result.seconds * 100
                    print(f"[{st.name}] round {n + 1}: {fmt(result)}  idle stack cpu {idle:3.0f}%", flush=True)
    return [combine(rs, warm_errors[key]) for key, rs in rounds.items()]


def combine(rounds: list[Result], warm_errors: int) -> Result:
    """A route's rounds as one: req/s over all of them, the median p50 and p99, errors and CPU summed."""
    first = rounds[0]
    return Result(
        first.stack,
        first.route,
        sum(r.requests for r in rounds),
        sum(r.seconds for r in rounds),
        statistics.median(r.p50_ms for r in rounds),
        statistics.median(r.p99_ms for r in rounds),
        warm_errors + sum(r.errors for r in rounds),
        sum(r.server_cpu_s for r in rounds),
        sum(r.client_cpu_s for r in rounds),
        max(r.load_average for r in rounds),
    )


def measure_page_loads(st: Stack, args) -> Result:
    cpu0, t0 = tree_cpu(st.server.proc.pid), time.monotonic()
    ws = run_page_loads(st.base, st.server.base_url, st.script, st.cookies, args.clients, args.seconds, args.ws_procs)
    elapsed = time.monotonic() - t0
    lat = sorted(ws["latencies"]) or [0.0]
    result = Result(
        st.name,
        f"page load {PAGE} (ws)",
        len(ws["latencies"]),
        args.seconds,
        statistics.median(lat),
        percentile(lat, 99),
        len(ws["errors"]),
        tree_cpu(st.server.proc.pid) - cpu0,
        ws["cpu_s"],
        os.getloadavg()[0],
    )
    print(f"[{st.name}] {fmt(result)} (wall {elapsed:.1f} s)", flush=True)
    if ws["errors"]:
        print(f"[{st.name}] page load errors (first 5): {ws['errors'][:5]}", flush=True)
    return result


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q / 100))]


def fmt(r: Result) -> str:
    return (
        f"{r.route:<28} {r.rps:8.1f} req/s  p50 {r.p50_ms:7.1f} ms  p99 {r.p99_ms:7.1f} ms  errors {r.errors:5d}  "
        f"server cpu {r.server_cpu_s / r.seconds * 100:5.0f}%  client cpu {r.client_cpu_s / r.seconds * 100:4.0f}%  "
        f"load {r.load_average:.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0, help="per route and stack, over all rounds")
    parser.add_argument("--rounds", type=int, default=3, help="turns of the stacks (the order reversed each round)")
    parser.add_argument("--ws-procs", type=int, default=2, help="processes running the page loads")
    parser.add_argument("--only", choices=("sqlite", "pg"), help="one stack (no worker ratio)")
    parser.add_argument("--me-only", action="store_true", help="the ceiling and /me only (the targets' route)")
    args = parser.parse_args()
    wrk = ensure_wrk()
    RESULTS.mkdir(parents=True, exist_ok=True)
    stacks: list[Stack] = []
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp, contextlib.ExitStack() as running:
        if args.only in (None, "sqlite"):
            work = Path(tmp) / "sqlite"
            work.mkdir()
            server = running.enter_context(running_stack("sqlite-1w", work, {}))
            stacks.append(prepare_stack("sqlite-1w", server, work, args))
        if args.only in (None, "pg"):
            from tools.pgserver import PgServer
            from tools.redisserver import RedisServer

            work = Path(tmp) / "pg"
            work.mkdir()
            pg, redis = running.enter_context(PgServer(temp=True)), running.enter_context(RedisServer())
            env = {"DATABASE_URL": pg.create_database("bench_load"), "REDIS_URL": redis.url}
            server = running.enter_context(running_stack("pg-redis-2w", work, env))
            stacks.append(prepare_stack("pg-redis-2w", server, work, args))
        results = measure_routes(stacks, args, wrk)
        if not args.me_only:
            results += [measure_page_loads(st, args) for st in stacks]
    captures = {st.name: {"sends": len(st.script.sends), "updates": st.script.updates} for st in stacks}
    return report(results, captures, args)


def cores_bound(two: Result, one: Result) -> float:
    """The most `two` could scale over `one` on this machine: its req/s if its server and load
    generator had every core at the CPU per request they used, over `one`'s req/s. The load
    generator shares the cores, so a ratio target above this is out of reach here."""
    used = (two.server_cpu_s + two.client_cpu_s) / two.seconds
    return two.rps * (os.cpu_count() or 1) / used / one.rps if used and one.rps else float("nan")


def report(results: list[Result], captures: dict, args) -> int:
    by = {(r.stack, r.route): r for r in results}
    print(
        f"\nload: {args.clients} clients, {args.seconds:.0f} s per route in {args.rounds} rounds, "
        f"{os.cpu_count()} CPUs, load average now {os.getloadavg()}"
    )
    for r in results:
        ceiling = by.get((r.stack, CEILING_PATH))
        share = f"  {r.rps / ceiling.rps:5.2f}x ceiling" if ceiling and ceiling.rps else ""
        print(f"{r.stack:<12} {fmt(r)}{share}")
    stacks = list(dict.fromkeys(r.stack for r in results))
    scaling = {}
    if len(stacks) == 2:
        for r in results:
            if r.stack == stacks[1] and (one := by.get((stacks[0], r.route))) and one.rps:
                scaling[r.route] = r.rps / one.rps
                print(
                    f"2 workers / 1 worker  {r.route:<28} {scaling[r.route]:.2f}x  "
                    f"(all {os.cpu_count()} cores at 2 workers' cost per request: {cores_bound(r, one):.2f}x)"
                )
    me = [r for r in results if r.route == "/api/v1/me"]
    p99_ok = all(r.p99_ms < TARGET_ME_P99_MS and r.errors == 0 for r in me)
    scale_ok = scaling.get("/api/v1/me", 0.0) >= TARGET_WORKER_SCALING
    errors_ok = all(r.errors == 0 for r in results)
    (RESULTS / "load.json").write_text(
        json.dumps(
            {
                "clients": args.clients,
                "seconds": args.seconds,
                "rounds": args.rounds,
                "cpus": os.cpu_count(),
                "captures": captures,
                "results": [{**r.__dict__, "rps": round(r.rps, 1)} for r in results],
                "scaling": scaling,
            },
            indent=2,
        )
        + "\n"
    )
    me_p99 = " ".join(f"{r.stack}={r.p99_ms:.1f}" for r in me)
    verdict = "PASS" if p99_ok and errors_ok and (scale_ok or len(stacks) < 2) else "FAIL"
    print(
        f"load: me_p99_ms {me_p99} (target < {TARGET_ME_P99_MS:.0f}: {'PASS' if p99_ok else 'FAIL'}) "
        f"me_workers_ratio={scaling.get('/api/v1/me', float('nan')):.3f} "
        f"(target >= {TARGET_WORKER_SCALING}: {'PASS' if scale_ok else 'FAIL' if len(stacks) == 2 else 'n/a'}) "
        f"errors={'0' if errors_ok else 'SOME'} load_avg_1min={os.getloadavg()[0]:.2f} -> {verdict}"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
