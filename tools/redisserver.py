"""A private Redis for `make run-scale` and the tests: Debian's redis-server (installed with apt-get
when missing), on a free loopback port, its data under data/redis (or a temp dir), stopped on exit.

    python tools/redisserver.py -- CMD ...   # starts Redis, runs CMD with REDIS_URL set, stops Redis
    python tools/redisserver.py --install    # only installs redis-server when missing

    with RedisServer() as server:            # tests: a throwaway instance, server.url
        ...
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as a script: `tools` importable

from tools import debian  # noqa: E402
from tools.child import run_child, stop_process  # noqa: E402
from tools.ports import free_port  # noqa: E402

BINARY = "redis-server"


def install() -> str:
    """The redis-server binary; apt-get installs Debian's package when it is missing."""
    found = shutil.which(BINARY)
    if found:
        return found
    debian.install([BINARY])  # the package's name is the binary's
    found = shutil.which(BINARY) or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)
    if not found:
        raise RuntimeError("redis-server is still missing after apt-get install redis-server")
    return found


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process. `data_dir` None: a temp dir, no persistence (tests)."""

    def __init__(self, *, port: int = 0, data_dir: Path | None = None, start_timeout: float = 20.0):
        self.port = port or free_port()
        self.data_dir = data_dir
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        binary = install()
        if self.data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="redis-")
            workdir, persist = Path(self._tmp.name), ["--save", "", "--appendonly", "no"]
        else:
            workdir, persist = self.data_dir, ["--save", "60 1", "--appendonly", "no"]
        workdir.mkdir(parents=True, exist_ok=True)
        # Loopback only, no password (nothing else reaches it); no config file of the system's.
        cmd = [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(workdir)]
        cmd += [*persist, "--daemonize", "no", "--protected-mode", "yes", "--logfile", str(workdir / "redis.log")]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + self.start_timeout
        while not _ping(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = (
                    (workdir / "redis.log").read_text(errors="replace")[-2000:]
                    if (workdir / "redis.log").exists()
                    else ""
                )
                self.stop()
                raise RuntimeError(f"redis-server did not answer on port {self.port}: {log}")
            time.sleep(0.05)  # polling interval, not a fixed wait
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM: Redis saves (when persisting) and exits; killed if it does not in time."""
        proc, self.proc = self.proc, None
        stop_process(proc, signal.SIGTERM, timeout)
        if self._tmp:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A private Redis on loopback; runs CMD with REDIS_URL set.")
    parser.add_argument("--install", action="store_true", help="only install redis-server when missing")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--data-dir", type=Path, default=REPO_ROOT / "data" / "redis")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ...")
    args = parser.parse_args(argv)
    if args.install:
        print(install())
        return 0
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("no command: python tools/redisserver.py -- CMD ...")
    # SIGTERM ends like Ctrl-C: the command is stopped, then Redis.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with RedisServer(port=args.port, data_dir=args.data_dir) as server:
        print(f"redis: {server.url} data {args.data_dir}", flush=True)
        return run_child(cmd, {**os.environ, "REDIS_URL": server.url})


if __name__ == "__main__":
    sys.exit(main())
