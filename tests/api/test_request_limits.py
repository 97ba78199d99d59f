"""What one request may cost a worker: a body over api.MAX_BODY_BYTES is refused before it is held,
and a deeply nested JSON body is refused instead of overflowing the C stack (core.startup)."""

import json
import sys

from tests.conftest import run_async
from wallet_app.api import MAX_BODY_BYTES, build_api
from wallet_app.core.startup import RECURSION_LIMIT

SIGN_IN = "/api/v1/auth/google"
CHUNK = 64 * 1024


def post(
    app, chunks: list[bytes], content_length: int | bytes | None = None, method: str = "POST", path: str = SIGN_IN
) -> tuple[int, dict, int]:
    """Sends `chunks` (to SIGN_IN by POST) straight through ASGI: (status, JSON body, chunks the app read)."""
    headers = [(b"content-type", b"application/json"), (b"origin", b"http://localhost")]
    if content_length is not None:
        raw = content_length if isinstance(content_length, bytes) else str(content_length).encode()
        headers.append((b"content-length", raw))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": headers, "client": ("192.0.2.1", 5000), "server": ("localhost", 80)}
    read = 0
    answer: dict = {"body": b""}

    async def receive():
        nonlocal read
        if read < len(chunks):
            read += 1
            return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    run_async(app(scope, receive, send))
    return answer["status"], json.loads(answer["body"]), read


def test_the_api_runs_at_cpythons_recursion_limit(db):
    sys.setrecursionlimit(100_000)  # what importing py_ecc sets
    build_api()
    assert sys.getrecursionlimit() == RECURSION_LIMIT == 1000


def test_a_deeply_nested_body_is_refused_and_the_worker_lives(client):
    # 200 kB: at py_ecc's limit json.loads overflowed the C stack here and the process died (SIGSEGV).
    depth = 100_000
    resp = client.post(SIGN_IN, content=b"[" * depth + b"]" * depth, headers={"content-type": "application/json"})
    assert (resp.status_code, resp.json()) == (422, {"detail": "invalid_request"})
    assert client.get("/api/v1/health").status_code == 200


def test_a_body_fastapi_cannot_parse_answers_one_code(client):
    # An integer of over 4300 digits: Python refuses to read it (not FastAPI's English sentence).
    body = b'{"id_token": ' + b"9" * 5000 + b"}"
    resp = client.post(SIGN_IN, content=body, headers={"content-type": "application/json"})
    assert (resp.status_code, resp.json()) == (422, {"detail": "invalid_request"})


def test_a_declared_body_over_the_limit_is_refused_unread(app):
    status, body, read = post(app, [b"x" * CHUNK] * 20, content_length=20 * CHUNK)
    assert (status, body, read) == (422, {"detail": "invalid_request"}, 0)


def test_a_content_length_that_is_no_number_is_refused_unread(app):
    # "²" (latin-1 0xb2) passes str.isdigit() but not int().
    for declared in (b"\xb2", b"-1", b"1e9", b""):
        assert post(app, [b"{}"], content_length=declared) == (422, {"detail": "invalid_request"}, 0)


def test_a_chunked_body_is_read_no_further_than_the_limit(app):
    status, body, read = post(app, [b"x" * CHUNK] * 320)  # 20 MB, no Content-Length
    assert (status, body, read) == (422, {"detail": "invalid_request"}, MAX_BODY_BYTES // CHUNK + 1)


def test_bodies_within_the_limit_reach_their_route(app):
    token = json.dumps({"id_token": "garbage", "locale": "en"}).encode()
    # declared, and chunked (the middleware hands on what it read as one body)
    assert post(app, [token], content_length=len(token))[:2] == (401, {"detail": "login_attempt_expired"})
    assert post(app, [token[:10], token[10:]])[:2] == (401, {"detail": "login_attempt_expired"})


def test_a_route_that_takes_no_body_never_reads_one(app):
    # Each receive() is a hop to the server's I/O thread and back: reading ahead the body of every
    # GET (none, no Content-Length) cost GET /api/v1/me a third of its throughput (bench/load.py).
    assert post(app, [b""], method="GET", path="/api/v1/me") == (401, {"detail": "not_authenticated"}, 0)
