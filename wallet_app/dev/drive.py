"""Development stand-in for a Drive v3 subset under /dev-drive (mounted only in dev mode).

Paths and JSON mirror https://www.googleapis.com with /dev-drive as the root, so the
browser's Drive client works against either by swapping the root URL (design.md section 5):

  GET   /dev-drive/drive/v3/about?fields=user(emailAddress)
  GET   /dev-drive/drive/v3/files?spaces=appDataFolder&q=name='…'&fields=…
  GET   /dev-drive/drive/v3/files/{id}[?alt=media]
  POST  /dev-drive/upload/drive/v3/files?uploadType=multipart
  PATCH /dev-drive/upload/drive/v3/files/{id}?uploadType=multipart|media

Bearer access tokens come from the development identity provider and must carry the
drive.appdata scope; each subject sees only its own files. Errors use Google's
{"error": {"code", "message", "errors", "status"}} shape.

Files are stored on disk under settings.dev_drive_dir/<hash of subject>/ as <id>.bin
(content) and <id>.json (metadata), each written to a temporary file and renamed, so a
crash never leaves half a file. The content is written before its metadata: a reader
that sees new metadata also sees the new content. Writes (an update's read-modify-write
included) and media reads hold the subject's file lock (<hash>.lock next to its folder), so
they stay whole across the threads and the processes of several workers.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from wallet_app.core.config import get_settings
from wallet_app.dev import idp

PREFIX = "/dev-drive"
DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.appdata"
APP_DATA = "appDataFolder"
MAX_UPLOAD = 5 * 1024 * 1024  # Google's limit for multipart/media uploads
_ID_RE = re.compile(r"[A-Za-z0-9_-]{20,64}")
# files.list and files.get answer these fields when `fields` is absent (as Google does).
DEFAULT_FILE_FIELDS = "kind,id,name,mimeType"
DEFAULT_LIST_FIELDS = "kind,incompleteSearch,files(kind,id,name,mimeType)"


class DriveError(Exception):
    def __init__(self, code: int, message: str, reason: str, status: str, **where: str) -> None:
        super().__init__(message)
        self.code, self.message, self.reason, self.status, self.where = code, message, reason, status, where

    def response(self) -> JSONResponse:
        detail = {"message": self.message, "domain": "global", "reason": self.reason, **self.where}
        body = {"error": {"code": self.code, "message": self.message, "errors": [detail], "status": self.status}}
        headers = {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'} if self.code == 401 else {}
        return JSONResponse(body, status_code=self.code, headers=headers)


def _bad_request(message: str, location: str | None = None) -> DriveError:
    where = {"location": location, "locationType": "parameter"} if location else {}
    return DriveError(400, message, "invalid", "INVALID_ARGUMENT", **where)


def _not_found(file_id: str) -> DriveError:
    return DriveError(
        404, f"File not found: {file_id}.", "notFound", "NOT_FOUND", location="fileId", locationType="parameter"
    )


# --- pure parsers (table-tested) -----------------------------------------------------------


def parse_query(q: str | None) -> dict:
    """The `q` subset we understand: terms joined by `and`, each one of
    name = '…' (with \\' and \\\\ escapes), 'appDataFolder' in parents, trashed = true|false.
    Returns {"name"?: str, "trashed"?: bool}; ValueError on anything else."""
    out: dict = {}
    text = (q or "").strip()
    term = re.compile(
        r"\s*(?:name\s*=\s*'((?:[^'\\]|\\.)*)'|'appDataFolder'\s+in\s+parents|trashed\s*=\s*(true|false))\s*"
    )
    pos = 0
    while text and pos < len(text):
        m = term.match(text, pos)
        if not m:
            raise ValueError("unsupported query")
        if m.group(1) is not None:
            out["name"] = re.sub(r"\\(.)", r"\1", m.group(1))
        elif m.group(2) is not None:
            out["trashed"] = m.group(2) == "true"
        pos = m.end()
        if pos < len(text):
            joiner = re.compile(r"and\s+", re.IGNORECASE).match(text, pos)
            if not joiner:
                raise ValueError("unsupported query")
            pos = joiner.end()
    return out


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced parentheses")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise ValueError("unbalanced parentheses")
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def parse_fields(fields: str) -> dict | None:
    """Google's partial-response selector -> a tree {name: subtree or None (whole value)}.
    '*' selects everything (returns None). Supports a,b  a(b,c)  a/b."""
    fields = fields.strip()
    if fields == "*":
        return None
    tree: dict = {}
    for part in _split_top(fields):
        m = re.fullmatch(r"([A-Za-z*][A-Za-z0-9_]*(?:/[A-Za-z*][A-Za-z0-9_]*)*)(?:\((.*)\))?", part, re.DOTALL)
        if not m:
            raise ValueError(f"invalid field selection {part}")
        path, sub = m.group(1).split("/"), m.group(2)
        node = tree
        for name in path[:-1]:
            node = node.setdefault(name, {})
            if node is None:
                break
        else:
            leaf = parse_fields(sub) if sub is not None else None
            node[path[-1]] = leaf if path[-1] != "*" else None
            if path[-1] == "*":
                return None
    return tree


def select_fields(value, tree: dict | None):
    """Apply a parse_fields tree to a JSON value (lists are mapped element-wise)."""
    if tree is None:
        return value
    if isinstance(value, list):
        return [select_fields(v, tree) for v in value]
    if not isinstance(value, dict):
        return value
    return {k: select_fields(value[k], sub) for k, sub in tree.items() if k in value}


def parse_multipart_related(content_type: str, body: bytes) -> tuple[dict, bytes, str | None]:
    """multipart/related upload -> (metadata JSON, media bytes, media Content-Type).
    Exactly two parts: JSON metadata first, then the content. ValueError otherwise."""
    ctype, _, params = content_type.partition(";")
    if ctype.strip().lower() != "multipart/related":
        raise ValueError("Content-Type must be multipart/related")
    m = re.search(r'boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))', params, re.IGNORECASE)
    if not m:
        raise ValueError("multipart boundary missing")
    dash = b"--" + (m.group(1) or m.group(2)).encode("latin-1")
    if body.startswith(dash):
        pos = len(dash)
    else:
        i = body.find(b"\r\n" + dash)
        if i < 0:
            raise ValueError("multipart boundary not found")
        pos = i + 2 + len(dash)
    parts: list[tuple[dict[str, str], bytes]] = []
    while True:
        if body[pos : pos + 2] == b"--":
            break
        eol = body.find(b"\r\n", pos)
        if eol < 0 or body[pos:eol].strip(b" \t"):
            raise ValueError("malformed multipart body")
        end = body.find(b"\r\n" + dash, eol + 2)
        if end < 0:
            raise ValueError("multipart closing boundary missing")
        parts.append(_split_part(body[eol + 2 : end]))
        pos = end + 2 + len(dash)
    if len(parts) != 2:
        raise ValueError("expected two parts: metadata and media")
    (meta_headers, meta_raw), (media_headers, media) = parts
    if not meta_headers.get("content-type", "").lower().startswith("application/json"):
        raise ValueError("first part must be application/json metadata")
    try:
        metadata = json.loads(meta_raw.decode("utf-8") or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("metadata is not valid JSON") from None
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be a JSON object")
    return metadata, media, media_headers.get("content-type")


def _split_part(raw: bytes) -> tuple[dict[str, str], bytes]:
    if raw.startswith(b"\r\n"):
        return {}, raw[2:]
    head, sep, content = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("multipart part without a blank line after its headers")
    headers = {}
    for line in head.decode("latin-1").split("\r\n"):
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError("malformed part header")
        headers[name.strip().lower()] = value.strip()
    return headers, content


# --- storage --------------------------------------------------------------------------------


def _rfc3339_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _user_dir(sub: str) -> Path:
    # The subject is hashed so that no user-controlled text becomes a path.
    return Path(get_settings().dev_drive_dir) / hashlib.sha256(sub.encode()).hexdigest()[:32]


@contextlib.contextmanager
def _locked(sub: str) -> Iterator[None]:
    """The subject's files to this thread alone, across processes (each open() is its own flock)."""
    path = _user_dir(sub).with_suffix(".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _load_meta(sub: str, file_id: str) -> dict | None:
    if not _ID_RE.fullmatch(file_id):
        return None
    try:
        return json.loads((_user_dir(sub) / f"{file_id}.json").read_text())
    except FileNotFoundError:
        return None


def _list_meta(sub: str) -> list[dict]:
    d = _user_dir(sub)
    if not d.is_dir():
        return []
    return [json.loads(p.read_text()) for p in sorted(d.glob("*.json"))]


def _store(sub: str, meta: dict, content: bytes | None) -> dict:
    """Write content (if given) then metadata; returns the metadata. The caller holds _locked(sub)."""
    d = _user_dir(sub)
    meta = dict(meta)
    if content is not None:
        meta["size"] = str(len(content))
        meta["md5Checksum"] = hashlib.md5(content, usedforsecurity=False).hexdigest()
        meta["sha256Checksum"] = hashlib.sha256(content).hexdigest()
    meta["modifiedTime"] = _rfc3339_now()
    meta["version"] = str(int(meta.get("version", "0")) + 1)
    if content is not None:
        _write_atomic(d / f"{meta['id']}.bin", content)
    _write_atomic(d / f"{meta['id']}.json", json.dumps(meta).encode())
    return meta


# --- request helpers ------------------------------------------------------------------------


def _subject(request: Request) -> str:
    return _account(request)[0]


def _account(request: Request) -> tuple[str, str]:
    """(subject, e-mail) of the request's bearer token; DriveError 401 as Google answers it."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise DriveError(
            401,
            "Request is missing required authentication credential. Expected OAuth 2 access token, "
            "login cookie or other valid authentication credential.",
            "required",
            "UNAUTHENTICATED",
            location="Authorization",
            locationType="header",
        )
    account = idp.account_for_access_token(token.strip(), DRIVE_SCOPE)
    if account is None:
        raise DriveError(
            401,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, "
            "login cookie or other valid authentication credential.",
            "authError",
            "UNAUTHENTICATED",
            location="Authorization",
            locationType="header",
        )
    return account


def _fields(request: Request, default: str) -> dict | None:
    try:
        return parse_fields(request.query_params.get("fields") or default)
    except ValueError as e:
        raise _bad_request(f"Invalid field selection: {e}", "fields") from None


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isascii() and declared.isdigit() and int(declared) > MAX_UPLOAD:
        raise DriveError(413, "Request Too Large", "uploadTooLarge", "INVALID_ARGUMENT")
    body = await request.body()
    if len(body) > MAX_UPLOAD:
        raise DriveError(413, "Request Too Large", "uploadTooLarge", "INVALID_ARGUMENT")
    return body


def _check_name(value) -> str:
    if not isinstance(value, str) or not value or len(value) > 1024:
        raise _bad_request("name must be a non-empty string", "name")
    return value


def _upload_type(request: Request, allowed: tuple[str, ...]) -> str:
    kind = request.query_params.get("uploadType", "")
    if kind not in allowed:
        raise _bad_request(f"uploadType must be one of: {', '.join(allowed)}", "uploadType")
    return kind


# --- routes ---------------------------------------------------------------------------------


def build_router() -> APIRouter:
    router = APIRouter(prefix=PREFIX, tags=["dev-drive"], include_in_schema=False)

    @router.get("/drive/v3/about")
    def about(request: Request) -> Response:
        """The token's account, as Google answers about.get: `fields` is required there too.
        Sync: the token look-up may be a Redis call (core.shared)."""
        try:
            sub, email = _account(request)
            if not request.query_params.get("fields"):
                raise _bad_request("The 'fields' parameter is required for this method.", "fields")
            user = {
                "kind": "drive#user",
                "displayName": email.split("@")[0],
                "me": True,
                "permissionId": sub[:20],
                "emailAddress": email,
            }
            body = {"kind": "drive#about", "user": user}
            return JSONResponse(select_fields(body, _fields(request, "")))
        except DriveError as e:
            return e.response()

    # File I/O stays off the event loop: sync routes run in the threadpool, the uploads read
    # their body here and store it in the threadpool.
    @router.get("/drive/v3/files")
    def list_files(request: Request) -> Response:
        try:
            sub = _subject(request)
            spaces = request.query_params.get("spaces", "drive").split(",")
            if APP_DATA not in spaces:
                raise DriveError(
                    403,
                    "The granted scopes do not give access to all of the requested spaces.",
                    "insufficientScopes",
                    "PERMISSION_DENIED",
                )
            try:
                query = parse_query(request.query_params.get("q"))
            except ValueError:
                raise _bad_request("Invalid Value", "q") from None
            tree = _fields(request, DEFAULT_LIST_FIELDS)
            files = [
                f
                for f in _list_meta(sub)
                if ("name" not in query or f["name"] == query["name"]) and not query.get("trashed", False)
            ]
            files.sort(key=lambda f: f["modifiedTime"], reverse=True)
            body = {"kind": "drive#fileList", "incompleteSearch": False, "files": files}
            return JSONResponse(select_fields(body, tree))
        except DriveError as e:
            return e.response()

    @router.get("/drive/v3/files/{file_id}")
    def get_file(file_id: str, request: Request) -> Response:
        try:
            sub = _subject(request)
            meta = _load_meta(sub, file_id)
            if meta is None:
                raise _not_found(file_id)
            if request.query_params.get("alt") == "media":
                with _locked(sub):  # the content of the metadata read with it
                    meta = _load_meta(sub, file_id) or meta
                    content = (_user_dir(sub) / f"{file_id}.bin").read_bytes()
                return Response(
                    content,
                    media_type=meta.get("mimeType") or "application/octet-stream",
                    headers={"Cache-Control": "no-store"},
                )
            return JSONResponse(select_fields(meta, _fields(request, DEFAULT_FILE_FIELDS)))
        except DriveError as e:
            return e.response()

    @router.post("/upload/drive/v3/files")
    async def create_file(request: Request) -> Response:
        try:
            sub, body = _subject(request), await _body(request)
        except DriveError as e:
            return e.response()
        return await run_in_threadpool(_create_file, request, sub, body)

    @router.patch("/upload/drive/v3/files/{file_id}")
    async def update_file(file_id: str, request: Request) -> Response:
        try:
            sub, body = _subject(request), await _body(request)
        except DriveError as e:
            return e.response()
        return await run_in_threadpool(_update_file, file_id, request, sub, body)

    return router


def _create_file(request: Request, sub: str, body: bytes) -> Response:
    try:
        _upload_type(request, ("multipart",))
        tree = _fields(request, DEFAULT_FILE_FIELDS)
        try:
            metadata, content, media_type = parse_multipart_related(request.headers.get("content-type", ""), body)
        except ValueError as e:
            raise _bad_request(f"Malformed multipart body: {e}") from None
        if metadata.get("parents") != [APP_DATA]:
            raise DriveError(
                403,
                "The granted scopes do not give access to all of the requested spaces.",
                "insufficientScopes",
                "PERMISSION_DENIED",
            )
        now = _rfc3339_now()
        meta = {
            "kind": "drive#file",
            "id": "dev" + secrets.token_urlsafe(24),
            "name": _check_name(metadata.get("name")),
            "mimeType": metadata.get("mimeType") or media_type or "application/octet-stream",
            "parents": [APP_DATA],
            "spaces": [APP_DATA],
            "createdTime": now,
        }
        with _locked(sub):
            stored = _store(sub, meta, content)
        return JSONResponse(select_fields(stored, tree))
    except DriveError as e:
        return e.response()


def _update_file(file_id: str, request: Request, sub: str, body: bytes) -> Response:
    try:
        kind = _upload_type(request, ("multipart", "media"))
        tree = _fields(request, DEFAULT_FILE_FIELDS)
        metadata: dict  # the JSON metadata part; none with a media upload
        if kind == "media":
            content, media_type, metadata = body, request.headers.get("content-type"), {}
        else:
            try:
                metadata, content, media_type = parse_multipart_related(request.headers.get("content-type", ""), body)
            except ValueError as e:
                raise _bad_request(f"Malformed multipart body: {e}") from None
        if "parents" in metadata:
            raise DriveError(
                403,
                "The parents field is not directly writable in update requests. "
                "Use the addParents and removeParents parameters instead.",
                "fieldNotWritable",
                "PERMISSION_DENIED",
            )
        with _locked(sub):  # read, change, write: no other worker's update in between
            meta = _load_meta(sub, file_id)
            if meta is None:
                raise _not_found(file_id)
            if "name" in metadata:
                meta["name"] = _check_name(metadata["name"])
            meta["mimeType"] = metadata.get("mimeType") or media_type or meta["mimeType"]
            stored = _store(sub, meta, content)
        return JSONResponse(select_fields(stored, tree))
    except DriveError as e:
        return e.response()
