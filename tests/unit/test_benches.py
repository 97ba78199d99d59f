"""The benches start: each script loads (its imports and --help), and the settings the in-process
ones run the app with are accepted. Two of them had stopped at start unnoticed (a path the script
did not put on sys.path; an origin the settings refuse since they check its form)."""

import subprocess
import sys
from pathlib import Path

import pytest

from wallet_app.core.config import REPO_ROOT, get_settings

BENCHES = sorted(p.name for p in (REPO_ROOT / "bench").glob("*.py") if p.name != "devstack.py")


def test_every_bench_is_listed_here():
    assert BENCHES == ["abuse.py", "balances.py", "growth.py", "indexer.py", "kdf.py", "load.py", "page_weight.py",
                       "payments.py", "sign_preview.py"]


@pytest.mark.parametrize("script", BENCHES)
def test_the_bench_loads(script):
    done = subprocess.run([sys.executable, f"bench/{script}", "--help"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]


@pytest.mark.parametrize("port", [80, 8123])
def test_the_benches_development_settings_are_accepted(tmp_path: Path, monkeypatch, port):
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    try:
        import devstack
    finally:
        sys.path.remove(str(REPO_ROOT / "bench"))
    for name in ("DATABASE_URL", "PUBLIC_BASE_URL", "DEV_MODE", "GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET",
                 "RELAYER_PRIVATE_KEY", "DEV_IDP_KEY_FILE", "DEPLOYMENTS_DIR", "CHAINS_FILE"):
        monkeypatch.setenv(name, "")  # so that the test's end restores them: use_dev_environment sets them
    devstack.use_dev_environment(tmp_path, port=port)
    try:
        assert get_settings().public_base_url.rstrip("/") == ("http://127.0.0.1" if port == 80 else
                                                             f"http://127.0.0.1:{port}")
    finally:
        get_settings.cache_clear()
