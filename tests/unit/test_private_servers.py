"""tools/child.py and tools/debian.py, shared by the private servers (anvil, PostgreSQL, Redis):
the stop that signals, waits, then kills; the apt-get commands that install a missing server."""

import fcntl
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools import debian
from tools.child import stop_process
from tools.debian import InstallError, install_commands
from tools.pgserver import find_bin_dir

APT = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]


@pytest.mark.parametrize(
    ("euid", "sudo", "prefix"),
    [
        (0, None, []),  # CI: root, no sudo
        (0, "/usr/bin/sudo", []),  # root never goes through sudo
        (1000, "/usr/bin/sudo", ["/usr/bin/sudo", "-n"]),  # -n: fails instead of asking a password
    ],
)
def test_install_commands(euid, sudo, prefix):
    assert install_commands(["redis-server"], euid=euid, sudo=sudo) == [
        [*prefix, *APT, "update", "-qq"],
        [*prefix, *APT, "install", "-y", "-qq", "--no-install-recommends", "redis-server"],
    ]


def test_install_commands_with_recommends_for_chromium():
    """make chromium keeps Chromium's recommended packages (its fonts)."""
    assert install_commands(["chromium"], euid=0, sudo=None, recommends=True)[1] == [
        *APT, "install", "-y", "-qq", "chromium"
    ]


def test_install_commands_without_root_or_sudo_say_what_to_run():
    with pytest.raises(InstallError) as e:
        install_commands(["postgresql"], euid=1000, sudo=None)
    assert str(e.value) == (
        "postgresql is not installed and this user cannot install it (not root, no sudo): "
        "run `apt-get install -y postgresql` as root"
    )


def test_install_runs_apt_get_under_one_lock(tmp_path, monkeypatch):
    """make test installs side by side: each apt-get runs while the lock is held, so a second
    installer waits instead of failing on dpkg's."""
    lock = tmp_path / "apt.lock"
    monkeypatch.setattr(debian, "APT_LOCK", str(lock))
    ran = []
    real_run = subprocess.run

    def fake_run(cmd, **kwargs):
        # Another installer's try, without waiting: exit 1 when the lock is taken.
        held = real_run(["flock", "-n", str(lock), "true"]).returncode == 1
        ran.append((cmd[-1], held))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(debian.subprocess, "run", fake_run)
    debian.install(["redis-server"])
    assert ran == [("-qq", True), ("redis-server", True)]
    assert subprocess.run(["flock", "-n", str(lock), "true"]).returncode == 0  # let go after


def test_install_waits_for_the_lock_a_bounded_time(tmp_path, monkeypatch):
    """A stuck installer holding the lock fails the next one after lock_wait s, with nothing run."""
    lock = tmp_path / "apt.lock"
    monkeypatch.setattr(debian, "APT_LOCK", str(lock))
    monkeypatch.setattr(debian.subprocess, "run", lambda cmd, **kw: pytest.fail(f"ran {cmd}"))
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another open file: flock conflicts within one process too
        with pytest.raises(InstallError) as e:
            debian.install(["redis-server"], lock_wait=0.3)
    assert str(e.value) == f"another install held {lock} for 0.3 s"


def _initdb(lib: Path, version: str) -> None:
    path = lib / version / "bin" / "initdb"
    path.parent.mkdir(parents=True)
    path.write_text("")


@pytest.mark.parametrize(
    ("versions", "found"),
    [
        (["15"], "15"),
        (["9", "16", "15"], "16"),  # by number: "9" sorts after "16" as text
        (["17", "common"], "17"),  # not a version
    ],
)
def test_find_bin_dir_takes_the_newest_debian_version(tmp_path, versions, found):
    for version in versions:
        _initdb(tmp_path, version)
    (tmp_path / "18" / "bin").mkdir(parents=True)  # a version without initdb (half removed)
    assert find_bin_dir(tmp_path) == tmp_path / found / "bin"


def test_find_bin_dir_falls_back_to_path(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    monkeypatch.setenv("PATH", str(bindir))
    assert find_bin_dir(tmp_path / "none") is None
    (bindir / "initdb").write_text("")
    (bindir / "initdb").chmod(0o755)
    assert find_bin_dir(tmp_path / "none") == bindir


def _child(code: str) -> subprocess.Popen:
    """A Python child that prints 'ready' once its signal handlers are set."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code + "\nprint('ready', flush=True)\ntime.sleep(60)"], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def test_stop_process_sends_the_servers_signal():
    # PostgreSQL's fast shutdown is SIGINT: the child exits on that signal (and only on it).
    proc = _child(
        "import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGINT, lambda *_: sys.exit(7))"
    )
    stop_process(proc, signal.SIGINT, timeout=10)
    assert proc.returncode == 7


def test_stop_process_kills_a_server_that_does_not_exit_in_time():
    proc = _child("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)")
    started = time.monotonic()
    stop_process(proc, signal.SIGTERM, timeout=1)
    assert proc.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 5


def test_stop_process_leaves_an_ended_process_alone():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    stop_process(proc)
    stop_process(None)
    assert proc.returncode == 0
