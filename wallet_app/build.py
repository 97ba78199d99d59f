"""`make build`: compile the production frontend into .web/build (no server started)."""

import os
import subprocess
import sys

from contracts.artifacts import compile_contracts
from custom_components.wallet_js.vendor import copy_argon2
from wallet_app.core.config import REPO_ROOT, SettingsError, load_settings

# The compiled frontend is the same in both modes (they differ only at runtime), so a machine
# with no serving settings (CI, `make test`) builds under these instead of being refused.
BUILD_DEFAULTS = {"DEV_MODE": "1", "PUBLIC_BASE_URL": "http://localhost:3000", "GOOGLE_CLIENT_ID": ""}


def build_env() -> dict[str, str] | None:
    """The environment for `reflex export` (None: this one); reflex loads the settings (rxconfig.py)."""
    try:
        load_settings()
        return None
    except SettingsError:
        return {**os.environ, **BUILD_DEFAULTS}


def main() -> int:
    copy_argon2(REPO_ROOT / "assets" / "argon2")
    compile_contracts()  # the server reads its contract ABIs from contracts/build
    return subprocess.call(["reflex", "export", "--frontend-only", "--no-zip"], cwd=REPO_ROOT, env=build_env())


if __name__ == "__main__":
    sys.exit(main())
