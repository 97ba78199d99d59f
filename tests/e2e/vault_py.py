"""design.md section 4 read back with argon2-cffi, cryptography and eth-account only (never the
app's code), so the tests prove the browser wrote what the format says."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from eth_account import Account

Account.enable_unaudited_hdwallet_features()
DERIVATION_PATH = "m/44'/60'/0'/0/0"


@dataclass
class Unwrapped:
    pin_key: bytes  # Argon2id(PIN, kdfSaltB)
    wrapped: bytes  # K XOR devSecret
    k: bytes
    dev_secret: bytes
    words: str
    private_key: bytes

    @property
    def address(self) -> str:
        return Account.from_key(self.private_key).address.lower()


def unwrap(materials: dict, pin: str) -> Unwrapped:
    """The local materials opened with the PIN; a wrong PIN raises cryptography's InvalidTag."""
    b = {k: base64.b64decode(v) for k, v in materials.items() if k != "kdfParams"}
    p = json.loads(materials["kdfParams"])
    pin_key = hash_secret_raw(pin.encode(), b["kdfSaltB"], time_cost=p["t"], memory_cost=p["m"],
                              parallelism=p["p"], hash_len=32, type=Type.ID)
    wrapped = AESGCM(pin_key).decrypt(b["lwrapIv"], b["lwrapCt"], None)
    k = bytes(x ^ y for x, y in zip(wrapped, b["devSecret"], strict=False))
    words = AESGCM(k).decrypt(b["ciphertextIv"], b["ciphertext"], None).decode()
    key = bytes(Account.from_mnemonic(words, account_path=DERIVATION_PATH).key)
    return Unwrapped(pin_key, wrapped, k, b["devSecret"], words, key)


def recover_phrase(materials: dict, pin: str) -> str:
    return unwrap(materials, pin).words


# --- the Drive backup file: one JSON header line, "\n", then AES-GCM(body) -----------------


def split_backup(data: bytes) -> tuple[dict, bytes]:
    line, _, body = data.partition(b"\n")
    return json.loads(line), body


def backup_key(data: bytes, pin: str) -> bytes:
    """Argon2id(PIN, salt_rec) with the header's parameters: the key of the file's body."""
    kdf = split_backup(data)[0]["kdf"]
    return hash_secret_raw(pin.encode(), base64.b64decode(kdf["salt_rec"], validate=True), time_cost=kdf["t"],
                           memory_cost=kdf["m"], parallelism=kdf["p"], hash_len=32, type=Type.ID)


def open_backup(data: bytes, pin: str) -> dict:
    """The file's bundle; a wrong PIN or a changed body raises cryptography's InvalidTag."""
    header, body = split_backup(data)
    plain = AESGCM(backup_key(data, pin)).decrypt(base64.b64decode(header["iv"], validate=True), body, None)
    return json.loads(plain)
