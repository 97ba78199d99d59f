"""Child processes of the private servers (wallet_app/dev/anvil.py, tools/pgserver.py,
tools/redisserver.py): stopping one, and a command run beside one (`-- CMD`). Standard library
only: `make redis` runs tools/redisserver.py with the system's python3."""

from __future__ import annotations

import signal
import subprocess


def stop_process(proc: subprocess.Popen | None, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
    """Ask a server to shut down (`sig`: the one it saves and exits on), wait `timeout` s for it,
    then kill it. Nothing to do when it is not running."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def run_child(cmd: list[str], env: dict[str, str]) -> int:
    """Runs `cmd` to its end: the command ends first, then the caller stops its server, so
    nothing still running meets a stopped server."""
    child = subprocess.Popen(cmd, env=env)
    try:
        return child.wait()
    except KeyboardInterrupt:
        # Ctrl-C reached the command too (same process group): let it finish its own shutdown.
        try:
            return child.wait(60)
        except subprocess.TimeoutExpired:
            return 130
    except SystemExit:  # SIGTERM to us (the callers turn it into sys.exit): pass it on
        stop_process(child, timeout=60)
        raise
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
