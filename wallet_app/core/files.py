"""Files that several processes of one machine write at once: the generated browser modules and the
copied browser libraries that every build (`make build`, each test server) puts where the others
copy from."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_if_changed(path: Path, data: bytes) -> None:
    """Write `data` to `path` only when it differs, atomically (a new file renamed over the old): a
    build copying the folder meanwhile gets the old file or the new one, never a half-written one."""
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
