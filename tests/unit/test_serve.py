"""Stopping `make run` with Ctrl-C: the server shuts down by itself, no traceback, status 130."""

import os
import signal
import subprocess
import sys

from wallet_app.core.config import REPO_ROOT

SERVER = """
import signal, sys, time
signal.signal(signal.SIGINT, lambda *_: (print('server stopped cleanly', flush=True), sys.exit(0)))
print('ready', flush=True)
while True:
    time.sleep(0.05)
"""
SERVE = f"""
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
from wallet_app.serve import run_until_stopped
sys.exit(run_until_stopped([sys.executable, '-c', {SERVER!r}]))
"""


def test_ctrl_c_stops_quietly():
    proc = subprocess.Popen([sys.executable, "-c", SERVE], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert out == "server stopped cleanly\n"  # it was not killed
    assert err == ""


def test_several_workers_need_redis(tmp_path):
    # Each worker would keep its own clients' state: refused before anything starts.
    env = {**os.environ, "DEV_MODE": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db'}", "REDIS_URL": ""}
    done = subprocess.run([sys.executable, "-m", "wallet_app.serve", "--workers", "2", "--port", "1"], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == "--workers 2 needs REDIS_URL: the workers share their state there\n"
