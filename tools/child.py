"""A command run beside a private server (tools/pgserver.py, tools/redisserver.py): the command
ends first, then the caller stops its server, so nothing still running meets a stopped server."""

from __future__ import annotations

import subprocess


def run_child(cmd: list[str], env: dict[str, str]) -> int:
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
        child.terminate()
        try:
            child.wait(60)
        except subprocess.TimeoutExpired:
            pass
        raise
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
