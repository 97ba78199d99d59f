"""Records everything the browser sends to (and receives from) our own server, so a test can
assert that no secret crossed the boundary of design.md section 1."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# Stand-ins for Google: the Drive token legitimately goes there, as it would to Google.
GOOGLE_STAND_INS = ("/dev-idp", "/dev-drive")


def encodings(secret: bytes | str) -> set[str]:
    """The forms a secret could travel in: as is, hex, and base64 (standard and url-safe; without
    the padding, which also finds the padded form)."""
    raw = secret.encode() if isinstance(secret, str) else secret
    forms = {raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode().rstrip("="),
             base64.urlsafe_b64encode(raw).decode().rstrip("=")}
    if isinstance(secret, str):
        forms.add(secret)
    return {f for f in forms if len(f) >= 6}


def phrase_windows(words: str, size: int = 3) -> list[str]:
    """Every run of `size` consecutive phrase words."""
    w = words.split()
    return [" ".join(w[i:i + size]) for i in range(len(w) - size + 1)]


def phrase_patterns(words: str, size: int = 3) -> list[re.Pattern]:
    """Every run of `size` consecutive phrase words with any separators between them (a JSON list
    of words, commas, newlines): for assert_absent next to phrase_windows."""
    w = words.split()
    return [re.compile(r"\b" + r"\W+".join(map(re.escape, w[i:i + size])) + r"\b")
            for i in range(len(w) - size + 1)]


@dataclass
class LeakRecorder:
    """`bodies` and `frames`: our server's traffic; `elsewhere`: any other origin's (none is
    expected); `google_tokens`: the bearer tokens sent to the Google stand-ins (the Drive token,
    a secret for our server)."""

    origin: str
    bodies: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    google_tokens: set[str] = field(default_factory=set)

    def attach(self, context) -> LeakRecorder:
        context.on("request", self._on_request)
        context.on("page", lambda page: page.on("websocket", self._on_websocket))
        for page in context.pages:
            page.on("websocket", self._on_websocket)
        return self

    def _where(self, url: str) -> str:
        """Where a URL goes: "ours", "google" (a stand-in on our origin) or "elsewhere"."""
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != self.origin:
            return "elsewhere"
        return "google" if parts.path.startswith(GOOGLE_STAND_INS) else "ours"

    def _on_request(self, request) -> None:
        where = self._where(request.url)
        if where == "google":
            auth = request.headers.get("authorization", "")
            if auth.startswith("Bearer "):
                self.google_tokens.add(auth[len("Bearer "):])
            return
        # The URL too: a secret in a query string would leak as surely as in a body.
        body = request.post_data_buffer
        text = request.url + "\n" + (body.decode(errors="replace") if body else "")
        (self.bodies if where == "ours" else self.elsewhere).append(text)

    def _on_websocket(self, ws) -> None:
        where = self._where(ws.url.replace("ws://", "http://").replace("wss://", "https://"))
        if where == "google":
            return
        target = self.frames if where == "ours" else self.elsewhere

        def record(payload):
            target.append(payload if isinstance(payload, str) else payload.decode(errors="replace"))

        ws.on("framesent", record)
        ws.on("framereceived", record)

    def assert_absent(self, secrets: dict[str, bytes | str | re.Pattern], server_log: str = "") -> None:
        """No secret in any of its encodings (a pattern: as it matches) in what was recorded."""
        assert self.bodies, "no request to our server was recorded"
        assert self.frames, "no websocket frame was recorded"
        haystacks = {"request": self.bodies, "websocket": self.frames, "other origin": self.elsewhere,
                     "server log": [server_log]}
        found = []
        for name, secret in secrets.items():
            if isinstance(secret, re.Pattern):
                tests = [secret.search]
            else:
                tests = [lambda item, form=form: form in item for form in encodings(secret)]
            for where, items in haystacks.items():
                if any(test(item) for test in tests for item in items):
                    found.append(f"{name} in {where}")
        assert not found, "secrets crossed the boundary: " + ", ".join(sorted(set(found)))
