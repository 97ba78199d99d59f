"""Backup export / encrypt / decrypt / restore in Chromium, with each validation message."""

from __future__ import annotations

import base64
import json

import pytest

from jshelpers import ABANDON, fails, new_wallet, ok
from pyhelpers import PATH, SMALL, address, encrypt_backup, split_backup, unb64, wrap

ZOO = "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong"

# Encrypts the owner's local bundle with small params and returns the file as base64.
ENCRYPT = """const b = nb.vault.exportBundle(a.owner);
  const bytes = await nb.vault.encryptBackup(a.pin || '123456', a.owner, b, {params: a.params});
  return nb.bytes.b64encode(bytes);"""
# The KDF parameters to accept: SMALL unless the test names others (null: design.md's).
DECRYPT = ("return nb.vault.decryptBackup(a.pin || '123456', nb.bytes.b64decode(a.file), a.owner,"
           f" {{params: a.params === undefined ? {json.dumps(SMALL)} : a.params}});")


def _file(page, owner, pin="123456") -> bytes:
    return unb64(ok(page, ENCRYPT, {"owner": owner, "params": SMALL, "pin": pin}))


def test_round_trip_and_restore_on_new_device(page):
    w = new_wallet(page)
    owner = w["address"]
    data = _file(page, owner)
    header, body = split_backup(data)
    assert header["owner"] == owner.lower() and header["derivation"] == PATH
    bundle = ok(page, DECRYPT, {"file": base64.b64encode(data).decode(), "owner": owner})
    assert bundle == {"version": 1, **w["materials"]}
    # New device: nothing stored, restore writes the materials after the address check.
    got = ok(page, """localStorage.clear();
        const addr = await nb.vault.restoreFromBackup('123456', nb.bytes.b64decode(a.file), a.owner,
          {params: a.params});
        return [addr, nb.vault.loadMaterials(a.owner),
          await nb.vault.unwrapMnemonic('123456', nb.vault.loadMaterials(a.owner))];""",
             {"file": base64.b64encode(data).decode(), "owner": owner.lower(), "params": SMALL})
    assert got == [owner, w["materials"], ABANDON]


def test_create_backup_checks_pin_first(page):
    owner = new_wallet(page)["address"]
    r = fails(page, "return nb.vault.createBackup('999999', a.owner, {params: a.params});",
              {"owner": owner, "params": SMALL})
    assert r["code"] == "INVALID_PIN"
    got = ok(page, """const r = await nb.vault.createBackup('123456', a.owner, {params: a.params});
                      return [r.fileName, nb.bytes.b64encode(r.bytes), await nb.vault.sha256Hex(r.bytes)];""",
             {"owner": owner, "params": SMALL})
    assert got[0] == f"newbl-backup-{owner.lower()}.bin"
    import hashlib
    assert got[2] == hashlib.sha256(unb64(got[1])).hexdigest()


def test_export_bundle_errors(page):
    r = fails(page, "return nb.vault.exportBundle('');")
    assert (r["code"], r["message"]) == ("EXPORT_NO_OWNER", "No active owner address")
    r = fails(page, "return nb.vault.exportBundle(a);", address(ABANDON))
    assert (r["code"], r["message"]) == ("MATERIALS_MISSING", "Local materials missing for bundle")
    owner = new_wallet(page)["address"]
    ok(page, "localStorage.removeItem(a.toLowerCase() + ':ciphertextIv');", owner)
    r = fails(page, "return nb.vault.exportBundle(a);", owner)
    assert r["message"] == "Local materials missing for bundle"


def _patched(data: bytes, fn) -> str:
    header, body = split_backup(data)
    header = fn(json.loads(json.dumps(header)))
    line = header if isinstance(header, bytes) else json.dumps(header).encode()
    return base64.b64encode(line + b"\n" + body).decode()


def _set(path, value):
    def fn(h):
        target = h
        for key in path[:-1]:
            target = target[key]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return h
    return fn


_DELETE = object()


@pytest.mark.parametrize("patch", [
    _set(["v"], 2), _set(["alg"], "AES-CBC"), _set(["kdf", "salt_rec"], _DELETE), _set(["iv"], _DELETE),
    _set(["iv"], "AAAA"), _set(["kdf", "kind"], "scrypt"), _set(["owner"], _DELETE),
    lambda h: b"not json",
])
def test_invalid_header(page, patch):
    owner = new_wallet(page)["address"]
    data = _file(page, owner)
    r = fails(page, DECRYPT, {"file": _patched(data, patch), "owner": owner})
    assert (r["code"], r["message"]) == ("INVALID_HEADER", "Invalid backup header")


def test_invalid_header_without_newline(page):
    r = fails(page, DECRYPT, {"file": base64.b64encode(b'{"v":1}').decode(), "owner": address(ABANDON)})
    assert r["message"] == "Invalid backup header"


def test_owner_mismatch_and_wrong_pin(page):
    owner = new_wallet(page)["address"]
    data = base64.b64encode(_file(page, owner)).decode()
    r = fails(page, DECRYPT, {"file": data, "owner": address(ZOO)})
    assert (r["code"], r["message"]) == ("OWNER_MISMATCH", "Backup owner mismatch")
    r = fails(page, DECRYPT, {"file": data, "owner": owner, "pin": "000000"})
    assert (r["code"], r["message"]) == ("INVALID_PIN", "Invalid PIN")
    r = fails(page, DECRYPT, {"file": data, "owner": ""})
    assert r["message"] == "No active owner address"


def test_unsupported_bundle_version(page):
    # Written by the independent Python implementation with a version 2 bundle.
    owner = address(ABANDON)
    bundle = {"version": 2, **wrap("123456", ABANDON, SMALL)}
    data = encrypt_backup("123456", owner, bundle, SMALL)
    r = fails(page, DECRYPT, {"file": base64.b64encode(data).decode(), "owner": owner})
    assert (r["code"], r["message"]) == ("UNSUPPORTED_VERSION", "Unsupported bundle version")


@pytest.mark.parametrize("call", [
    "return nb.vault.encryptBackup('123456', a.owner, a.bundle, {params: a.params});",
    "return nb.vault.restoreBundle('123456', a.bundle, a.owner, {params: a.params});",
])
@pytest.mark.parametrize("change, code", [
    ({"version": 2}, "UNSUPPORTED_VERSION"),
    ({"version": None}, "UNSUPPORTED_VERSION"),
    ({"ciphertext": None}, "BUNDLE_INVALID"),
    ({"devSecret": "AAAA"}, "BUNDLE_INVALID"),  # 3 bytes, not 32
])
def test_backup_and_restore_check_a_bundle_alike(page, call, change, code):
    owner = address(ABANDON)
    bundle = {"version": 1, **wrap("123456", ABANDON, SMALL), **change}
    r = fails(page, call, {"owner": owner, "bundle": bundle, "params": SMALL})
    assert r["code"] == code
    assert ok(page, "return nb.vault.loadMaterials(a.owner);", {"owner": owner}) is None  # nothing written


def test_restore_address_mismatch_writes_nothing(page):
    # The header names the active owner but the bundle holds another wallet.
    owner = address(ABANDON)
    other = new_wallet(page, words=ZOO, save=False)
    data = ok(page, """const b = {version: 1, ...a.m};
        return nb.bytes.b64encode(await nb.vault.encryptBackup('123456', a.owner, b, {params: a.params}));""",
              {"owner": owner, "m": other["materials"], "params": SMALL})
    bundle = ok(page, DECRYPT, {"file": data, "owner": owner})
    r = fails(page, "return nb.vault.restoreBundle('123456', a.bundle, a.owner, {params: a.params});",
              {"bundle": bundle, "owner": owner, "params": SMALL})
    assert (r["code"], r["message"]) == ("ADDRESS_MISMATCH",
                                         "Address derived from mnemonic does not match the active owner")
    assert ok(page, "return localStorage.length;") == 0
    r = fails(page, "return nb.vault.restoreBundle('111111', a.bundle, a.owner, {params: a.params});",
              {"bundle": bundle, "owner": owner, "params": SMALL})
    assert r["code"] == "INVALID_PIN"
    assert ok(page, "return localStorage.length;") == 0


# ---- issue 12 item 5: restore accepts only design.md section 4's KDF parameters

SPEC_JS = {"t": 3, "m": 262144, "p": 1}
GIB4 = 4 * 1024 * 1024  # KiB


@pytest.mark.parametrize("params,accepted", [
    (SPEC_JS, True),
    ({**SPEC_JS, "m": GIB4}, False),  # the issue's example: 4 GiB
    ({**SPEC_JS, "m": 2 ** 53}, False),
    ({**SPEC_JS, "m": 131072}, False),  # cheaper is not accepted either
    ({**SPEC_JS, "t": 4}, False),
    ({**SPEC_JS, "t": 10 ** 9}, False),
    ({**SPEC_JS, "p": 2}, False),
    ({**SPEC_JS, "m": "262144"}, False),
    ({**SPEC_JS, "m": 262144.5}, False),
    ({**SPEC_JS, "m": None}, False),
    ({"t": 3, "p": 1}, False),
    (None, False),
])
def test_backup_kdf_check_table(page, params, accepted):
    r = (ok if accepted else fails)(page, "return nb.vault.checkBackupKdf(a);", params)
    if accepted:
        assert r == SPEC_JS
    else:
        assert (r["code"], r["message"]) == ("UNSUPPORTED_BACKUP",
                                             "Unsupported backup: KDF parameters other than this wallet's")


def test_restore_of_a_4_gib_header_fails_before_any_argon2_work(page):
    """A header asking for m = 4 GiB: refused at once, no KDF worker started, nothing stored."""
    owner = address(ABANDON)
    data = encrypt_backup("123456", owner, {"version": 1, **wrap("123456", ABANDON, SMALL)}, SMALL)
    file = _patched(data, _set(["kdf", "m"], GIB4))
    got = ok(page, """const Real = window.Worker;
        let workers = 0;
        window.Worker = function (...args) { workers += 1; return new Real(...args); };
        const started = performance.now();
        let code = null;
        try {
          await nb.vault.restoreFromBackup('123456', nb.bytes.b64decode(a.file), a.owner);
        } catch (e) {
          code = e.code;
        } finally {
          window.Worker = Real;
        }
        return {code, workers, ms: performance.now() - started, stored: localStorage.length};""",
             {"file": file, "owner": owner})
    assert got["code"] == "UNSUPPORTED_BACKUP" and got["workers"] == 0 and got["stored"] == 0, got
    assert got["ms"] < 1000, got
    # The same file with design.md's parameters reaches the KDF (the wrong key then fails the PIN check).
    spec_file = _patched(data, lambda h: {**h, "kdf": {**h["kdf"], **SPEC_JS}})
    r = fails(page, DECRYPT, {"file": spec_file, "owner": owner, "params": None})
    assert r["code"] == "INVALID_PIN"
