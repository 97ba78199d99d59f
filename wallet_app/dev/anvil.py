"""Local development chain: start anvil, wait until it answers, stop it cleanly.

    with Anvil(port=0) as node:          # fresh in-memory chain on a free port (tests)
        Web3(Web3.HTTPProvider(node.url))

    python -m wallet_app.dev.anvil --port 8545 --deploy   # `make run` style, state kept in data/

With a state file anvil loads it at start and writes it back on exit (and every
`state_interval` seconds, so a killed process loses at most that much), which keeps
deployed contracts and balances across restarts.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

import httpx

from tools.child import stop_process
from tools.ports import free_port
from wallet_app.core.config import REPO_ROOT

CHAIN_ID = 31337
DEFAULT_PORT = 8545
DEFAULT_STATE_FILE = REPO_ROOT / "data" / f"anvil-state-{CHAIN_ID}.json"


class AnvilError(RuntimeError):
    pass


def anvil_binary() -> str:
    """The native binary; the npm `.bin/anvil` is a node shim that would sit between us and the process."""
    candidates = [
        REPO_ROOT / "tools/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil",
        REPO_ROOT / "tools/node_modules/.bin/anvil",
    ]
    for path in candidates:
        if path.exists():
            return str(path)
    found = shutil.which("anvil")
    if found:
        return found
    raise AnvilError("anvil not found: run `make setup` (npm @foundry-rs/anvil in tools/)")


def port_free(port: int) -> bool:
    """Whether a new listener may bind 127.0.0.1:`port`. SO_REUSEADDR (as anvil's own listener
    has): connections of a node just stopped (TIME_WAIT) do not count, a listener does."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Anvil:
    def __init__(
        self,
        port: int = DEFAULT_PORT,
        *,
        chain_id: int = CHAIN_ID,
        state_file: Path | None = None,
        state_interval: int = 10,
        start_timeout: float = 20.0,
        extra_args: list[str] | None = None,
    ):
        self.port = port or free_port()
        self.chain_id = chain_id
        self.state_file = Path(state_file) if state_file else None
        self.state_interval = state_interval
        self.start_timeout = start_timeout
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Anvil:
        # Otherwise another node already on the port would answer and pass for this one.
        if not port_free(self.port):
            raise AnvilError(f"port {self.port} is in use")
        cmd = [
            anvil_binary(),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--chain-id",
            str(self.chain_id),
            *self.extra_args,
        ]
        if self.state_file:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            cmd += ["--state", str(self.state_file), "--state-interval", str(self.state_interval)]
        # Output goes to a temp file: a pipe nobody reads would eventually block anvil.
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _output(self) -> str:
        if not self._log:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-2000:]

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        body = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}
        proc = self.proc
        if proc is None:
            raise AnvilError("anvil was not started")
        with httpx.Client(timeout=2.0) as client:
            while True:
                if proc.poll() is not None:
                    raise AnvilError(f"anvil exited with {proc.returncode}: {self._output()}")
                try:
                    answer = client.post(self.url, json=body).json()
                    if int(answer["result"], 16) != self.chain_id:
                        raise AnvilError(f"port {self.port} answers chain {answer['result']}, not {self.chain_id}")
                    return
                except (httpx.TransportError, ValueError, KeyError):
                    pass
                if time.monotonic() > deadline:
                    raise AnvilError(
                        f"anvil did not answer on {self.url} within {self.start_timeout}s: {self._output()}"
                    )
                time.sleep(0.05)  # polling interval, not a fixed wait

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM lets anvil write its state file; kill if it does not exit in time."""
        proc, self.proc = self.proc, None
        stop_process(proc, signal.SIGTERM, timeout)
        if self._log:
            self._log.close()
            self._log = None

    def __enter__(self) -> Anvil:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the local development chain (anvil).")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE_FILE, help="state file kept across restarts")
    parser.add_argument("--fresh", action="store_true", help="in-memory chain, no state file")
    parser.add_argument("--deploy", action="store_true", help="deploy the contracts (idempotent) once it answers")
    parser.add_argument("--deployments-dir", type=Path, default=REPO_ROOT / "data")
    args = parser.parse_args(argv)

    # SIGTERM ends like Ctrl-C, so anvil is stopped properly and writes its state.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    node = Anvil(args.port, state_file=None if args.fresh else args.state)
    try:
        node.start()
        print(f"anvil: {node.url} chain {node.chain_id}" + ("" if args.fresh else f" state {args.state}"), flush=True)
        if args.deploy:
            from contracts.deploy import deploy

            print(f"deployed: {json.dumps(deploy(node.url, args.deployments_dir))}", flush=True)
        if node.proc is not None:  # set by start()
            node.proc.wait()
        return 1  # anvil exited by itself
    except (KeyboardInterrupt, SystemExit):
        return 0
    finally:
        node.stop()


if __name__ == "__main__":
    sys.exit(main())
