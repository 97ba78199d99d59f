"""vendor.copy_argon2: copies exactly what assets/kdf-worker.js loads, the wasm with small
functions inlined (that the inlined builds hash right is checked in test_js_crypto)."""

from __future__ import annotations

import pytest

from custom_components.wallet_js.vendor import ARGON2_PACKAGE, copy_argon2

import browser_harness  # noqa: F401  (puts the repo on sys.path)


def test_copies_the_four_worker_files(tmp_path):
    copy_argon2(tmp_path / "argon2")
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert files == ["argon2/dist/argon2-simd.wasm", "argon2/dist/argon2.js",
                     "argon2/dist/argon2.wasm", "argon2/lib/argon2.js"]
    assert (tmp_path / "argon2/lib/argon2.js").read_bytes() == (ARGON2_PACKAGE / "lib/argon2.js").read_bytes()
    for build in ("argon2.wasm", "argon2-simd.wasm"):
        shipped = function_count((ARGON2_PACKAGE / "dist" / build).read_bytes())
        ours = function_count((tmp_path / "argon2/dist" / build).read_bytes())
        assert ours < shipped, build  # the small helpers are gone into their callers
    copy_argon2(tmp_path / "argon2")  # idempotent (called on every build)


def function_count(wasm: bytes) -> int:
    """Entries in the code section (id 10) of a wasm binary."""
    assert wasm[:4] == b"\0asm"

    def leb(i: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            byte = wasm[i]
            value |= (byte & 0x7F) << shift
            shift, i = shift + 7, i + 1
            if byte < 0x80:
                return value, i

    i = 8
    while i < len(wasm):
        section, (size, i) = wasm[i], leb(i + 1)
        if section == 10:
            return leb(i)[0]
        i += size
    raise AssertionError("no code section")


def test_missing_package_names_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="npm i --prefix tools"):
        copy_argon2(tmp_path / "out", package=tmp_path / "nope")
