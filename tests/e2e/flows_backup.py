"""Backup and restore steps for the e2e tests: back up from /settings, answer the restore
prompt, read localStorage. The Drive stand-in from Python: tests/e2e/drive_api.py; the files
decrypted independently: tests/e2e/vault_py.py; the secret-leak recorder: tests/e2e/leaks.py."""

from __future__ import annotations

import base64
import json
import os

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from playwright.sync_api import Page, expect

from tests.e2e.drive_api import DriveApi, backup_name
from tests.e2e.flows import answer_popups_until, pin_field

# design.md section 4's Argon2id parameters: the only ones a restore accepts (issue 12 item 5).
SPEC_KDF = {"t": 3, "m": 262144, "p": 1}


def enter_pin_and_confirm(page: Page, dialog_id: str, pin: str, label: str = "PIN", confirm: str = "Confirm") -> None:
    dialog = page.get_by_test_id(dialog_id)
    pin_field(dialog, label).fill(pin)
    dialog.get_by_role("button", name=confirm, exact=True).click()


def backup_from_settings(page: Page, email: str, pin: str) -> None:
    page.goto("/settings")
    page.get_by_role("button", name="Back up").click()
    enter_pin_and_confirm(page, "backup-dialog", pin)
    done = page.get_by_role("alertdialog").filter(has_text="Backup completed.")
    answer_popups_until(page, email, lambda: done.count() > 0 or _dialog_error(page, "backup-dialog"))
    assert not _dialog_error(page, "backup-dialog"), _dialog_error(page, "backup-dialog")
    done.get_by_role("button", name="OK").click()
    expect(done).to_have_count(0)


def _dialog_error(page: Page, dialog_id: str) -> str:
    alert = page.get_by_test_id(dialog_id).get_by_role("alert")
    return alert.inner_text() if alert.count() else ""


def restore_attempt(page: Page, email: str, pin: str, until, label: str = "PIN", confirm: str = "Confirm") -> None:
    """Type the PIN in the restore prompt and wait for `until()` (an outcome)."""
    enter_pin_and_confirm(page, "restore-dialog", pin, label, confirm)
    answer_popups_until(page, email, until)


def backup_file(owner: str, pin: str, bundle: dict, kdf: dict | None = None) -> bytes:
    """A backup file in the format of design.md section 4 holding `bundle` (any content), its key
    Argon2id(PIN) with SPEC_KDF (or `kdf` in the header only, for files the app must refuse
    before any Argon2 work): the app's checks after decryption."""
    salt, iv = os.urandom(16), os.urandom(12)
    header = {"v": 1, "alg": "AES-GCM",
              "kdf": {"kind": "Argon2id", "salt_rec": base64.b64encode(salt).decode(), **(kdf or SPEC_KDF)},
              "iv": base64.b64encode(iv).decode(), "owner": owner.lower(), "derivation": "m/44'/60'/0'/0/0"}
    key = hash_secret_raw(pin.encode(), salt, time_cost=SPEC_KDF["t"], memory_cost=SPEC_KDF["m"],
                          parallelism=SPEC_KDF["p"], hash_len=32, type=Type.ID)
    body = AESGCM(key).encrypt(iv, json.dumps(bundle).encode(), None)
    return json.dumps(header).encode() + b"\n" + body


def put_backup_file(drive: DriveApi, owner: str, data: bytes) -> None:
    """Write `data` as the owner's backup file on the Drive stand-in (create it, or replace it)."""
    name = backup_name(owner)
    file_id = drive.file_id(name)
    if file_id:
        drive.replace(file_id, data)
        return
    boundary = "nb-test-boundary"
    metadata = json.dumps({"name": name, "parents": ["appDataFolder"]}).encode()
    body = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".encode() + metadata
            + f"\r\n--{boundary}\r\nContent-Type: application/octet-stream\r\n\r\n".encode() + data
            + f"\r\n--{boundary}--\r\n".encode())
    resp = drive.http.post("/dev-drive/upload/drive/v3/files", params={"uploadType": "multipart"}, content=body,
                           headers={**drive.auth, "Content-Type": f"multipart/related; boundary={boundary}"})
    assert resp.status_code == 200, resp.text


def storage(page: Page) -> dict:
    return page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
