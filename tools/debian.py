"""Debian packages the project needs, installed with apt-get when missing: postgresql and
redis-server for the private servers; Chromium and a Korean font for the browser tests (`make
chromium`: `python3 tools/debian.py --with-recommends PKG...`). Non-interactive (no debconf
question, no password prompt): as root directly (CI has root and no sudo), otherwise through
`sudo -n`, which fails rather than asks; with neither, the error says what to run. Standard
library only (see tools/child.py)."""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import time

# make test runs its installs side by side, and a second apt-get at once fails on dpkg's lock.
APT_LOCK = "/tmp/newbl-apt.lock"
LOCK_WAIT_SECONDS = 1800  # two bounded apt-get runs of another installer, and then some


class InstallError(RuntimeError):
    pass


def install_commands(
    packages: list[str], *, euid: int, sudo: str | None, recommends: bool = False
) -> list[list[str]]:
    """The apt-get commands installing `packages`, for a user id `euid` (0: root) with `sudo`
    (its path, or None when absent), with their recommended packages or not. InstallError when
    they could not run."""
    # `env`, not the environment: sudo resets the environment it passes on.
    apt = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
    if euid != 0:
        if not sudo:
            raise InstallError(
                f"{' '.join(packages)} is not installed and this user cannot install it (not root, no sudo): "
                f"run `apt-get install -y {' '.join(packages)}` as root"
            )
        apt = [sudo, "-n", *apt]
    without = [] if recommends else ["--no-install-recommends"]
    return [[*apt, "update", "-qq"], [*apt, "install", "-y", "-qq", *without, *packages]]


def install(
    packages: list[str], timeout: float = 900, recommends: bool = False, lock_wait: float = LOCK_WAIT_SECONDS
) -> None:
    """Runs install_commands for this process, one apt-get user at a time (APT_LOCK, waited for at
    most `lock_wait` s), each bounded by `timeout` s (a mirror that stops answering fails the
    install instead of holding CI to its end); InstallError with apt-get's output when one fails."""
    commands = install_commands(packages, euid=os.geteuid(), sudo=shutil.which("sudo"), recommends=recommends)
    # Read-only: another user's lock file can still be taken.
    with open(os.open(APT_LOCK, os.O_RDONLY | os.O_CREAT, 0o666)) as lock:
        _take(lock, lock_wait)
        for cmd in commands:
            print(f"installing {' '.join(packages)}: {shlex.join(cmd)}", flush=True)
            result = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
            if result.returncode:
                raise InstallError(f"`{shlex.join(cmd)}` failed ({result.returncode}): {result.stderr[-1500:]}")


def _take(lock, wait: float) -> None:
    end = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= end:
                raise InstallError(f"another install held {APT_LOCK} for {wait:g} s") from None
            time.sleep(0.2)


def main(argv: list[str]) -> int:
    recommends = "--with-recommends" in argv
    packages = [a for a in argv if a != "--with-recommends"]
    try:
        install(packages, recommends=recommends)
    except (InstallError, subprocess.TimeoutExpired) as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
