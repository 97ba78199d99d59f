"""Copies argon2-browser's runtime files next to the KDF worker at build time.

assets/kdf-worker.js loads argon2/lib/argon2.js, argon2/dist/argon2.js and one of
argon2/dist/argon2{,-simd}.wasm relative to itself, so with dest = assets/argon2
(gitignored) they are served at /argon2/... beside /kdf-worker.js.
"""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARGON2_PACKAGE = REPO / "tools" / "node_modules" / "argon2-browser"
ARGON2_FILES = (
    "lib/argon2.js",
    "dist/argon2.js",
    "dist/argon2.wasm",
    "dist/argon2-simd.wasm",
)


def copy_argon2(dest: Path, package: Path = ARGON2_PACKAGE) -> None:
    """Copy the four files the worker needs into dest (lib/ and dist/ kept).

    Raises FileNotFoundError naming the missing file when `npm i --prefix tools`
    has not been run.
    """
    dest = Path(dest)
    for rel in ARGON2_FILES:
        src = package / rel
        if not src.is_file():
            raise FileNotFoundError(f"{src} missing: run `npm i --prefix tools`")
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
