"""Backup and restore steps for the e2e tests: back up from /settings, answer the restore
prompt, look at the Drive stand-in from Python, decrypt materials independently, and record
everything the browser sends to our own server (the secret-leak check)."""

from __future__ import annotations

import base64
import html
import json
import re
import time

import httpx
from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect

from wallet_app.dev import idp

DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.appdata"
# Google's stand-ins: they legitimately receive the Drive token (not our server's API).
STAND_IN_PATHS = ("/dev-drive", "/dev-idp")


def backup_name(owner: str) -> str:
    return f"newbl-backup-{owner.lower()}.bin"


def enter_pin_and_confirm(page: Page, dialog_id: str, pin: str) -> None:
    dialog = page.get_by_test_id(dialog_id)
    field = dialog.get_by_label("PIN")
    field.fill(pin)
    dialog.get_by_role("button", name="Confirm").click()


def answer_token_popup(page: Page, email: str, done, timeout: float = 90) -> None:
    """Wait until done() is true. The dev provider's token popup completes by itself when it
    remembers the account; if it shows its e-mail form instead, type the e-mail."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            from tests.e2e.conftest import save_screenshot
            save_screenshot(page, "FAILED-drive-step")
            raise AssertionError("the Drive step did not finish: " + page.locator("body").inner_text()[:800])
        for other in page.context.pages:
            if other is page or other.is_closed():
                continue
            try:
                box = other.locator("input[type=email], input[name=email]")
                if box.count() and box.first.is_visible():
                    box.first.fill(email)
                    other.keyboard.press("Enter")
            except Exception:  # noqa: BLE001 - the popup may close between the checks
                pass
        page.wait_for_timeout(200)  # polling interval of the condition above


def sign_in_closing_popup(page: Page, email: str, button: str = "Continue with Google") -> None:
    """flows.sign_in, tolerating the popup closing during the Enter press (it closes as soon as
    it has answered, which can race the key-up)."""
    with page.expect_popup() as popup_info:
        page.get_by_role("button", name=button).click()
    popup = popup_info.value
    popup.locator("input[type=email], input[name=email]").first.fill(email)
    try:
        popup.keyboard.press("Enter")
    except PlaywrightError:
        if not popup.is_closed():
            raise


def backup_from_settings(page: Page, email: str, pin: str) -> None:
    page.goto("/settings")
    page.get_by_role("button", name="Back up").click()
    enter_pin_and_confirm(page, "backup-dialog", pin)
    done = page.get_by_role("alertdialog").filter(has_text="Backup completed.")
    answer_token_popup(page, email, lambda: done.count() > 0 or _dialog_error(page, "backup-dialog"))
    assert not _dialog_error(page, "backup-dialog"), _dialog_error(page, "backup-dialog")
    done.get_by_role("button", name="OK").click()
    expect(done).to_have_count(0)


def _dialog_error(page: Page, dialog_id: str) -> str:
    alert = page.get_by_test_id(dialog_id).get_by_role("alert")
    return alert.inner_text() if alert.count() else ""


def restore_attempt(page: Page, email: str, pin: str, until) -> None:
    """Type the PIN in the restore prompt and wait for `until()` (an outcome)."""
    enter_pin_and_confirm(page, "restore-dialog", pin)
    answer_token_popup(page, email, until)


def storage(page: Page) -> dict:
    return page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")


# --- the Drive stand-in, seen from Python with its own token ------------------------------


class DriveApi:
    def __init__(self, origin: str, email: str):
        self.http = httpx.Client(base_url=origin, timeout=10)
        resp = self.http.get("/dev-idp/authorize", params={
            "client_id": idp.DEV_CLIENT_ID, "response_type": "token", "scope": DRIVE_SCOPE,
            "redirect_uri": "postmessage", "login_hint": email,
        })
        meta = re.search(r'<meta name="nb-idp-result" content="([^"]*)">', resp.text)
        assert meta, resp.text[:500]
        self.auth = {"Authorization": "Bearer " + json.loads(html.unescape(meta.group(1)))["access_token"]}

    def file_id(self, name: str) -> str | None:
        resp = self.http.get("/dev-drive/drive/v3/files", headers=self.auth, params={
            "spaces": "appDataFolder", "q": f"name='{name}'", "fields": "files(id,name)"})
        assert resp.status_code == 200, resp.text
        files = resp.json()["files"]
        return files[0]["id"] if files else None

    def download(self, file_id: str) -> bytes:
        resp = self.http.get(f"/dev-drive/drive/v3/files/{file_id}", params={"alt": "media"}, headers=self.auth)
        assert resp.status_code == 200, resp.text
        return resp.content

    def replace(self, file_id: str, data: bytes) -> None:
        resp = self.http.patch(f"/dev-drive/upload/drive/v3/files/{file_id}", params={"uploadType": "media"},
                               content=data, headers={**self.auth, "Content-Type": "application/octet-stream"})
        assert resp.status_code == 200, resp.text


# --- independent crypto (argon2-cffi + cryptography, design.md section 4) -----------------


def argon2(pin: str, salt: bytes, t: int = 3, m: int = 262144, p: int = 1) -> bytes:
    return hash_secret_raw(pin.encode(), salt, time_cost=t, memory_cost=m, parallelism=p, hash_len=32,
                           type=Type.ID)


def open_materials(materials: dict, pin: str) -> dict:
    """-> {phrase, k, dev_secret, pin_key} from the local materials."""
    b = {k: base64.b64decode(v) for k, v in materials.items() if k != "kdfParams"}
    params = json.loads(materials["kdfParams"])
    pin_key = argon2(pin, b["kdfSaltB"], params["t"], params["m"], params["p"])
    k = bytes(x ^ y for x, y in zip(AESGCM(pin_key).decrypt(b["lwrapIv"], b["lwrapCt"], None), b["devSecret"]))
    phrase = AESGCM(k).decrypt(b["ciphertextIv"], b["ciphertext"], None).decode()
    return {"phrase": phrase, "k": k, "dev_secret": b["devSecret"], "pin_key": pin_key}


def backup_key(file_bytes: bytes, pin: str) -> bytes:
    """The Argon2id output that encrypts the backup file."""
    header = json.loads(file_bytes[: file_bytes.index(b"\n")])
    kdf = header["kdf"]
    return argon2(pin, base64.b64decode(kdf["salt_rec"]), kdf["t"], kdf["m"], kdf["p"])


# --- the secret-leak recorder ------------------------------------------------------------


class Traffic:
    """Every request body to our own server (not the Google stand-ins), every websocket frame,
    and the Authorization headers sent to the Drive stand-in (the Drive tokens)."""

    def __init__(self):
        self.bodies: list[str] = []
        self.frames: list[str] = []
        self.drive_tokens: set[str] = set()
        self.urls: list[str] = []

    def attach(self, page: Page) -> None:
        page.on("request", self._request)
        page.on("websocket", self._websocket)

    def _request(self, request) -> None:
        path = httpx.URL(request.url).path
        if path.startswith(STAND_IN_PATHS):
            auth = request.headers.get("authorization", "")
            if auth.startswith("Bearer "):
                self.drive_tokens.add(auth[len("Bearer "):])
            return
        self.urls.append(request.url)
        body = request.post_data_buffer
        if body:
            self.bodies.append(body.decode("utf-8", "replace"))

    def _websocket(self, ws) -> None:
        def keep(payload):
            self.frames.append(payload if isinstance(payload, str) else payload.decode("utf-8", "replace"))
        ws.on("framesent", keep)
        ws.on("framereceived", keep)


def secret_forms(pin: str, phrase: str, binaries: list[bytes], tokens: set[str]) -> list[tuple[str, re.Pattern]]:
    """(label, pattern) for each secret in the encodings it could travel in."""
    out = [("PIN", re.compile(rf"(?<![0-9]){re.escape(pin)}(?![0-9])"))]
    words = phrase.split(" ")
    for i in range(len(words) - 2):
        out.append(("phrase", re.compile(r"\b" + r"\W+".join(map(re.escape, words[i:i + 3])) + r"\b")))
    for raw in binaries:
        for text in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("="), raw.hex()):
            out.append(("binary secret", re.compile(re.escape(text.rstrip("=")), re.IGNORECASE)))
    for token in tokens:
        out.append(("Drive token", re.compile(re.escape(token))))
    return out


def find_leaks(texts: dict[str, list[str]], forms) -> list[str]:
    return [f"{label} in {where}" for where, items in texts.items() for item in items
            for label, pattern in forms if pattern.search(item)]
