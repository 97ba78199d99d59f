"""`make run`'s processes: Ctrl-C stops the server quietly (no traceback, status 130), and so does a SIGINT
sent to serve alone; a stuck server is killed with its workers; the relayer beside it is started again
when it fails, and stopped with it."""

import os
import signal
import subprocess
import sys

import psutil
import pytest

from tests.waits import wait_until
from wallet_app import serve
from wallet_app.core.config import REPO_ROOT

# A server that stops cleanly on one signal ({signal}), and one stuck with a worker of its own.
SERVER_STOPPING_ON = """
import signal, sys, time
signal.signal(signal.{signal}, lambda *_: (print('server stopped cleanly', flush=True), sys.exit(0)))
print('ready', flush=True)
while True:
    time.sleep(0.05)
"""
SERVER_STUCK_WITH_A_WORKER = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
worker = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])
print(worker.pid, flush=True)
while True:
    time.sleep(0.05)
"""
SERVE = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
from wallet_app.serve import run_until_stopped
sys.exit(run_until_stopped([sys.executable, '-c', {server!r}], grace={grace}))
"""


def start_serve(server: str, grace: float = 20.0) -> subprocess.Popen:
    """`python -m wallet_app.serve` in its own process group, running `server`."""
    return subprocess.Popen([sys.executable, "-c", SERVE.format(server=server, grace=grace)], cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def test_ctrl_c_stops_quietly():
    proc = start_serve(SERVER_STOPPING_ON.format(signal="SIGINT"))
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


def test_a_sigint_to_serve_alone_stops_the_server_it_did_not_reach():
    """kill -INT of make run's python (not its group): the server is terminated, not left running
    until the grace is over and then killed."""
    # A server that only SIGTERM stops: the SIGINT below is sent to serve alone and never reaches it.
    proc = start_serve(SERVER_STOPPING_ON.format(signal="SIGTERM"), grace=60)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert (proc.returncode, out, err) == (130, "server stopped cleanly\n", "")


def test_a_stuck_server_is_killed_with_its_workers():
    """granian's workers outlive a killed parent and keep the port: they go with it."""
    proc = start_serve(SERVER_STUCK_WITH_A_WORKER, grace=1)
    try:
        assert proc.stdout is not None
        worker = psutil.Process(int(proc.stdout.readline()))
        os.kill(proc.pid, signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert not worker_alive(worker)


def worker_alive(worker: psutil.Process) -> bool:
    """Running and not a zombie (a container's first process may never reap an orphan)."""
    try:
        return worker.is_running() and worker.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_several_workers_need_redis(tmp_path):
    # Each worker would keep its own clients' state: refused before anything starts.
    env = {**os.environ, "DEV_MODE": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db'}", "REDIS_URL": ""}
    done = subprocess.run([sys.executable, "-m", "wallet_app.serve", "--workers", "2", "--port", "1"], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == "--workers 2 needs REDIS_URL: the workers share their state there\n"


# A child that records its pid, then lives until stopped (or exits with the status it is given).
CHILD = """
import os, sys, time
with open(sys.argv[1], "a") as f:
    f.write(f"{os.getpid()}\\n")
if len(sys.argv) > 2:
    sys.exit(int(sys.argv[2]))
time.sleep(120)
"""


def _pids(path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_supervised_process_killed_is_started_again_and_stopped_with_the_server(tmp_path, monkeypatch):
    monkeypatch.setattr(serve, "RESTART_DELAYS", (0.1,))
    pids = tmp_path / "pids"
    with serve.supervised("child", [sys.executable, "-c", CHILD, str(pids)]) as watcher:
        first = wait_until(lambda: _pids(pids), 20)[0]
        os.kill(first, signal.SIGKILL)  # as the kernel's out-of-memory killer does
        second = wait_until(lambda: _pids(pids)[1:], 20)[0]
        assert watcher.is_alive()
    assert wait_until(lambda: _gone(second), 20)  # stopped with the server
    watcher.join(5)
    assert not watcher.is_alive() and _pids(pids) == [first, second]  # and not started again


@pytest.mark.parametrize("status, started_again", [(1, True), (0, False), (2, False)])
def test_a_supervised_process_is_started_again_only_after_a_failure(tmp_path, monkeypatch, status, started_again):
    # 1: crashed (a traceback); 0: stopped on request (SIGTERM, Ctrl-C); 2: settings it refuses.
    monkeypatch.setattr(serve, "RESTART_DELAYS", (0.1,))
    pids = tmp_path / "pids"
    with serve.supervised("child", [sys.executable, "-c", CHILD, str(pids), str(status)]) as watcher:
        if started_again:
            wait_until(lambda: len(_pids(pids)) >= 3, 20)  # and again, while it keeps failing
        else:
            watcher.join(20)
            assert not watcher.is_alive()  # it gave up on it
            assert len(_pids(pids)) == 1
