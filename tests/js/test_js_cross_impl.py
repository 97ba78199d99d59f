"""Cross-implementation check of design.md section 4.

Materials and backup files written by the browser (spec KDF parameters) are
opened in Python with argon2-cffi + cryptography + eth-account only, and files
written by that Python implementation are restored by the browser.
"""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.exceptions import InvalidTag

from jshelpers import ok
from pyhelpers import PATH, SMALL, SPEC, address, decrypt_backup, encrypt_backup, split_backup, unb64, unwrap, wrap

PIN = "482913"


@pytest.fixture()
def browser_wallet(page):
    """A new random wallet made in the browser with the spec parameters and stored."""
    return ok(page, """const w = await nb.vault.wrapNew(a);
                       nb.vault.saveMaterials(w.address, w.materials); return w;""", PIN)


def test_browser_materials_open_in_python(page, browser_wallet):
    m = browser_wallet["materials"]
    assert m["kdfParams"] == '{"t":3,"m":262144,"p":1}'
    words = unwrap(PIN, m)
    assert len(words.split(" ")) == 12 and words == " ".join(words.split())
    assert address(words) == browser_wallet["address"]
    with pytest.raises(InvalidTag):
        unwrap("482914", m)
    # What the browser stored is exactly what it returned.
    owner = browser_wallet["address"].lower()
    stored = ok(page, "return Object.fromEntries(Object.entries(localStorage));")
    assert stored == {f"{owner}:{k}": v for k, v in m.items()}


def test_browser_backup_opens_in_python(page, browser_wallet):
    owner = browser_wallet["address"]
    got = ok(page, """const r = await nb.vault.createBackup(a.pin, a.owner);
                      return [r.fileName, nb.bytes.b64encode(r.bytes)];""", {"pin": PIN, "owner": owner})
    assert got[0] == f"newbl-backup-{owner.lower()}.bin"
    data = unb64(got[1])
    line = data.split(b"\n", 1)[0].decode()
    header, _ = split_backup(data)
    # Key order and encodings as written in design.md section 4.
    assert list(header) == ["v", "alg", "kdf", "iv", "owner", "derivation"]
    assert list(header["kdf"]) == ["kind", "salt_rec", "t", "m", "p"]
    assert header["v"] == 1 and header["alg"] == "AES-GCM" and header["kdf"]["kind"] == "Argon2id"
    assert {k: header["kdf"][k] for k in "tmp"} == SPEC
    assert len(unb64(header["kdf"]["salt_rec"])) == 16 and len(unb64(header["iv"])) == 12
    assert header["owner"] == owner.lower() and header["derivation"] == PATH
    assert json.dumps(header, separators=(",", ":")) == line  # compact JSON line
    bundle = decrypt_backup(PIN, data)
    assert bundle == {"version": 1, **browser_wallet["materials"]}
    assert address(unwrap(PIN, bundle)) == owner
    with pytest.raises(InvalidTag):
        decrypt_backup("000000", data)


def test_python_backup_restores_in_browser(page):
    words = "legal winner thank year wave sausage worth useful legal winner thank yellow"
    owner = address(words)
    materials = wrap(PIN, words, SMALL)
    data = encrypt_backup(PIN, owner, {"version": 1, **materials}, SMALL)
    got = ok(page, """const opts = {params: a.params};  // small parameters: accepted in tests only
        const addr = await nb.vault.restoreFromBackup(a.pin, nb.bytes.b64decode(a.file), a.owner, opts);
        return [addr, await nb.vault.unwrapMnemonic(a.pin, nb.vault.loadMaterials(a.owner))];""",
             {"pin": PIN, "file": base64.b64encode(data).decode(), "owner": owner.lower(), "params": SMALL})
    assert got == [owner, words]
