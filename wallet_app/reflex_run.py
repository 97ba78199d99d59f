"""`reflex ...` (its CLI, in this process) with one change: the backend's granian respawns a worker
that dies. Reflex builds granian's server with the default, under which one dead worker stops the
whole server; with several workers sharing Redis (REDIS_URL) the others must carry on, and the
dead one comes back (serve.py runs this instead of the `reflex` script)."""

import sys
from typing import Any

import granian.server


def main() -> None:
    base: Any = granian.server.Server

    class Respawning(base):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("respawn_failed_workers", True)
            super().__init__(*args, **kwargs)

    granian.server.Server = Respawning  # read by reflex when it starts granian
    from reflex.reflex import cli

    cli(sys.argv[1:], prog_name="reflex")


if __name__ == "__main__":
    main()
