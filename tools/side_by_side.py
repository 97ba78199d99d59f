"""Runs test commands side by side (`make test`: the SQLite half and the scale half).

    python tools/side_by_side.py NAME=COMMAND [NAME=COMMAND ...]

On a 2-core machine one pytest run leaves the CPU idle a third to half of the time (it waits on
browsers, chains and servers), so two halves side by side take far less than one after the other.
Each command runs under bash with its own port range (NEWBL_PORT_RANGE: they never pick the same
port) and results folder (TEST_RESULTS_DIR=test-results/NAME); its output goes to
test-results/NAME/output.log. A progress line every minute; at the end each output whole, in
order. Exit status: 0 when every command passed, else the first failure's. SIGTERM (a CI
timeout) or Ctrl-C stops them all and still prints what they wrote.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "test-results"
# Below the kernel's ephemeral ports (32768 and up), so no outgoing connection takes one either.
PORT_RANGES = ["20000-25999", "26000-31999"]
PROGRESS_EVERY_S = 60


def last_progress(log: Path) -> str:
    """pytest -q's latest percentage ('[ 42%]'), or '-' before its first."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return "-"
    mark = text.rfind("%]")
    return text[text.rfind("[", 0, mark) : mark + 2] if mark != -1 else "-"


def main(argv: list[str]) -> int:
    jobs = [arg.split("=", 1) for arg in argv]
    if not jobs or len(jobs) > len(PORT_RANGES) or any(len(job) != 2 for job in jobs):
        print(__doc__, file=sys.stderr)
        return 2
    procs: list[tuple[str, Path, subprocess.Popen]] = []
    for (name, command), ports in zip(jobs, PORT_RANGES, strict=False):
        folder = RESULTS / name
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "output.log"
        env = {**os.environ, "NEWBL_PORT_RANGE": ports, "TEST_RESULTS_DIR": str(folder)}
        print(f"[{name}] {command}  (output: {log})", flush=True)
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                ["bash", "-c", command],
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        procs.append((name, log, proc))

    def stop(signum: int, _frame) -> None:
        for _, _, proc in procs:
            if proc.poll() is None:
                proc.send_signal(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    started = time.monotonic()
    report_at = started + PROGRESS_EVERY_S
    interrupted = False
    try:
        while running := [proc for _, _, proc in procs if proc.poll() is None]:
            try:
                running[0].wait(timeout=1)  # at most a second: the others may end first
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() >= report_at:
                report_at += PROGRESS_EVERY_S
                elapsed = int(time.monotonic() - started)
                states = "  ".join(
                    f"{name} {last_progress(log) if proc.poll() is None else f'done ({proc.returncode})'}"
                    for name, log, proc in procs
                )
                print(f"{elapsed // 60:3d} min: {states}", flush=True)
    except KeyboardInterrupt:
        interrupted = True
        for _, _, proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    finally:
        signal.signal(signal.SIGTERM, previous)
    for name, log, proc in procs:
        print(f"\n{'=' * 30} {name}: exit {proc.poll()} {'=' * 30}", flush=True)
        sys.stdout.write(log.read_text(errors="replace"))
    sys.stdout.flush()
    if interrupted:
        return 130
    return next((proc.returncode for _, _, proc in procs if proc.returncode), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
