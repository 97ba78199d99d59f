"""`make build`: compile the production frontend into .web/build (no server started)."""

import os
import subprocess
import sys

from contracts.artifacts import compile_contracts
from custom_components.wallet_js.vendor import copy_argon2
from wallet_app.core.config import BUILDING_ENV, REPO_ROOT, SettingsError, load_settings

# The compiled frontend is the same in both modes (they differ only at runtime), so a machine
# with no serving settings (CI, `make test`) builds under these instead of being refused.
BUILD_DEFAULTS = {"DEV_MODE": "1", "PUBLIC_BASE_URL": "http://localhost:3000", "GOOGLE_CLIENT_ID": ""}


def build_env() -> dict[str, str]:
    """The environment for `reflex export`, which loads the settings (rxconfig.py): this one, or
    BUILD_DEFAULTS over it when it cannot serve; BUILDING_ENV set either way."""
    try:
        load_settings()
        defaults = {}
    except SettingsError:
        defaults = BUILD_DEFAULTS
    return {**os.environ, **defaults, BUILDING_ENV: "1"}


def main() -> int:
    copy_argon2(REPO_ROOT / "assets" / "argon2")
    compile_contracts()  # the server reads its contract ABIs from contracts/build
    return subprocess.call(["reflex", "export", "--frontend-only", "--no-zip"], cwd=REPO_ROOT, env=build_env())


if __name__ == "__main__":
    sys.exit(main())
