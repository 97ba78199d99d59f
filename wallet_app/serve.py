"""`make run`: the wallet on its embedded defaults, on one port (page, websocket and /api/v1)."""

import argparse
import os
import subprocess
import sys

from wallet_app.core.config import REPO_ROOT


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    os.environ.setdefault("PUBLIC_BASE_URL", f"http://localhost:{args.port}")
    (REPO_ROOT / "data").mkdir(exist_ok=True)
    cmd = [
        "reflex", "run", "--env", "prod", "--single-port",
        "--frontend-port", str(args.port), "--backend-port", str(args.port),
        "--backend-host", args.host,
    ]
    return subprocess.call(cmd, cwd=REPO_ROOT)


if __name__ == "__main__":
    sys.exit(main())
