"""`make run`: the wallet on one port (page, websocket and /api/v1); `--dev` (what `make run`
passes) sets DEV_MODE=1, the embedded development stand-ins.

Settings that must not serve (config.refusals) stop it before anything starts, with one
paragraph on stderr and exit status 2.

In development it also starts the local chain for every chain of the
chains file whose RPC is a loopback anvil, deploys the contracts there (idempotent), and
stops the chain when the app stops.
"""

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import psutil

from contracts.artifacts import compile_contracts
from custom_components.wallet_js.vendor import copy_argon2
from wallet_app.core.config import LOOPBACK_HOSTS, REPO_ROOT, SettingsError, get_settings


def dev_chain_ports(chains_file) -> list[tuple[int, int]]:
    """(chain_id, port) of the loopback chains in the chains file."""
    ports = []
    for chain in json.loads(chains_file.read_text()):
        url = urlsplit(chain["rpc_url"])
        if url.hostname in LOOPBACK_HOSTS and url.port:
            ports.append((int(chain["chain_id"]), url.port))
    return ports


@contextlib.contextmanager
def dev_chains():
    settings = get_settings()
    if not settings.dev_mode:
        yield
        return
    from contracts.deploy import deploy
    from wallet_app.dev.anvil import Anvil

    with contextlib.ExitStack() as stack:
        for chain_id, port in dev_chain_ports(settings.chains_file):
            state = None if settings.dev_chain_fresh else REPO_ROOT / "data" / f"anvil-state-{chain_id}.json"
            node = stack.enter_context(Anvil(port=port, chain_id=chain_id, state_file=state))
            deployed = deploy(node.url, settings.deployments_dir)
            print(f"chain {chain_id} at {node.url}: contracts {json.dumps(deployed)}", flush=True)
        yield


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--dev", action="store_true", help="development mode (DEV_MODE=1): the local stand-ins")
    parser.add_argument("--workers", type=int, default=None, help="backend workers (default: 2 with REDIS_URL, else 1)")
    args = parser.parse_args()
    if args.dev:
        os.environ["DEV_MODE"] = "1"  # inherited by the reflex process
    os.environ.setdefault("PUBLIC_BASE_URL", f"http://localhost:{args.port}")
    get_settings.cache_clear()
    try:
        settings = get_settings()
    except SettingsError as e:
        print(e, file=sys.stderr)
        return 2
    if settings.dev_mode and args.host not in LOOPBACK_HOSTS:
        # The stand-ins sign anyone in as any e-mail: whoever reaches the port would be anyone.
        print(
            f"DEV_MODE is on: refusing to listen on {args.host}; development serves on loopback only", file=sys.stderr
        )
        return 2
    workers = args.workers or (2 if settings.redis_url else 1)
    if workers > 1 and not settings.redis_url:
        # Each worker would keep its own clients' state, rate limits and spent login attempts.
        print(f"--workers {workers} needs REDIS_URL: the workers share their state there", file=sys.stderr)
        return 2
    os.environ["GRANIAN_WORKERS"] = str(workers)  # read by reflex when it starts granian
    # Reflex empties its states folder at start: a second server (another port, the same checkout)
    # would empty this one's, and two starting at once failed on each other's files.
    os.environ.setdefault("REFLEX_STATES_WORKDIR", str(REPO_ROOT / "data" / f"reflex-states-{args.port}"))
    print(f"backend workers: {workers}, state in {'Redis' if settings.redis_url else 'this process'}", flush=True)
    (REPO_ROOT / "data").mkdir(exist_ok=True)
    # argon2-browser is third-party: copied from tools/node_modules at build, never committed.
    copy_argon2(REPO_ROOT / "assets" / "argon2")
    compile_contracts()  # the server reads its contract ABIs from contracts/build
    cmd = [
        sys.executable,
        "-m",
        "wallet_app.reflex_run",  # reflex's CLI, with workers that respawn
        "run",
        "--env",
        "prod",
        "--single-port",
        "--frontend-port",
        str(args.port),
        "--backend-port",
        str(args.port),
        "--backend-host",
        args.host,
    ]
    # SIGTERM (CI, the e2e harness) must still stop the chain through the context managers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with dev_chains(), relayer_process():
        return run_until_stopped(cmd)


RESTART_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)  # s before each start again of a process that keeps failing
RESTART_RESET_SECONDS = 60.0  # up this long: the next failure waits the first delay again
CLEAN_EXITS = (0, 2)  # stopped on request (SIGTERM, Ctrl-C), or settings it refuses: not started again


@contextlib.contextmanager
def supervised(name: str, cmd: list[str]):
    """`cmd` running beside the web server and stopped with it; started again when it ends on its
    own with a failure (killed, out of memory, crashed, its database out of reach at start),
    after RESTART_DELAYS, as systemd's Restart=on-failure would. Yields the thread watching it,
    which ends once it will not start it again."""
    lock = threading.Lock()
    stopping = threading.Event()
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT)

    def watch() -> None:
        nonlocal proc
        failures = 0
        while True:
            started = time.monotonic()
            status = proc.wait()
            if stopping.is_set() or status in CLEAN_EXITS:
                return
            failures = 1 if time.monotonic() - started > RESTART_RESET_SECONDS else failures + 1
            delay = RESTART_DELAYS[min(failures, len(RESTART_DELAYS)) - 1]
            print(f"{name} ended with status {status}; starting it again in {delay:g} s", file=sys.stderr, flush=True)
            if stopping.wait(delay):
                return
            with lock:
                if stopping.is_set():
                    return
                proc = subprocess.Popen(cmd, cwd=REPO_ROOT)

    watcher = threading.Thread(target=watch, name=f"{name}-watch", daemon=True)
    watcher.start()
    try:
        yield watcher
    finally:
        with lock:
            stopping.set()
            last = proc
        last.terminate()
        try:
            last.wait(20)
        except subprocess.TimeoutExpired:
            last.kill()
            last.wait()
        watcher.join(5)


def relayer_process():
    """The relayer (python -m wallet_app.relayer) next to the web server, stopped with it and
    started again when it fails: without it every payment would stay queued."""
    return supervised("relayer", [sys.executable, "-m", "wallet_app.relayer"])


INTERRUPT_REACH_SECONDS = 2.0  # after Ctrl-C: how long the server may take to stop by itself before SIGTERM


def run_until_stopped(cmd: list[str], grace: float = 20.0) -> int:
    """Runs the server and returns its exit status. Ctrl-C in a terminal reaches it too (one
    process group) and it stops by itself, with no traceback here (status 130); a SIGINT sent to
    this process alone does not reach it: after INTERRUPT_REACH_SECONDS it is stopped as on
    SIGTERM (SystemExit from the handler): terminated, given `grace` seconds, then killed with
    every process under it (granian's workers outlive a killed parent and keep the port)."""
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        with contextlib.suppress(subprocess.TimeoutExpired, KeyboardInterrupt):
            proc.wait(INTERRUPT_REACH_SECONDS)
        return 130
    finally:
        if proc.poll() is None:
            family = _descendants(proc.pid)  # before the parent goes: its workers are then re-parented
            proc.terminate()
            try:
                proc.wait(grace)
            except (subprocess.TimeoutExpired, KeyboardInterrupt):  # stuck, or a second Ctrl-C
                family = _descendants(proc.pid) or family
                proc.kill()
                for child in family:  # SIGKILL: their sockets close as they die (no wait: nobody may reap them)
                    with contextlib.suppress(psutil.Error):
                        child.kill()
            proc.wait()


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


if __name__ == "__main__":
    sys.exit(main())
