"""Issue 3: during sign-in, onboarding and an unlock (signing) nothing secret reaches our server:
not in a request, not in a websocket frame, not in the server's log."""

import base64
import re

from playwright.sync_api import expect

from tests.e2e.flows import create_wallet, local_materials, new_email
from tests.e2e.flows_send import send_to_sign
from tests.e2e.leaks import LeakRecorder, phrase_patterns, phrase_windows
from tests.e2e.vault_py import unwrap

LEAK_PIN = "847261"


def wallet_secrets(materials: dict, pin: str) -> dict[str, bytes | str]:
    w = unwrap(materials, pin)
    secrets = {"PIN": pin, "argon2 output": w.pin_key, "K": w.k, "K xor devSecret": w.wrapped,
               "devSecret": w.dev_secret, "private key": w.private_key}
    secrets.update({f"phrase words {i}": text for i, text in enumerate(phrase_windows(w.words))})
    return secrets


def test_sign_in_onboarding_and_an_unlock_send_no_secret(page, app_server):
    recorder = LeakRecorder(app_server.base_url).attach(page.context)
    address = create_wallet(page, new_email("leak"), pin=LEAK_PIN)
    # An unlock: sign a transfer on /sign with the PIN (the key exists only inside that call).
    send_to_sign(page)
    page.get_by_role("button", name="Confirm").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("PIN").fill(LEAK_PIN)
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("alertdialog").get_by_role("alert")).to_have_text(
        re.compile(r"Transaction submitted\. Hash: 0x[0-9a-f]{4}…[0-9a-f]{4}"), timeout=60_000)

    secrets = wallet_secrets(local_materials(page, address), LEAK_PIN)
    recorder.assert_absent(secrets, app_server.log_path.read_text(errors="replace"))
    # Public things did reach the server: the recorder sees real traffic.
    assert any(address in body for body in recorder.bodies + recorder.frames)
    assert any("raw" in frame for frame in recorder.frames)


def test_recorder_catches_each_encoding():
    secret = bytes(range(32))
    for form in (secret.hex(), base64.b64encode(secret).decode(), base64.urlsafe_b64encode(secret).decode()):
        recorder = LeakRecorder("http://x")
        recorder.bodies.append("{}")
        recorder.frames.append('{"delta": "' + form + '"}')
        try:
            recorder.assert_absent({"K": secret})
        except AssertionError as e:
            assert "K in websocket" in str(e)
        else:
            raise AssertionError(f"a leak as {form!r} went unnoticed")


def test_recorder_catches_phrase_words_with_any_separator():
    secrets = {f"phrase {i}": p for i, p in enumerate(phrase_patterns("legal winner thank year wave"))}
    for frame in ('["legal", "winner", "thank"]', "winner,\nthank,\nyear", "thank year wave"):
        recorder = LeakRecorder("http://x", bodies=["{}"], frames=[frame])
        try:
            recorder.assert_absent(secrets)
        except AssertionError as e:
            assert "in websocket" in str(e)
        else:
            raise AssertionError(f"phrase words in {frame!r} went unnoticed")
    # Two words, or three that are not consecutive in the phrase, are not a leak.
    LeakRecorder("http://x", bodies=["{}"], frames=['["year", "wave"] legal thank winner']).assert_absent(secrets)
