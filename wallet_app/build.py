"""`make build`: compile the production frontend into .web/build (no server started)."""

import subprocess
import sys

from wallet_app.core.config import REPO_ROOT


def main() -> int:
    return subprocess.call(["reflex", "export", "--frontend-only", "--no-zip"], cwd=REPO_ROOT)


if __name__ == "__main__":
    sys.exit(main())
