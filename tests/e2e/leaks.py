"""Records everything the browser sends to (and receives from) our own server, so a test can
assert that no secret crossed the boundary of design.md section 1."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# Stand-ins for Google: the Drive token legitimately goes there, as it would to Google.
GOOGLE_STAND_INS = ("/dev-idp", "/dev-drive")


def encodings(secret: bytes | str) -> set[str]:
    """The forms a secret could travel in: as is, hex, and base64 (standard and url-safe)."""
    raw = secret.encode() if isinstance(secret, str) else secret
    forms = {raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode(),
             base64.urlsafe_b64encode(raw).decode().rstrip("=")}
    if isinstance(secret, str):
        forms.add(secret)
    return {f for f in forms if len(f) >= 6}


def phrase_windows(words: str, size: int = 3) -> list[str]:
    """Every run of `size` consecutive phrase words."""
    w = words.split()
    return [" ".join(w[i:i + size]) for i in range(len(w) - size + 1)]


@dataclass
class LeakRecorder:
    origin: str
    bodies: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)

    def attach(self, context) -> "LeakRecorder":
        context.on("request", self._on_request)
        context.on("page", lambda page: page.on("websocket", self._on_websocket))
        for page in context.pages:
            page.on("websocket", self._on_websocket)
        return self

    def _ours(self, url: str) -> bool:
        parts = urlsplit(url)
        return (f"{parts.scheme}://{parts.netloc}" == self.origin
                and not parts.path.startswith(GOOGLE_STAND_INS))

    def _on_request(self, request) -> None:
        if self._ours(request.url):
            # The URL too: a secret in a query string would leak as surely as in a body.
            self.bodies.append(request.url + "\n" + (request.post_data or ""))

    def _on_websocket(self, ws) -> None:
        if not self._ours(ws.url.replace("ws://", "http://").replace("wss://", "https://")):
            return

        def record(payload):
            self.frames.append(payload if isinstance(payload, str) else payload.decode(errors="replace"))

        ws.on("framesent", record)
        ws.on("framereceived", record)

    def assert_absent(self, secrets: dict[str, bytes | str], server_log: str = "") -> None:
        assert self.bodies, "no request to our server was recorded"
        assert self.frames, "no websocket frame was recorded"
        haystacks = {"request": self.bodies, "websocket": self.frames, "server log": [server_log]}
        found = []
        for name, secret in secrets.items():
            for form in encodings(secret):
                for where, items in haystacks.items():
                    if any(form in item for item in items):
                        found.append(f"{name} in {where}")
        assert not found, "secrets crossed the boundary: " + ", ".join(sorted(set(found)))
