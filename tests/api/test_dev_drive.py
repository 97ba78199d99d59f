"""The Drive v3 stand-in under /dev-drive through the real ASGI app, plus its pure parsers."""

import hashlib
import html
import json
import os
import re
import subprocess
import sys
import time

import pytest

from wallet_app.core.config import REPO_ROOT
from wallet_app.dev import drive, idp

SCOPE = drive.DRIVE_SCOPE
FILES = "/dev-drive/drive/v3/files"
UPLOAD = "/dev-drive/upload/drive/v3/files"
FIELDS = "files(id,name,modifiedTime,size,md5Checksum)"


def access_token(client, email: str, scope: str = SCOPE) -> str:
    """A token from the dev provider's authorize endpoint (token flow, login_hint skips the form)."""
    resp = client.get("/dev-idp/authorize", params={
        "client_id": idp.DEV_CLIENT_ID, "response_type": "token", "scope": scope,
        "redirect_uri": "postmessage", "login_hint": email,
    })
    assert resp.status_code == 200, resp.text
    meta = re.search(r'<meta name="nb-idp-result" content="([^"]*)">', resp.text)
    return json.loads(html.unescape(meta.group(1)))["access_token"]


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def multipart(metadata: dict, content: bytes, boundary: str = "xyzBOUNDARY") -> tuple[bytes, dict]:
    body = (
        f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".encode()
        + json.dumps(metadata).encode()
        + f"\r\n--{boundary}\r\nContent-Type: application/octet-stream\r\n\r\n".encode()
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, {"Content-Type": f"multipart/related; boundary={boundary}"}


def create(client, token: str, name: str, content: bytes, fields: str = "id,name,size,md5Checksum,modifiedTime"):
    body, headers = multipart({"name": name, "parents": ["appDataFolder"]}, content)
    return client.post(UPLOAD, params={"uploadType": "multipart", "fields": fields}, content=body,
                       headers={**headers, **auth(token)})


def list_by_name(client, token: str, name: str, fields: str = FIELDS):
    return client.get(FILES, params={"spaces": "appDataFolder", "q": f"name='{name}'", "fields": fields},
                      headers=auth(token))


@pytest.fixture
def drive_dir(settings_env, tmp_path, monkeypatch):
    from wallet_app.core.config import get_settings

    monkeypatch.setenv("DEV_DRIVE_DIR", str(tmp_path / "dev-drive"))
    get_settings.cache_clear()
    return tmp_path / "dev-drive"


@pytest.fixture
def tok(client, drive_dir):
    return access_token(client, "alice@example.com")


# Binary content with CR/LF, NUL and bytes that look like a boundary start.
CONTENT = b'{"v":1}\n' + bytes(range(256)) + b"\r\n--xyz\r\n\x00end"


def test_create_list_download_update(client, tok, drive_dir):
    resp = create(client, tok, "newbl-backup-0xabc.bin", CONTENT)
    assert resp.status_code == 200, resp.text
    created = resp.json()
    assert set(created) == {"id", "name", "size", "md5Checksum", "modifiedTime"}
    assert created["name"] == "newbl-backup-0xabc.bin"
    assert created["size"] == str(len(CONTENT))
    assert created["md5Checksum"] == hashlib.md5(CONTENT).hexdigest()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", created["modifiedTime"])
    create(client, tok, "other.bin", b"other")

    listed = list_by_name(client, tok, "newbl-backup-0xabc.bin")
    assert listed.status_code == 200
    assert listed.json() == {"files": [created]}  # only the fields asked for, only that name

    got = client.get(f"{FILES}/{created['id']}", params={"alt": "media"}, headers=auth(tok))
    assert got.status_code == 200 and got.content == CONTENT

    # PATCH multipart: new content, same id, metadata follows.
    body, headers = multipart({"name": "newbl-backup-0xabc.bin"}, b"second")
    upd = client.patch(f"{UPLOAD}/{created['id']}", params={"uploadType": "multipart", "fields": "id,size,md5Checksum"},
                       content=body, headers={**headers, **auth(tok)})
    assert upd.status_code == 200, upd.text
    assert upd.json() == {"id": created["id"], "size": "6", "md5Checksum": hashlib.md5(b"second").hexdigest()}
    assert client.get(f"{FILES}/{created['id']}", params={"alt": "media"}, headers=auth(tok)).content == b"second"

    # PATCH media: raw body.
    upd = client.patch(f"{UPLOAD}/{created['id']}", params={"uploadType": "media"}, content=b"third",
                       headers={"Content-Type": "application/octet-stream", **auth(tok)})
    assert upd.status_code == 200 and upd.json()["id"] == created["id"]
    assert client.get(f"{FILES}/{created['id']}", params={"alt": "media"}, headers=auth(tok)).content == b"third"
    assert len(list_by_name(client, tok, "newbl-backup-0xabc.bin").json()["files"]) == 1

    # Metadata by id with default fields, and on disk: content + metadata, no leftover temp files.
    meta = client.get(f"{FILES}/{created['id']}", headers=auth(tok)).json()
    assert meta == {"kind": "drive#file", "id": created["id"], "name": "newbl-backup-0xabc.bin",
                    "mimeType": "application/octet-stream"}
    names = sorted(p.name for p in drive_dir.rglob("*") if p.is_file())
    assert len(names) == 5 and not [n for n in names if n.endswith(".tmp")]
    (lock,) = drive_dir.glob("*.lock")  # the subject's lock file, next to its folder
    assert (drive_dir / lock.stem).is_dir() and lock.stat().st_size == 0


def test_list_default_fields_and_no_match(client, tok):
    create(client, tok, "a.bin", b"a")
    resp = client.get(FILES, params={"spaces": "appDataFolder"}, headers=auth(tok))
    body = resp.json()
    assert body["kind"] == "drive#fileList" and body["incompleteSearch"] is False
    assert [set(f) for f in body["files"]] == [{"kind", "id", "name", "mimeType"}]
    assert list_by_name(client, tok, "missing.bin").json() == {"files": []}
    # A quote in the name is escaped as \' in q.
    create(client, tok, "it's.bin", b"q")
    resp = client.get(FILES, params={"spaces": "appDataFolder", "q": r"name = 'it\'s.bin' and trashed = false",
                                     "fields": "files(name)"}, headers=auth(tok))
    assert resp.json() == {"files": [{"name": "it's.bin"}]}


def test_users_see_only_their_own_files(client, tok):
    bob = access_token(client, "bob@example.com")
    mine = create(client, tok, "newbl-backup-0xabc.bin", b"alice's").json()
    assert list_by_name(client, bob, "newbl-backup-0xabc.bin").json() == {"files": []}
    for resp in (
        client.get(f"{FILES}/{mine['id']}", params={"alt": "media"}, headers=auth(bob)),
        client.get(f"{FILES}/{mine['id']}", headers=auth(bob)),
        client.patch(f"{UPLOAD}/{mine['id']}", params={"uploadType": "media"}, content=b"x", headers=auth(bob)),
    ):
        assert resp.status_code == 404
        err = resp.json()["error"]
        assert err["code"] == 404 and err["message"] == f"File not found: {mine['id']}."
        assert err["errors"][0]["reason"] == "notFound"
    # Alice's file is unchanged, and a second token of hers sees it (same subject).
    again = access_token(client, "alice@example.com")
    assert client.get(f"{FILES}/{mine['id']}", params={"alt": "media"}, headers=auth(again)).content == b"alice's"


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer not-a-token"},
    {"Authorization": "Basic dXNlcjpwdw=="},
])
def test_missing_or_bad_token_is_401_in_google_shape(client, drive_dir, headers):
    for resp in (
        client.get(FILES, params={"spaces": "appDataFolder"}, headers=headers),
        client.get(f"{FILES}/devAAAAAAAAAAAAAAAAAAAAAAAA", params={"alt": "media"}, headers=headers),
        client.post(UPLOAD, params={"uploadType": "multipart"}, content=b"", headers=headers),
    ):
        assert resp.status_code == 401
        err = resp.json()["error"]
        assert err["code"] == 401 and err["status"] == "UNAUTHENTICATED" and err["message"]
        assert resp.headers["www-authenticate"].startswith("Bearer")


def test_token_without_drive_scope_is_refused(client, drive_dir):
    openid_only = access_token(client, "alice@example.com", scope="openid email")
    assert client.get(FILES, params={"spaces": "appDataFolder"}, headers=auth(openid_only)).status_code == 401


def test_revoked_token_is_refused(client, drive_dir):
    """Issue 12 item 5: like https://oauth2.googleapis.com/revoke, a revoked token no longer
    opens Drive; other tokens of the same account keep working."""
    tok, other = access_token(client, "alice@example.com"), access_token(client, "alice@example.com")
    assert create(client, tok, "newbl-backup-0xabc.bin", CONTENT).status_code == 200
    assert client.post("/dev-idp/revoke", data={"token": tok}).json() == {}
    for resp in (
        list_by_name(client, tok, "newbl-backup-0xabc.bin"),
        create(client, tok, "newbl-backup-0xabc.bin", CONTENT),
    ):
        assert resp.status_code == 401 and resp.json()["error"]["status"] == "UNAUTHENTICATED"
    assert len(list_by_name(client, other, "newbl-backup-0xabc.bin").json()["files"]) == 1
    # Revoking again, or a token never issued: Google's invalid_token answer.
    for token in (tok, "dev-at-made-up"):
        again = client.post("/dev-idp/revoke", data={"token": token})
        assert again.status_code == 400 and again.json()["error"] == "invalid_token"
    # The token may also come in the query string, as Google accepts.
    assert client.post("/dev-idp/revoke", params={"token": other}).status_code == 200
    assert list_by_name(client, other, "newbl-backup-0xabc.bin").status_code == 401


ABOUT = "/dev-drive/drive/v3/about"


def test_about_names_the_token_s_account_as_google_does(client, drive_dir):
    """about.get: the account of the token (the browser checks it is the signed-in one); like
    Google, `fields` is required and selects the answer."""
    alice, bob = access_token(client, "Alice@Example.com"), access_token(client, "bob@example.com")
    for token, email in ((alice, "alice@example.com"), (bob, "bob@example.com")):
        resp = client.get(ABOUT, params={"fields": "user(emailAddress)"}, headers=auth(token))
        assert resp.status_code == 200 and resp.json() == {"user": {"emailAddress": email}}
    whole = client.get(ABOUT, params={"fields": "*"}, headers=auth(alice)).json()
    assert whole["kind"] == "drive#about" and whole["user"]["me"] is True
    assert whole["user"]["kind"] == "drive#user" and whole["user"]["emailAddress"] == "alice@example.com"
    no_fields = client.get(ABOUT, headers=auth(alice))
    assert no_fields.status_code == 400 and no_fields.json()["error"]["errors"][0]["location"] == "fields"
    for headers in ({}, auth("dev-at-made-up"), auth(access_token(client, "alice@example.com", scope="openid email"))):
        refused = client.get(ABOUT, params={"fields": "user(emailAddress)"}, headers=headers)
        assert refused.status_code == 401 and refused.json()["error"]["status"] == "UNAUTHENTICATED"


def test_bad_requests(client, tok):
    missing = client.get(f"{FILES}/devDoesNotExist0000000000000", params={"alt": "media"}, headers=auth(tok))
    assert missing.status_code == 404 and missing.json()["error"]["code"] == 404
    traversal = client.get(f"{FILES}/..%2F..%2Fetc", params={"alt": "media"}, headers=auth(tok))
    assert traversal.status_code == 404
    # Only the app-data folder exists for this scope.
    body, headers = multipart({"name": "x.bin"}, b"x")
    resp = client.post(UPLOAD, params={"uploadType": "multipart"}, content=body, headers={**headers, **auth(tok)})
    assert resp.status_code == 403 and resp.json()["error"]["errors"][0]["reason"] == "insufficientScopes"
    assert client.get(FILES, params={"spaces": "drive"}, headers=auth(tok)).status_code == 403
    # Malformed multipart, unknown uploadType, unsupported query, parents on update.
    resp = client.post(UPLOAD, params={"uploadType": "multipart"}, content=b"junk",
                       headers={"Content-Type": "multipart/related; boundary=b", **auth(tok)})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == 400
    resp = client.post(UPLOAD, params={"uploadType": "resumable"}, content=b"", headers=auth(tok))
    assert resp.status_code == 400
    resp = client.get(FILES, params={"spaces": "appDataFolder", "q": "mimeType contains 'x'"}, headers=auth(tok))
    assert resp.status_code == 400
    fid = create(client, tok, "p.bin", b"p").json()["id"]
    body, headers = multipart({"parents": ["root"]}, b"x")
    resp = client.patch(f"{UPLOAD}/{fid}", params={"uploadType": "multipart"}, content=body,
                        headers={**headers, **auth(tok)})
    assert resp.status_code == 403 and resp.json()["error"]["errors"][0]["reason"] == "fieldNotWritable"
    too_big = client.patch(f"{UPLOAD}/{fid}", params={"uploadType": "media"}, content=b"x" * (drive.MAX_UPLOAD + 1),
                           headers=auth(tok))
    assert too_big.status_code == 413
    assert client.get(f"{FILES}/{fid}", params={"alt": "media"}, headers=auth(tok)).content == b"p"


# --- pure parsers -------------------------------------------------------------------------


@pytest.mark.parametrize("q,expected", [
    (None, {}),
    ("", {}),
    ("name='a.bin'", {"name": "a.bin"}),
    ("name = 'a.bin' and trashed = false", {"name": "a.bin", "trashed": False}),
    (r"name='it\'s \\ x'", {"name": "it's \\ x"}),
    ("'appDataFolder' in parents and name='b'", {"name": "b"}),
])
def test_parse_query(q, expected):
    assert drive.parse_query(q) == expected


@pytest.mark.parametrize("q", ["name='a", "name='a' or name='b'", "fullText contains 'x'", "name='a' and"])
def test_parse_query_rejects(q):
    with pytest.raises(ValueError):
        drive.parse_query(q)


SAMPLE = {"kind": "drive#fileList", "nextPageToken": "t",
          "files": [{"id": "1", "name": "a", "size": "3", "md5Checksum": "m"}, {"id": "2", "name": "b"}]}


@pytest.mark.parametrize("fields,expected", [
    ("files(id,name)", {"files": [{"id": "1", "name": "a"}, {"id": "2", "name": "b"}]}),
    ("nextPageToken, files(id)", {"nextPageToken": "t", "files": [{"id": "1"}, {"id": "2"}]}),
    ("files/size", {"files": [{"size": "3"}, {}]}),
    ("kind", {"kind": "drive#fileList"}),
    ("*", SAMPLE),
    ("files", {"files": SAMPLE["files"]}),
    ("missing", {}),
])
def test_select_fields(fields, expected):
    assert drive.select_fields(SAMPLE, drive.parse_fields(fields)) == expected


@pytest.mark.parametrize("fields", ["files(id", "files)id(", "a b", "files(id,,"])
def test_parse_fields_rejects(fields):
    with pytest.raises(ValueError):
        drive.parse_fields(fields)


def test_parse_multipart_related():
    body, headers = multipart({"name": "n", "parents": ["appDataFolder"]}, CONTENT, boundary="b0")
    meta, media, ctype = drive.parse_multipart_related(headers["Content-Type"], body)
    assert meta == {"name": "n", "parents": ["appDataFolder"]} and media == CONTENT
    assert ctype == "application/octet-stream"
    # Quoted boundary, a preamble and an empty content part.
    body, _ = multipart({"name": "e"}, b"", boundary="q q")
    meta, media, _ = drive.parse_multipart_related('multipart/related; boundary="q q"', b"preamble\r\n" + body)
    assert meta == {"name": "e"} and media == b""


@pytest.mark.parametrize("ctype,body", [
    ("multipart/form-data; boundary=b", b"--b\r\n\r\n{}\r\n--b--"),
    ("multipart/related", b"--b\r\n\r\n{}\r\n--b--"),
    ("multipart/related; boundary=b", b"no boundary here"),
    ("multipart/related; boundary=b", b"--b\r\nContent-Type: application/json\r\n\r\n{}\r\n--b--"),  # one part
    ("multipart/related; boundary=b",
     b"--b\r\nContent-Type: text/plain\r\n\r\n{}\r\n--b\r\n\r\nx\r\n--b--"),  # metadata not JSON type
    ("multipart/related; boundary=b",
     b"--b\r\nContent-Type: application/json\r\n\r\n[1]\r\n--b\r\n\r\nx\r\n--b--"),  # not an object
    ("multipart/related; boundary=b",
     b"--b\r\nContent-Type: application/json\r\n\r\n{}\r\n--b\r\n\r\nx"),  # unterminated
])
def test_parse_multipart_related_rejects(ctype, body):
    with pytest.raises(ValueError):
        drive.parse_multipart_related(ctype, body)


UPDATES = 40


def test_two_worker_processes_updating_one_file_lose_nothing(client, drive_dir, tmp_path):
    """Several workers: updates of one file from two processes at once are never lost (each is a
    read-modify-write of its metadata under the subject's file lock), and the content matches its
    metadata. Each process runs its own app (tests/api/drive_worker.py)."""
    email = "both@example.com"
    tok = access_token(client, email)
    file_id = create(client, tok, "newbl-backup.bin", b"first").json()["id"]
    worker = [sys.executable, str(REPO_ROOT / "tests" / "api" / "drive_worker.py"), email, file_id]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}  # the test's settings, and the repo importable
    procs = [subprocess.Popen([*worker, name, str(UPDATES), str(tmp_path)], cwd=REPO_ROOT, env=env)
             for name in ("a", "b")]
    try:
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"ready-{name}").exists() for name in ("a", "b")):  # both apps up
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
            time.sleep(0.05)  # poll interval
        (tmp_path / "go").touch()  # then both update at once
        assert [p.wait(120) for p in procs] == [0, 0]
    finally:
        for p in procs:
            p.kill()
    meta = client.get(f"{FILES}/{file_id}", params={"fields": "version,md5Checksum,size"}, headers=auth(tok)).json()
    assert meta["version"] == str(1 + 2 * UPDATES)  # every update counted: none overwrote another's
    content = client.get(f"{FILES}/{file_id}", params={"alt": "media"}, headers=auth(tok)).content
    assert content in {f"{n} update {UPDATES - 1}".encode() for n in "ab"}
    assert (meta["md5Checksum"], meta["size"]) == (hashlib.md5(content).hexdigest(), str(len(content)))
