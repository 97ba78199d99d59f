"""The Drive stand-in (/dev-drive) seen from Python with its own token for a Google account,
as the real Drive would be: shared by the e2e backup tests and tests/js/test_drive_backup.py."""

from __future__ import annotations

import html
import json
import re

import httpx

from wallet_app.dev import idp

DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.appdata"


def backup_name(owner: str) -> str:
    """The backup file's name in appDataFolder (design.md section 4)."""
    return f"newbl-backup-{owner.lower()}.bin"


class DriveApi:
    def __init__(self, origin: str, email: str):
        self.http = httpx.Client(base_url=origin, timeout=10)
        resp = self.http.get("/dev-idp/authorize", params={
            "client_id": idp.DEV_CLIENT_ID, "response_type": "token", "scope": DRIVE_SCOPE,
            "redirect_uri": "postmessage", "login_hint": email,
        })
        meta = re.search(r'<meta name="nb-idp-result" content="([^"]*)">', resp.text)
        assert meta, resp.text[:500]
        self.token = json.loads(html.unescape(meta.group(1)))["access_token"]
        self.auth = {"Authorization": f"Bearer {self.token}"}

    def files(self, name: str) -> list[dict]:
        resp = self.http.get("/dev-drive/drive/v3/files", headers=self.auth, params={
            "spaces": "appDataFolder", "q": f"name='{name}'", "fields": "files(id,name,modifiedTime,size,md5Checksum)"})
        assert resp.status_code == 200, resp.text
        return resp.json()["files"]

    def file_id(self, name: str) -> str | None:
        files = self.files(name)
        return files[0]["id"] if files else None

    def download(self, file_id: str) -> bytes:
        resp = self.http.get(f"/dev-drive/drive/v3/files/{file_id}", params={"alt": "media"}, headers=self.auth)
        assert resp.status_code == 200, resp.text
        return resp.content

    def replace(self, file_id: str, data: bytes) -> None:
        resp = self.http.patch(f"/dev-drive/upload/drive/v3/files/{file_id}", params={"uploadType": "media"},
                               content=data, headers={**self.auth, "Content-Type": "application/octet-stream"})
        assert resp.status_code == 200, resp.text
