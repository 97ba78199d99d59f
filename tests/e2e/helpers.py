"""Starting and stopping app servers and Chromium; shared by tests/e2e and bench/page_weight.py.

Servers run in their own process group (and session) so that the whole tree that
`reflex run` spawns (Python workers, bun, node) is stopped together. Every server
started here is also stopped at interpreter exit and on SIGTERM/SIGHUP, so a
cancelled CI job or a Ctrl-C never leaves processes behind.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psutil

from tests.rate_limits_env import GENEROUS_LIMITS
from tools.ports import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV_SH = REPO_ROOT / "env.sh"
# Debian's build of Chromium's headless shell (package chromium-headless-shell): the browser
# Playwright itself runs for headless tests. Same Blink and V8 as /usr/bin/chromium, without the
# desktop browser around them: about a third less CPU per page flow on this 2-core machine.
CHROMIUM = "/usr/bin/chromium-headless-shell"
# The desktop build, for what the shell leaves out: it has no permission prompt, so a camera it is
# not granted fails with NotSupportedError instead of the NotAllowedError of a user's refusal.
CHROMIUM_DESKTOP = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Installed in every test context (add_init_script): the page's websockets, whether each has been
# hydrated, and the text of the last frames received and sent, so a test can wait until the server
# has a value (wait_for_state) or the page has sent an event (wait_for_sent) rather than act while
# they are still on the way.
SOCKET_WATCH = """
window.__nbSockets = [];
window.__nbFrames = {count: 0, last: [], sent: []};
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  send(data) {
    const sent = window.__nbFrames.sent;
    sent.push(String(data).slice(0, 2000));
    if (sent.length > 50) sent.shift();
    return super.send(data);
  }
  constructor(...args) {
    super(...args);
    window.__nbSockets.push(this);
    this.hydrated = false;
    this.addEventListener("message", (m) => {
      const text = String(m.data);
      if (text.includes('"is_hydrated_rx_state_":true')) this.hydrated = true;
      const frames = window.__nbFrames;
      frames.count += 1;
      frames.last.push(text.slice(0, 20000));
      if (frames.last.length > 50) frames.last.shift();
    });
  }
};
"""


def reconnect(page) -> None:
    """Close the page's websockets, as a phone does when the user switches apps, and wait until
    Reflex has connected again and hydrated (is_hydrated = true comes after the page's on_load
    events: a reconnect runs them again)."""
    sockets = page.evaluate("window.__nbSockets.length")
    page.evaluate("window.__nbSockets.forEach((socket) => socket.close())")
    wait_for_hydrated(page, sockets)
    # The last frame is read; React renders what it brought in a task of its own, before the
    # second animation frame from now: a check made earlier would still see the page as it was.
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def wait_for_hydrated(page, sockets_before: int = 0) -> None:
    """Wait until a websocket opened after the first `sockets_before` has hydrated (the page's
    on_load events are done: is_hydrated = true comes after them)."""
    page.wait_for_function(
        "(n) => window.__nbSockets.length > n && window.__nbSockets.at(-1).hydrated", arg=sockets_before
    )


def wait_for_sent(page, text: str) -> None:
    """Wait until one of the page's last 50 frames sent contains `text` (e.g. an event's name)."""
    page.wait_for_function("(text) => window.__nbFrames.sent.some((f) => f.includes(text))", arg=text)


def received_frames(page) -> int:
    """How many websocket frames the page has received so far (SOCKET_WATCH)."""
    return page.evaluate("window.__nbFrames.count")


def wait_for_state(page, since: int, var: str, value: str) -> None:
    """Wait until a frame received after the first `since` sets the state var `var` to `value`:
    the server has it. An input's change reaches the server up to 300 ms after typing (debounced)
    or at once on blur; a click in between can land on a layout that moves under it (the recipient
    note appears on /send), and the click is lost."""
    needle = json.dumps({f"{var}_rx_state_": value}, separators=(",", ":"), ensure_ascii=False)[1:-1]
    page.wait_for_function(
        """([since, needle]) => {
          const frames = window.__nbFrames;
          const fresh = frames.last.slice(Math.max(0, frames.last.length - (frames.count - since)));
          return fresh.some((text) => text.includes(needle));
        }""",
        arg=[since, needle],
    )


# A phone-sized context (the app is mobile first).
MOBILE_CONTEXT = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
    # The app-shell worker has its own test; elsewhere it would only add cached responses and
    # background installs that can hold a context open at close.
    "service_workers": "block",
}
# A cold production build takes a few minutes on a small machine.
DEFAULT_START_TIMEOUT = float(os.environ.get("E2E_SERVER_START_TIMEOUT", "240"))


@dataclass(eq=False)
class Server:
    """A server subprocess: its URL, its log file and its process (group leader)."""

    name: str
    base_url: str
    port: int
    log_path: Path
    proc: subprocess.Popen = field(repr=False)

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


_live: set[Server] = set()
_lock = threading.Lock()


def start_server(
    name: str,
    command: list[str],
    *,
    port: int,
    cwd: Path,
    log_path: Path,
    env: dict[str, str] | None = None,
) -> Server:
    """Start `command` after sourcing env.sh (venv, bun, offline Reflex), in a new session.

    `env` is added to the current environment (env.sh only sets PATH and tool variables).
    """
    _install_signal_handlers()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ)
    full_env.update(env or {})
    script = f"source {shlex.quote(str(ENV_SH))} && exec {shlex.join(command)}"
    log = open(log_path, "ab")
    try:
        proc = subprocess.Popen(
            ["bash", "-c", script],
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: stopped as a whole
        )
    finally:
        log.close()
    server = Server(name=name, base_url=f"http://localhost:{port}", port=port, log_path=log_path, proc=proc)
    with _lock:
        _live.add(server)
    return server


def wait_until_up(server: Server, timeout: float = DEFAULT_START_TIMEOUT, path: str = "/ping") -> None:
    """Poll `path` until it answers 'pong'; fail early if the process exits. Raises RuntimeError."""
    deadline = time.monotonic() + timeout
    url = server.base_url + path
    while True:
        code = server.proc.poll()
        if code is not None:
            raise RuntimeError(f"{server.name} exited with code {code} before answering {url}\n"
                               f"--- log tail ({server.log_path}) ---\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200 and b"pong" in r.read():
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{server.name} did not answer {url} within {timeout:.0f} s\n"
                               f"--- log tail ({server.log_path}) ---\n{server.log_tail()}")
        time.sleep(0.5)


def stop_server(server: Server, grace: float = 15) -> None:
    """SIGTERM the process group, wait up to `grace` s, then SIGKILL it and any escaped descendant."""
    with _lock:
        _live.discard(server)
    proc = server.proc
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    # The leader may be gone while workers linger: wait for the whole group.
    _, alive = psutil.wait_procs(descendants, timeout=max(1.0, grace / 3))
    _signal_group(proc.pid, signal.SIGKILL)
    for p in alive:  # also catches a child that moved to another process group
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def stop_all() -> None:
    with _lock:
        servers = list(_live)
    for s in servers:
        stop_server(s)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_handlers_installed = False


def _install_signal_handlers() -> None:
    """atexit + SIGTERM/SIGHUP -> KeyboardInterrupt, so finally blocks and fixture teardowns run.

    Only where nobody else handles the signal, and only from the main thread.
    """
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    atexit.register(stop_all)
    if threading.current_thread() is not threading.main_thread():
        return

    def _interrupt(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _interrupt)


def wallet_app_command(port: int) -> list[str]:
    return ["python", "-m", "wallet_app.serve", "--port", str(port)]


def with_free_loopback_ports(chains: list[dict], pick_port=free_port) -> list[dict]:
    """The chains list with every loopback RPC moved to a fresh port (anvil there is ours alone)."""
    out = []
    for chain in chains:
        chain = dict(chain)
        url = urlsplit(chain["rpc_url"])
        if url.hostname in ("127.0.0.1", "localhost") and url.port:
            chain["rpc_url"] = urlunsplit(url._replace(netloc=f"{url.hostname}:{pick_port()}"))
        out.append(chain)
    return out


@functools.cache
def frontend_build_cache() -> Path:
    """This process's folder of frontend builds (FRONTEND_BUILD_CACHE): a server whose compiled
    frontend is one built before here copies that build instead of building it again."""
    path = Path(tempfile.mkdtemp(prefix="newbl-frontend-builds-"))
    atexit.register(shutil.rmtree, path, True)
    return path


@functools.cache
def module_server_port() -> int:
    """The one port of the servers a test module starts for itself (each is stopped with its
    module, before the next starts). Reflex writes the port into the frontend, so on one port
    their builds are the same and made once (frontend_build_cache)."""
    return free_port()


def e2e_database_url(workdir: Path) -> str:
    """The database of the app servers run in `workdir` (one restarted there finds its data): a
    SQLite file in it, or with TEST_DATABASE=pg a database on the run's private PostgreSQL server
    (tools/pgserver.shared_temp_server), created when missing."""
    if os.environ.get("TEST_DATABASE", "sqlite") != "pg":
        return f"sqlite:///{workdir / 'e2e.db'}"
    from tools.pgserver import shared_temp_server

    return shared_temp_server().ensure_database(f"e2e_{os.getpid()}_{workdir.name}".lower()[:60])


def start_wallet_app(
    port: int, workdir: Path, log_path: Path, extra_env: dict[str, str] | None = None
) -> Server:
    """The wallet app (wallet_app.serve, prod single port), isolated in `workdir`.

    Throw-away database (e2e_database_url), its own dev chain(s) on free ports (fresh state, contracts deployed by
    serve.py), deployments, dev-idp key and stand-in Drive in `workdir`: a developer's `make run` is untouched.
    """
    chains_file = workdir / "chains.json"
    chains = json.loads((REPO_ROOT / "chains.dev.json").read_text())
    chains_file.write_text(json.dumps(with_free_loopback_ports(chains), indent=2))
    env = {
        "DATABASE_URL": e2e_database_url(workdir),
        "PUBLIC_BASE_URL": f"http://localhost:{port}",
        "DEV_MODE": "1",
        # Empty, not unset: a developer's .env must not switch the run to real Google or a real key.
        "GOOGLE_CLIENT_ID": "",
        "GOOGLE_CLIENT_SECRET": "",
        "RELAYER_PRIVATE_KEY": "",
        "CHAINS_FILE": str(chains_file),
        "DEPLOYMENTS_DIR": str(workdir),
        "DEV_IDP_KEY_FILE": str(workdir / "dev-idp-key.json"),
        "DEV_DRIVE_DIR": str(workdir / "dev-drive"),  # not data/dev-drive, the developer's stand-in Drive
        "DEV_CHAIN_FRESH": "true",
        "PYTHONUNBUFFERED": "1",
        # Its own build folder: several test runs (or `make run`) never overwrite each other's build.
        "REFLEX_WEB_WORKDIR": str(workdir / "web"),
        # Its own states folder: Reflex empties it at start, and two servers starting at once over
        # one folder failed on a file the other had just removed (FileNotFoundError, a CI run).
        "REFLEX_STATES_WORKDIR": str(workdir / "states"),
        "FRONTEND_BUILD_CACHE": str(frontend_build_cache()),
    }
    env.update(GENEROUS_LIMITS)  # only the tests of the limits meet one (they pass their own)
    env.update(extra_env or {})
    return start_server("wallet app", wallet_app_command(port), port=port, cwd=REPO_ROOT,
                        log_path=log_path, env=env)


@contextlib.contextmanager
def running_wallet_app(
    workdir: Path, log_path: Path, extra_env: dict[str, str] | None = None, port: int | None = None
):
    """start_wallet_app on `port` (default: a free one), waited for, and always stopped. Raises
    RuntimeError (with the log tail) when it does not come up."""
    server = start_wallet_app(port or free_port(), workdir, log_path, extra_env)
    try:
        wait_until_up(server)
        yield server
    finally:
        stop_server(server)


@contextlib.contextmanager
def mobile_page(browser, base_url: str, timeout_ms: int):
    """A page in a new context (an empty profile: a new device) at the phone viewport, opened on
    base_url; the context is closed at the end (close_context, bounded)."""
    ctx = browser.new_context(base_url=base_url, **MOBILE_CONTEXT)
    ctx.set_default_timeout(timeout_ms)
    try:
        yield ctx.new_page()
    finally:
        close_context(ctx)


def require_chromium() -> str:
    """The Chromium binary, or a clear error (browsers are never downloaded here)."""
    if not os.access(CHROMIUM, os.X_OK):
        raise RuntimeError(f"Chromium not found at {CHROMIUM}: run `make chromium` "
                           "(apt-get install chromium-headless-shell); Playwright cannot download browsers here.")
    return CHROMIUM


class _CloseTimedOut(Exception):
    pass


def close_context(ctx, seconds: float = 30) -> None:
    """ctx.close(), bounded. Chromium now and then never answers the disposal of a context
    that had sign-in popups (seen once in CI: a 300 s hang in teardown, then every later test
    passed). A close that does not finish in `seconds` is reported as a warning; the browser's
    own close at the end of the run frees what is left. The per-test timer of pytest-timeout
    (also SIGALRM) is put back afterwards."""
    def on_alarm(_signum, _frame):
        raise _CloseTimedOut

    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    started = time.monotonic()
    # Never past the outer deadline: if that comes first, pytest-timeout still fires after us.
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_left) if outer_left else seconds)
    try:
        ctx.close()
    except _CloseTimedOut:
        warnings.warn(f"browser context did not close within {seconds} s; left to the browser's close",
                      stacklevel=2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left:
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - started), 0.001))


def launch_chromium(playwright, extra_args: list[str] | None = None):
    """Debian's Chromium through Playwright, headless, with the project's flags."""
    return playwright.chromium.launch(
        executable_path=require_chromium(),
        args=CHROMIUM_ARGS + list(extra_args or []),
        timeout=60_000,
    )


@contextlib.contextmanager
def serve_asgi_in_thread(app, port: int, lifespan: str = "auto", start_timeout: float = 10):
    """An ASGI app under uvicorn on 127.0.0.1:`port` in a daemon thread (in-process tests that
    need a real browser); stopped on exit. AssertionError if it does not start in time."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan=lifespan))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + start_timeout
        while not server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)  # uvicorn has no start event to wait on
        yield server
    finally:
        server.should_exit = True
        thread.join(timeout=10)
