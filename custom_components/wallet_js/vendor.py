"""Copies argon2-browser's runtime files next to the KDF worker at build time.

assets/kdf-worker.js loads argon2/lib/argon2.js, argon2/dist/argon2.js and one of
argon2/dist/argon2{,-simd}.wasm relative to itself, so with dest = assets/argon2
(gitignored) they are served at /argon2/... beside /kdf-worker.js.

The two .wasm files are not copied as shipped but passed through binaryen's
wasm-opt with one pass, inlining. Argon2's BlaMka multiply is a 48-byte function
in argon2-browser's build, called in the innermost loop of every block. V8's
optimizing tier leaves it a call once its inlining budget is spent, and in the
SIMD build that call was about a third of the hash time (a CPU profile of the
worker). Inlined, a hash in a fresh worker goes from about 1.8x native to 1.45x
(bench/kdf.py). The code is otherwise the library's own, and tests/js checks
both builds against argon2-cffi.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from wallet_app.core.files import write_if_changed

REPO = Path(__file__).resolve().parents[2]
ARGON2_PACKAGE = REPO / "tools" / "node_modules" / "argon2-browser"
ARGON2_FILES = (
    "lib/argon2.js",
    "dist/argon2.js",
    "dist/argon2.wasm",
    "dist/argon2-simd.wasm",
)
WASM_OPT = REPO / "tools" / "node_modules" / ".bin" / "wasm-opt"
# Inline every function of up to 60 binaryen IR nodes, wherever it is called (BlaMka is ~30).
WASM_OPT_ARGS = ("--enable-simd", "--always-inline-max-function-size=60", "--inlining")
WASM_CACHE = REPO / ".cache" / "argon2-wasm"


def inline_small_functions(src: Path, dest: Path, cache: Path = WASM_CACHE) -> None:
    """Write src with its small functions inlined to dest (cached by input and flags)."""
    data = Path(src).read_bytes()
    key = hashlib.sha256(data + repr(WASM_OPT_ARGS).encode()).hexdigest()[:24]
    cached = cache / f"{key}.wasm"
    if not cached.is_file():
        if not WASM_OPT.exists():
            raise FileNotFoundError(f"{WASM_OPT} missing: run `npm i --prefix tools`")
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f"{key}.{os.getpid()}.tmp"
        subprocess.run(
            [str(WASM_OPT), str(src), *WASM_OPT_ARGS, "-o", str(tmp)], check=True, capture_output=True, timeout=120
        )
        os.replace(tmp, cached)
    write_if_changed(dest, cached.read_bytes())


def copy_argon2(dest: Path, package: Path = ARGON2_PACKAGE) -> None:
    """Copy the four files the worker needs into dest (lib/ and dist/ kept), the
    .wasm ones with their small functions inlined.

    Raises FileNotFoundError naming the missing file when `npm i --prefix tools`
    has not been run.
    """
    dest = Path(dest)
    for rel in ARGON2_FILES:
        src = package / rel
        if not src.is_file():
            raise FileNotFoundError(f"{src} missing: run `npm i --prefix tools`")
        # Every server start copies them: rewritten only on change, atomically (a build beside
        # this one copying assets/ meanwhile must never get a half-written file).
        target = dest / rel
        if rel.endswith(".wasm"):
            inline_small_functions(src, target)
        else:
            write_if_changed(target, src.read_bytes())
