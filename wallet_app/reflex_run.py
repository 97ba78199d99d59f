"""`reflex ...` (its CLI, in this process) with two changes:

- The backend's granian respawns a worker that dies. Reflex builds granian's server with the
  default, under which one dead worker stops the whole server; with several workers sharing Redis
  (REDIS_URL) the others must carry on, and the dead one comes back.
- With FRONTEND_BUILD_CACHE set to a folder, a production build whose inputs (the compiled web
  folder, node_modules and outputs aside) were built before is copied from there instead of built
  again (about 7 s of CPU). The e2e servers of a test run share one.

serve.py runs this instead of the `reflex` script.
"""

import hashlib
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import granian.server

# Not inputs of the build: installed packages, the build's own output and type stubs, and
# Reflex's run bookkeeping (a timestamp).
NOT_INPUTS = {"node_modules", "build", ".react-router", "reflex.json", "reflex.install_frontend_packages.cached"}


def build_inputs_digest(web_dir: Path) -> str:
    """SHA-256 over the relative path and bytes of every input file of the web folder."""
    digest = hashlib.sha256()
    files = sorted(p for p in web_dir.rglob("*") if p.is_file() and p.relative_to(web_dir).parts[0] not in NOT_INPUTS)
    for path in files:
        digest.update(path.relative_to(web_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def cached_build(build: Callable[[], None], web_dir: Callable[[], Path], cache_dir: Path) -> Callable[[], None]:
    """`build` (which writes web_dir()/build), skipped when cache_dir holds its output for the same
    inputs; a new output is stored there whole or not at all (rename), so a server beside this one
    never copies half a build."""

    def build_or_copy() -> None:
        web = web_dir()
        stored = cache_dir / build_inputs_digest(web)
        out = web / "build"
        if stored.is_dir():
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(stored, out)
            print(f"Frontend build: the same as {stored.name[:12]} in {cache_dir}, copied", flush=True)
            return
        build()
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = cache_dir / f".{stored.name}.{os.getpid()}"
        shutil.copytree(out, partial)
        try:
            partial.rename(stored)
        except OSError:  # another server stored the same build first
            shutil.rmtree(partial, ignore_errors=True)

    return build_or_copy


def main() -> None:
    base: Any = granian.server.Server

    class Respawning(base):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("respawn_failed_workers", True)
            super().__init__(*args, **kwargs)

    granian.server.Server = Respawning  # read by reflex when it starts granian
    if cache := os.environ.get("FRONTEND_BUILD_CACHE"):
        from reflex.utils import build, prerequisites

        # setup_frontend_prod calls the module's build() by name.
        build.build = cached_build(build.build, prerequisites.get_web_dir, Path(cache))
    from reflex.reflex import cli

    cli(sys.argv[1:], prog_name="reflex")


if __name__ == "__main__":
    main()
