"""wallet_js vault / keyring / kdf in real Chromium, checked against Python libraries.

Spec KDF parameters (256 MiB) are used only where the test is about them; the
other tests pass small parameters (the functions take them) to stay fast.
"""

from __future__ import annotations

import json
import os
import re

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data

from jshelpers import ABANDON, PIN, fails, new_wallet, ok
from pyhelpers import SMALL, SPEC, address, argon2id, private_key, unb64

KNOWN_SALT = bytes(range(16))
KNOWN_HASH = "18c0aab5206afb1fdf45e98f52ccfb855ca919844122bb2ba06b6794e0457a14"
B64_RE = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


# ---------------------------------------------------------------- KDF

def test_kdf_known_vector_spec_params(page):
    native = argon2id(PIN.encode(), KNOWN_SALT, SPEC).hex()
    assert native == KNOWN_HASH
    got = ok(page, """return nb.hex(await nb.kdf.argon2id(
        new TextEncoder().encode('123456'), nb.unhex('000102030405060708090a0b0c0d0e0f')));""")
    assert got == KNOWN_HASH


def test_kdf_random_vector_matches_argon2_cffi(page):
    pw, salt = os.urandom(6).hex().encode(), os.urandom(16)
    params = {"t": 2, "m": 8192, "p": 1}
    got = ok(page, "return nb.hex(await nb.kdf.argon2id(nb.unhex(a.pw), nb.unhex(a.salt), a.params));",
             {"pw": pw.hex(), "salt": salt.hex(), "params": params})
    assert got == argon2id(pw, salt, params).hex()


def test_kdf_plain_wasm_build_matches_argon2_cffi(page):
    # The worker picks the SIMD build here; /nosimd/ serves the plain build under its name.
    pw, salt = os.urandom(6).hex().encode(), os.urandom(16)
    got = ok(page, """return nb.hex(await nb.kdf.argon2id(nb.unhex(a.pw), nb.unhex(a.salt), a.params,
        {workerUrl: '/nosimd/kdf-worker.js'}));""", {"pw": pw.hex(), "salt": salt.hex(), "params": SMALL})
    assert got == argon2id(pw, salt, SMALL).hex()


def test_kdf_warm_worker_reuses_one_worker(page):
    got = ok(page, """
        const w = new nb.kdf.KdfWorker();
        try {
          const pw = new TextEncoder().encode('123456');
          const s1 = nb.unhex('000102030405060708090a0b0c0d0e0f'), s2 = nb.unhex('0f0e0d0c0b0a09080706050403020100');
          return [nb.hex(await w.hash(pw, s1, a)), nb.hex(await w.hash(pw, s2, a)), nb.hex(pw)];
        } finally { w.close(); }""", SMALL)
    assert got[0] == argon2id(b"123456", KNOWN_SALT, SMALL).hex()
    assert got[1] == argon2id(b"123456", KNOWN_SALT[::-1], SMALL).hex()
    assert got[2] == b"123456".hex()  # the caller's buffer is neither wiped nor detached


@pytest.mark.parametrize("url", [
    "/missing-kdf-worker.js",     # worker script 404
    "/nolib/kdf-worker.js",       # argon2 lib 404 (importScripts throws)
    "/nowasm/kdf-worker.js",      # wasm 404 (fetch !ok)
    "/badwasm/kdf-worker.js",     # wasm compile failure (unhandled rejection path)
    "/nocsp/kdf-worker.js",       # worker served without 'wasm-unsafe-eval'
])
def test_kdf_load_failure_rejects_and_next_worker_works(page, url):
    r = fails(page, """return nb.kdf.argon2id(new TextEncoder().encode('1'), new Uint8Array(16),
                                               {t:1, m:64, p:1}, {workerUrl: a});""", url)
    assert (r["code"], r["message"]) == ("KDF_LOAD", "failed to load argon2")
    got = ok(page, "return nb.hex(await nb.kdf.argon2id(new TextEncoder().encode('1'), new Uint8Array(16), a));",
             SMALL)
    assert got == argon2id(b"1", bytes(16), SMALL).hex()


def test_kdf_load_failure_through_vault_and_default_url(page):
    r = fails(page, """nb.kdf.setKdfWorkerUrl('/nolib/kdf-worker.js');
                       try { return await nb.vault.wrapNew('123456', {params: a}); }
                       finally { nb.kdf.setKdfWorkerUrl('/kdf-worker.js'); }""", SMALL)
    assert r["message"] == "failed to load argon2"


@pytest.mark.parametrize("params", [{"t": 0, "m": 1024, "p": 1}, {"t": 1, "m": 4, "p": 1},
                                    {"t": 1.5, "m": 1024, "p": 1}])
def test_kdf_rejects_bad_params(page, params):
    r = fails(page, "return nb.kdf.argon2id(new Uint8Array(6), new Uint8Array(16), a);", params)
    assert r["code"] == "KDF_PARAMS"


# ---------------------------------------------------------------- phrase and address

@pytest.mark.parametrize("words", [
    ABANDON,
    "legal winner thank year wave sausage worth useful legal winner thank yellow",
    "letter advice cage absurd amount doctor acoustic avoid letter advice cage above",
    "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong",
])
def test_address_from_known_mnemonics_matches_eth_account(page, words):
    got = ok(page, "return nb.vault.addressFromMnemonic(a);", words)
    assert got == address(words)  # both EIP-55 checksummed
    if words == ABANDON:
        assert got == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"


def test_create_mnemonic_is_random_valid_12_words(page):
    phrases = ok(page, "return [nb.vault.createMnemonic(), nb.vault.createMnemonic()];")
    assert phrases[0] != phrases[1]
    for p in phrases:
        assert len(p.split(" ")) == 12
        assert address(p).startswith("0x")  # eth-account accepts the checksum


def test_invalid_mnemonic(page):
    r = fails(page, "return nb.vault.addressFromMnemonic(a);", " ".join(["abandon"] * 12))
    assert (r["code"], r["message"]) == ("MNEMONIC_INVALID", "Invalid recovery phrase")


# ---------------------------------------------------------------- wrap / unwrap / storage

def test_wrap_unwrap_round_trip_and_encodings(page):
    w = new_wallet(page, save=False)
    assert w["address"] == address(ABANDON)
    m = w["materials"]
    assert sorted(m) == sorted(["lwrapIv", "lwrapCt", "kdfSaltB", "kdfParams", "ciphertextIv", "ciphertext",
                                "devSecret"])
    sizes = {"lwrapIv": 12, "lwrapCt": 48, "kdfSaltB": 16, "ciphertextIv": 12, "devSecret": 32,
             "ciphertext": len(ABANDON) + 16}
    for name, size in sizes.items():
        assert B64_RE.match(m[name]), name
        assert len(unb64(m[name])) == size, name
    assert m["kdfParams"] == '{"t":1,"m":1024,"p":1}'
    assert ok(page, "return nb.vault.unwrapMnemonic('123456', a);", m) == ABANDON


def test_default_params_are_spec(page):
    # wrapNew with the defaults is exercised (and opened in Python) by test_js_cross_impl.py.
    got = ok(page, "return JSON.stringify(nb.kdf.SPEC_KDF_PARAMS);")
    assert json.loads(got) == SPEC


def test_wrong_pin(page):
    m = new_wallet(page, save=False)["materials"]
    r = fails(page, "return nb.vault.unwrapMnemonic('654321', a);", m)
    assert (r["code"], r["message"], r["name"]) == ("INVALID_PIN", "Invalid PIN", "VaultError")
    assert "654321" not in r["message"] and "abandon" not in r["message"]


@pytest.mark.parametrize("pin", ["12345", "1234567", "12345a", "", None])
def test_pin_format(page, pin):
    m = new_wallet(page, save=False)["materials"]
    r = fails(page, "return nb.vault.unwrapMnemonic(a.pin, a.m);", {"pin": pin, "m": m})
    assert (r["code"], r["message"]) == ("PIN_FORMAT", "PIN must be 6 digits.")


def _flip(b64text: str, index: int) -> str:
    import base64
    raw = bytearray(unb64(b64text))
    raw[index] ^= 1
    return base64.b64encode(bytes(raw)).decode()


def test_tampered_materials(page):
    m = new_wallet(page, save=False)["materials"]
    r = fails(page, "return nb.vault.unwrapMnemonic('123456', a);", {**m, "ciphertext": _flip(m["ciphertext"], 3)})
    assert r["code"] == "MATERIALS_CORRUPT"
    r = fails(page, "return nb.vault.unwrapMnemonic('123456', a);", {**m, "devSecret": _flip(m["devSecret"], 0)})
    assert r["code"] == "MATERIALS_CORRUPT"  # K is wrong, so the phrase's tag fails
    r = fails(page, "return nb.vault.unwrapMnemonic('123456', a);", {**m, "lwrapCt": _flip(m["lwrapCt"], 40)})
    assert r["code"] == "INVALID_PIN"  # indistinguishable from a wrong PIN by design
    for bad in ({**m, "kdfSaltB": m["kdfSaltB"].rstrip("=")}, {**m, "lwrapIv": "AAAA"}, {**m, "kdfParams": "{"}):
        r = fails(page, "return nb.vault.unwrapMnemonic('123456', a);", bad)
        assert (r["code"], r["message"]) == ("MATERIALS_INVALID", "Local materials are invalid")


def test_storage_keys_and_helpers(page):
    w = new_wallet(page, save=False)
    owner = w["address"]
    got = ok(page, """
        const before = nb.vault.hasMaterials(a.owner);
        nb.vault.saveMaterials(a.owner, a.m);   // checksummed owner in, lowercase keys out
        const keys = Object.keys(localStorage).sort();
        const loaded = nb.vault.loadMaterials(a.owner.toLowerCase());
        const has = nb.vault.hasMaterials(a.owner);
        localStorage.removeItem(a.owner.toLowerCase() + ':devSecret');
        const partial = [nb.vault.loadMaterials(a.owner), nb.vault.hasMaterials(a.owner)];
        nb.vault.saveMaterials(a.owner, a.m);
        nb.vault.saveDriveMeta(a.owner, {id: 'f1', sha256: 'ab', updatedAt: '2024-01-01T00:00:00Z'});
        const meta = nb.vault.loadDriveMeta(a.owner);
        nb.vault.clearMaterials(a.owner);
        return {before, keys, loaded, has, partial, meta, after: Object.keys(localStorage).length};""",
        {"owner": owner, "m": w["materials"]})
    lc = owner.lower()
    assert got["before"] is False and got["has"] is True
    assert got["keys"] == sorted(f"{lc}:{n}" for n in w["materials"])
    assert got["loaded"] == w["materials"]
    assert got["partial"] == [None, False]
    assert got["meta"] == {"id": "f1", "sha256": "ab", "updatedAt": "2024-01-01T00:00:00Z"}
    assert got["after"] == 0


def test_save_rejects_malformed_materials(page):
    m = new_wallet(page, save=False)["materials"]
    r = fails(page, "nb.vault.saveMaterials(a.o, a.m); return 1;",
              {"o": address(ABANDON), "m": {**m, "lwrapIv": "not base64"}})
    assert r["code"] == "MATERIALS_INVALID"
    assert ok(page, "return localStorage.length;") == 0


# ---------------------------------------------------------------- keyring

TX = {"chain_id": "31337", "to": "0x5FbDB2315678afecb367f032d93F642f64180aa3",
      "data": "0xa9059cbb000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266"
              "0000000000000000000000000000000000000000000000000de0b6b3a7640000",
      "value": "0", "nonce": "7", "gas_limit": "60000", "gas_price": "1875000000"}


def _eth_account_raw(tx: dict, key: bytes) -> str:
    signed = Account.sign_transaction({
        "chainId": int(tx["chain_id"]), "to": _checksum(tx["to"]),
        "data": tx["data"] or "0x", "value": int(tx["value"] or 0), "nonce": int(tx["nonce"]),
        "gas": int(tx["gas_limit"]), "gasPrice": int(tx["gas_price"]),
    }, key)
    return "0x" + signed.raw_transaction.hex().removeprefix("0x")


def _checksum(addr: str) -> str:
    from eth_utils import to_checksum_address
    return to_checksum_address(addr)


@pytest.mark.parametrize("tx", [
    TX,
    {**TX, "chain_id": "1", "data": "0x", "value": "1000000000000000000", "nonce": "0",
     "to": "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"},
    {**TX, "chain_id": 31337, "nonce": 7, "gas_limit": 60000, "gas_price": 1875000000, "value": 0},  # JSON numbers
    {**TX, "value": None, "data": ""},  # absent: 0 and 0x
])
def test_legacy_tx_signature_matches_eth_account(page, tx):
    owner = new_wallet(page)["address"]
    raw = ok(page, "return nb.keyring.signLegacyTx(a.owner, '123456', a.tx);", {"owner": owner, "tx": tx})
    assert raw == _eth_account_raw(tx, private_key(ABANDON))
    assert raw.startswith("0xf8") or raw.startswith("0xf9")  # RLP list: legacy type 0


@pytest.mark.parametrize("patch", [
    {"chain_id": ""}, {"chain_id": "0"}, {"nonce": "-1"}, {"gas_price": "1.5"}, {"gas_limit": None},
    {"to": "0x1234"}, {"data": "0xabc"}, {"value": "0x10"},
    {"nonce": -1}, {"gas_price": 1.5}, {"gas_limit": 2**53}, {"nonce": "07"}, {"gas_limit": True},
    {"value": "1" + "0" * 78}, {"chain_id": None}, {"gas_price": " 1"},
])
def test_legacy_tx_rejects_invalid_before_kdf(page, patch):
    r = fails(page, "return nb.keyring.signLegacyTx(a.owner, '000000', a.tx);",
              {"owner": address(ABANDON), "tx": {**TX, **patch}})
    assert (r["code"], r["message"]) == ("INVALID_TX", "invalid transaction")


def test_keyring_errors(page):
    owner = address(ABANDON)
    r = fails(page, "return nb.keyring.signLegacyTx(a.owner, '123456', a.tx);", {"owner": owner, "tx": TX})
    assert (r["code"], r["message"]) == ("RECOVERY_REQUIRED", "Re-onboard/recover required")
    r = fails(page, "return nb.keyring.signLegacyTx(a.owner, '123456', a.tx);", {"owner": "", "tx": TX})
    assert (r["code"], r["message"]) == ("NO_OWNER", "No active owner address")
    # Materials of another wallet stored under this owner: signer mismatch.
    other = new_wallet(page, words="zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong", save=False)
    ok(page, "nb.vault.saveMaterials(a.owner, a.m);", {"owner": owner, "m": other["materials"]})
    r = fails(page, "return nb.keyring.signLegacyTx(a.owner, '123456', a.tx);", {"owner": owner, "tx": TX})
    assert (r["code"], r["message"]) == ("SIGNER_MISMATCH", "Signer address does not match the active owner")
    r = fails(page, "return nb.keyring.signLegacyTx(a.owner, '111111', a.tx);", {"owner": owner, "tx": TX})
    assert r["code"] == "INVALID_PIN"


def test_with_unlocked_gives_owner_wallet(page):
    owner = new_wallet(page)["address"]
    got = ok(page, "return nb.keyring.withUnlocked(a, '123456', async (w) => "
                   "[w.address, w.mnemonic === undefined || w.mnemonic === null]);", owner)
    assert got == [owner, True]


PAY_TYPES = {
    "Pay": [
        {"name": "merchant", "type": "address"}, {"name": "token", "type": "address"},
        {"name": "from", "type": "address"}, {"name": "amount", "type": "uint256"},
        {"name": "paymentRef", "type": "bytes32"}, {"name": "deadline", "type": "uint48"},
    ],
}


def test_typed_data_signature_matches_eth_account(page):
    owner = new_wallet(page)["address"]
    domain = {"name": "NewblPayment2", "version": "1", "chainId": 31337,
              "verifyingContract": "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"}
    message = {"merchant": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
               "token": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "from": owner,
               "amount": "2500000", "paymentRef": "0x" + "ab" * 32, "deadline": 1900000000}
    sig = ok(page, "return nb.keyring.signTypedData(a.owner, '123456', a.domain, a.types, a.message);",
             {"owner": owner, "domain": domain, "types": PAY_TYPES, "message": message})
    py_message = {**message, "amount": int(message["amount"]), "paymentRef": bytes.fromhex("ab" * 32)}
    signable = encode_typed_data(domain_data=domain, message_types=PAY_TYPES, message_data=py_message)
    expected = Account.sign_message(signable, private_key(ABANDON)).signature.hex()
    assert sig == "0x" + expected.removeprefix("0x")
    # An EIP712Domain entry in types is accepted and ignored.
    types = {**PAY_TYPES, "EIP712Domain": [{"name": "name", "type": "string"}]}
    sig2 = ok(page, "return nb.keyring.signTypedData(a.owner, '123456', a.domain, a.types, a.message);",
              {"owner": owner, "domain": domain, "types": types, "message": message})
    assert sig2 == sig
    r = fails(page, "return nb.keyring.signTypedData(a.owner, '123456', a.domain, a.types, a.message);",
              {"owner": owner, "domain": domain, "types": PAY_TYPES, "message": {**message, "amount": "x"}})
    assert r["code"] == "INVALID_TYPED_DATA"
