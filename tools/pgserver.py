"""A private PostgreSQL server on loopback, like wallet_app.dev.anvil for the chain.

    python tools/pgserver.py                       # data in data/postgres, prints DATABASE_URL, Ctrl-C stops
    python tools/pgserver.py -- make something     # runs the command with DATABASE_URL set, then stops
    python tools/pgserver.py --temp -- cmd ...     # throw-away data (a temp dir), fsync off
    python tools/pgserver.py --install             # only installs postgresql when missing

    with PgServer(temp=True) as pg:                # tests
        url = pg.create_database("t1")             # postgresql+psycopg://newbl:...@127.0.0.1:PORT/t1

Debian's postgresql is installed with apt-get when no server binaries are found. postgres refuses
to run as root, so as root the server runs as the `postgres` user the package creates. It listens
on 127.0.0.1 only (no Unix socket), with a password generated at initdb (kept next to the data,
readable by its owner only).
"""

from __future__ import annotations

import argparse
import atexit
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: `wallet_app` importable

from tools.child import run_child, stop_process  # noqa: E402
from tools.debian import InstallError, install  # noqa: E402
from tools.ports import free_port  # noqa: E402
from wallet_app.dev.anvil import port_free  # noqa: E402

DEFAULT_DIR = REPO_ROOT / "data" / "postgres"
DEFAULT_PORT = 5433  # not 5432: a system PostgreSQL may hold that one
USER = "newbl"
SERVER_USER = "postgres"  # created by Debian's package; used when we are root
PACKAGE = "postgresql"  # Debian's: the distribution's default major version
DEBIAN_LIB = Path("/usr/lib/postgresql")


class PgError(RuntimeError):
    pass


def bin_dir() -> Path:
    """The directory holding initdb/postgres; installs Debian's postgresql when there is none."""
    found = find_bin_dir()
    if found:
        return found
    try:
        install([PACKAGE])
    except InstallError as e:
        raise PgError(str(e)) from e
    found = find_bin_dir()
    if not found:
        raise PgError(f"apt-get installed {PACKAGE} but no initdb was found under {DEBIAN_LIB}")
    return found


def find_bin_dir(lib: Path = DEBIAN_LIB) -> Path | None:
    """The newest <version>/bin holding initdb under `lib`, else initdb's directory on PATH."""
    # Debian keeps the server binaries out of PATH, under /usr/lib/postgresql/<version>/bin.
    versions = [p.parent.parent for p in lib.glob("*/bin/initdb") if p.parent.parent.name.isdigit()]
    if versions:
        return max(versions, key=lambda v: int(v.name)) / "bin"
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


class PgServer:
    """initdb (once) and run `postgres` in the foreground of a child process; stop() shuts it down."""

    def __init__(self, base: Path | None = None, port: int = 0, *, temp: bool = False, start_timeout: float = 30.0):
        self.temp = temp
        self.base = Path(tempfile.mkdtemp(prefix="newbl-pg-")) if temp else Path(base or DEFAULT_DIR)
        self.port = port or free_port()
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None
        self._user: pwd.struct_passwd | None = None  # the server user (root only), known once installed

    @property
    def data_dir(self) -> Path:
        return self.base / "data"

    @property
    def password(self) -> str:
        return (self.base / "password").read_text().strip()

    def url(self, database: str = USER) -> str:
        return f"postgresql+psycopg://{USER}:{self.password}@127.0.0.1:{self.port}/{database}"

    # ------------------------------------------------------------------ start / stop
    def start(self) -> PgServer:
        if not port_free(self.port):
            raise PgError(f"port {self.port} is in use")
        bins = bin_dir()
        # Looked up after bin_dir(): on a new machine the package that creates it was just installed.
        self._user = pwd.getpwnam(SERVER_USER) if os.geteuid() == 0 else None
        self.base.mkdir(parents=True, exist_ok=True)
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb(bins)
        cmd = [
            str(bins / "postgres"),
            "-D",
            str(self.data_dir),
            "-p",
            str(self.port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "unix_socket_directories=",
        ]
        if self.temp:  # throw-away data: durability only costs time
            cmd += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **self._as_server_user()
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _as_server_user(self) -> dict:
        if not self._user:
            return {}
        return {
            "user": self._user.pw_uid,
            "group": self._user.pw_gid,
            "extra_groups": [],
            "env": {**os.environ, "HOME": self._user.pw_dir},
        }

    def _initdb(self, bins: Path) -> None:
        password = secrets.token_urlsafe(24)
        pw_file = self.base / "password"
        pw_file.write_text(password + "\n")
        pw_file.chmod(0o600)
        self.data_dir.mkdir(mode=0o700, exist_ok=True)
        # initdb reads the password from a file; it runs as the server user, so a copy it may read.
        init_pw = self.base / "initdb-password"
        init_pw.write_text(password + "\n")
        init_pw.chmod(0o600)
        if self._user:
            os.chown(self.base, 0, self._user.pw_gid)
            self.base.chmod(0o750)  # the server user may enter; others may not
            os.chown(self.data_dir, self._user.pw_uid, self._user.pw_gid)
            os.chown(init_pw, self._user.pw_uid, self._user.pw_gid)
        try:
            result = subprocess.run(
                [
                    str(bins / "initdb"),
                    "-D",
                    str(self.data_dir),
                    "-U",
                    USER,
                    f"--pwfile={init_pw}",
                    "--auth=scram-sha-256",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                    "--no-sync",
                ],
                capture_output=True,
                text=True,
                **self._as_server_user(),
            )
        finally:
            init_pw.unlink()
        if result.returncode:
            raise PgError(f"initdb failed: {result.stdout[-1000:]}{result.stderr[-1000:]}")

    def _output(self) -> str:
        if not self._log:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-2000:]

    def _wait_ready(self) -> None:
        import psycopg

        proc = self.proc
        assert proc is not None
        deadline = time.monotonic() + self.start_timeout
        while True:
            if proc.poll() is not None:
                raise PgError(f"postgres exited with {proc.returncode}: {self._output()}")
            try:
                psycopg.connect(self._conninfo("postgres"), connect_timeout=2).close()
                return
            except psycopg.OperationalError as e:
                if "password authentication failed" in str(e):
                    raise PgError(f"port {self.port} answers with another server") from e
            if time.monotonic() > deadline:
                raise PgError(
                    f"postgres did not answer on port {self.port} within {self.start_timeout}s: {self._output()}"
                )
            time.sleep(0.05)  # polling interval, not a fixed wait

    def stop(self, timeout: float = 20.0) -> None:
        """SIGINT is PostgreSQL's fast shutdown (SIGTERM would wait for every client to leave)."""
        proc, self.proc = self.proc, None
        stop_process(proc, signal.SIGINT, timeout)
        if self._log:
            self._log.close()
            self._log = None
        if self.temp:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PgServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ databases
    def _conninfo(self, database: str = USER) -> str:
        return f"host=127.0.0.1 port={self.port} user={USER} password={self.password} dbname={database}"

    def _admin(self, sql: str) -> None:
        import psycopg

        # CREATE/DROP DATABASE cannot run inside a transaction.
        with psycopg.connect(self._conninfo("postgres"), autocommit=True) as conn:
            conn.execute(sql)

    def create_database(self, name: str, template: str | None = None) -> str:
        """A new database (a copy of `template` when given); returns its DATABASE_URL."""
        # FILE_COPY: copies the template's files at once (the default WAL_LOG writes every page).
        clause = f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else ""
        self._admin(f'CREATE DATABASE "{name}"{clause}')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def refuse_connections(self, name: str, refuse: bool = True) -> None:
        """The database `name` out of reach, as while a server restarts or fails over (for the
        tests of what the app does then): new connections refused and the open ones ended.
        refuse=False lets connections in again."""
        self._admin(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(not refuse).lower()}')
        if refuse:
            self._admin(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                f" WHERE datname = '{name}' AND pid <> pg_backend_pid()"
            )

    def ensure_database(self, name: str = USER) -> str:
        """The database `name`, created when missing; returns its DATABASE_URL."""
        import psycopg

        with psycopg.connect(self._conninfo("postgres")) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        return self.url(name) if exists else self.create_database(name)


_shared: PgServer | None = None


def shared_temp_server() -> PgServer:
    """One throw-away server (temp data) for this process, started on first use and stopped at
    exit: a test run's API fixtures and e2e app servers (TEST_DATABASE=pg) share it."""
    global _shared
    if _shared is None:
        _shared = PgServer(temp=True).start()
        atexit.register(_shared.stop)
    return _shared


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a private PostgreSQL server on loopback.")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="data kept across runs (default data/postgres)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0: a free port")
    parser.add_argument("--temp", action="store_true", help="throw-away data in a temp dir, on a free port")
    parser.add_argument("--database", default=USER, help="database created when missing, given as DATABASE_URL")
    parser.add_argument("--install", action="store_true", help="only install postgresql when missing")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- a command to run with DATABASE_URL set")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.install:
        print(bin_dir())
        return 0

    # SIGTERM ends like Ctrl-C, so the server is shut down properly.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = PgServer(args.dir, 0 if args.temp else args.port, temp=args.temp)
    try:
        server.start()
        url = server.ensure_database(args.database)
        if command:
            return run_child(command, {**os.environ, "DATABASE_URL": url})
        print(f"postgres: port {server.port} data {server.data_dir}\nDATABASE_URL={url}", flush=True)
        if server.proc is not None:
            server.proc.wait()
        return 1  # postgres exited by itself
    except KeyboardInterrupt:
        return 130
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
