import base64
import hashlib

from wallet_app.core.security import cache_control, content_security_policy, inline_script_hashes


def test_inline_script_hashes_cover_only_inline_scripts(tmp_path):
    body = b"window.x = 1;"
    (tmp_path / "index.html").write_bytes(
        b"<html><script>" + body + b"</script><script src='/a.js'></script>"
        b"<script type=\"module\" async=\"\">import '/b.js';</script></html>"
    )
    hashes = inline_script_hashes(tmp_path)
    expected = "'sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode() + "'"
    assert expected in hashes
    assert len(hashes) == 2  # the module bootstrap counts, the src= script does not


def test_policy_without_google_allows_only_self():
    csp = content_security_policy(["'sha256-abc'"], google=False)
    assert "script-src 'self' 'sha256-abc'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "google" not in csp
    assert "unsafe-eval" not in csp
    assert "wasm-unsafe-eval" not in csp


def test_policy_with_google_adds_sign_in_and_drive_hosts():
    csp = content_security_policy([], google=True)
    assert "https://accounts.google.com/gsi/client" in csp
    assert "https://www.googleapis.com" in csp


def test_kdf_worker_may_compile_wasm():
    assert "'wasm-unsafe-eval'" in content_security_policy([], google=False, wasm=True)


def test_cache_control():
    assert cache_control("/assets/root-abc.js") == "public, max-age=31536000, immutable"
    assert cache_control("/sw.js") == "no-cache"
    assert cache_control("/api/v1/me") == "no-store"
    assert cache_control("/home") is None
