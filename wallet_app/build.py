"""`make build`: compile the production frontend into .web/build (no server started)."""

import subprocess
import sys

from contracts.artifacts import compile_contracts
from custom_components.wallet_js.vendor import copy_argon2
from wallet_app.core.config import REPO_ROOT


def main() -> int:
    copy_argon2(REPO_ROOT / "assets" / "argon2")
    compile_contracts()  # the server reads its contract ABIs from contracts/build
    return subprocess.call(["reflex", "export", "--frontend-only", "--no-zip"], cwd=REPO_ROOT)


if __name__ == "__main__":
    sys.exit(main())
