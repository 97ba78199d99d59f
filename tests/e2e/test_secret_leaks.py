"""Issue 3: during sign-in and onboarding nothing secret reaches our server: not in a request,
not in a websocket frame, not in the server's log."""

import base64
import json

from argon2.low_level import Type, hash_secret_raw
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from eth_account import Account

from tests.e2e.flows import create_wallet, local_materials, new_email
from tests.e2e.leaks import LeakRecorder, phrase_windows

Account.enable_unaudited_hdwallet_features()
LEAK_PIN = "847261"


def wallet_secrets(materials: dict, pin: str) -> dict[str, bytes | str]:
    b = {k: base64.b64decode(v) for k, v in materials.items() if k != "kdfParams"}
    p = json.loads(materials["kdfParams"])
    pin_key = hash_secret_raw(pin.encode(), b["kdfSaltB"], time_cost=p["t"], memory_cost=p["m"],
                              parallelism=p["p"], hash_len=32, type=Type.ID)
    wrapped = AESGCM(pin_key).decrypt(b["lwrapIv"], b["lwrapCt"], None)
    k = bytes(x ^ y for x, y in zip(wrapped, b["devSecret"]))
    words = AESGCM(k).decrypt(b["ciphertextIv"], b["ciphertext"], None).decode()
    key = Account.from_mnemonic(words, account_path="m/44'/60'/0'/0/0").key
    secrets = {"PIN": LEAK_PIN, "argon2 output": pin_key, "K": k, "K xor devSecret": wrapped,
               "devSecret": b["devSecret"], "private key": bytes(key)}
    secrets.update({f"phrase words {i}": w for i, w in enumerate(phrase_windows(words))})
    return secrets


def test_sign_in_and_onboarding_send_no_secret(page, app_server):
    recorder = LeakRecorder(app_server.base_url).attach(page.context)
    address = create_wallet(page, new_email("leak"), pin=LEAK_PIN)
    secrets = wallet_secrets(local_materials(page, address), LEAK_PIN)
    recorder.assert_absent(secrets, app_server.log_path.read_text(errors="replace"))
    # The address itself is public and did reach the server: the recorder sees real traffic.
    assert any(address in body for body in recorder.bodies + recorder.frames)


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
