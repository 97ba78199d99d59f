# Sourced by the Makefile: keeps Reflex, bun and caches inside the repo and offline.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PATH="$here/tools/node_modules/.bin:$here/.venv/bin:$PATH"
export REFLEX_USE_SYSTEM_BUN=1
export REFLEX_TELEMETRY_ENABLED=false
export REFLEX_CHECK_LATEST_VERSION=false
export REFLEX_DIR="$here/.cache/reflex"
export BUN_INSTALL_CACHE_DIR="$here/.cache/bun-install"
export BUN_RUNTIME_TRANSPILER_CACHE_PATH="$here/.cache/bun-transpiler"
