"""vendor.copy_argon2: copies exactly what assets/kdf-worker.js loads."""

from __future__ import annotations

import pytest

import browser_harness  # noqa: F401  (puts the repo on sys.path)
from custom_components.wallet_js.vendor import ARGON2_PACKAGE, copy_argon2


def test_copies_the_four_worker_files(tmp_path):
    copy_argon2(tmp_path / "argon2")
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert files == ["argon2/dist/argon2-simd.wasm", "argon2/dist/argon2.js",
                     "argon2/dist/argon2.wasm", "argon2/lib/argon2.js"]
    assert (tmp_path / "argon2/dist/argon2.wasm").read_bytes() == (ARGON2_PACKAGE / "dist/argon2.wasm").read_bytes()
    copy_argon2(tmp_path / "argon2")  # idempotent (called on every build)


def test_missing_package_names_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="npm i --prefix tools"):
        copy_argon2(tmp_path / "out", package=tmp_path / "nope")
