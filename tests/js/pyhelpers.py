"""Independent Python implementation of the formats of design.md section 4.

Uses argon2-cffi, cryptography and eth-account only (never the app's code), so
that the browser's output is checked against a second implementation.
"""

from __future__ import annotations

import base64
import json

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from eth_account import Account

# The backup file reader is shared with the e2e tests (browser_harness puts the repo on sys.path).
from tests.e2e.vault_py import open_backup, split_backup  # noqa: F401  (split_backup: re-exported)

Account.enable_unaudited_hdwallet_features()

SPEC = {"t": 3, "m": 262144, "p": 1}
PATH = "m/44'/60'/0'/0/0"
SMALL = {"t": 1, "m": 1024, "p": 1}  # for tests that are not about the KDF cost


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def argon2id(password: bytes, salt: bytes, params: dict) -> bytes:
    return hash_secret_raw(
        password, salt, time_cost=params["t"], memory_cost=params["m"],
        parallelism=params["p"], hash_len=32, type=Type.ID,
    )


def xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def address(words: str) -> str:
    return Account.from_mnemonic(words, account_path=PATH).address


def private_key(words: str) -> bytes:
    return bytes(Account.from_mnemonic(words, account_path=PATH).key)


def unwrap(pin: str, m: dict) -> str:
    """Materials (localStorage strings) -> words; raises InvalidTag on a wrong PIN."""
    params = json.loads(m["kdfParams"]) if isinstance(m["kdfParams"], str) else m["kdfParams"]
    pin_key = argon2id(pin.encode(), unb64(m["kdfSaltB"]), params)
    wrapped = AESGCM(pin_key).decrypt(unb64(m["lwrapIv"]), unb64(m["lwrapCt"]), None)
    k = xor(wrapped, unb64(m["devSecret"]))
    return AESGCM(k).decrypt(unb64(m["ciphertextIv"]), unb64(m["ciphertext"]), None).decode()


def wrap(pin: str, words: str, params: dict, rand=None) -> dict:
    import os

    rand = rand or os.urandom
    k, dev, salt, iv1, iv2 = rand(32), rand(32), rand(16), rand(12), rand(12)
    pin_key = argon2id(pin.encode(), salt, params)
    return {
        "lwrapIv": b64(iv1),
        "lwrapCt": b64(AESGCM(pin_key).encrypt(iv1, xor(k, dev), None)),
        "kdfSaltB": b64(salt),
        "kdfParams": json.dumps(params, separators=(",", ":")),
        "ciphertextIv": b64(iv2),
        "ciphertext": b64(AESGCM(k).encrypt(iv2, words.encode(), None)),
        "devSecret": b64(dev),
    }


def decrypt_backup(pin: str, data: bytes) -> dict:
    return open_backup(data, pin)


def encrypt_backup(pin: str, owner: str, bundle: dict, params: dict, header_patch=None) -> bytes:
    import os

    salt, iv = os.urandom(16), os.urandom(12)
    header = {
        "v": 1, "alg": "AES-GCM",
        "kdf": {"kind": "Argon2id", "salt_rec": b64(salt), **params},
        "iv": b64(iv), "owner": owner.lower(), "derivation": PATH,
    }
    header.update(header_patch or {})
    key = argon2id(pin.encode(), salt, params)
    body = AESGCM(key).encrypt(iv, json.dumps(bundle).encode(), None)
    return json.dumps(header, separators=(",", ":")).encode() + b"\n" + body
