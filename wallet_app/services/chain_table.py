"""The chains table shipped in the browser bundle at build time, for the PIN dialog's re-checks
(custom_components/wallet_js/keyring.js): chain id -> {payment_contract, native_symbol,
native_decimals}, from the chains file and its deployments resolved as services.chain.get_chains()
resolves them. The browser checks what it signs against this table, never against what the
server says later.

The module is written into the web folder of the build being compiled (REFLEX_WEB_WORKDIR), not
under assets/ like the catalogues: the catalogues are the same for every build, but this table is
the compiling server's own settings. In a folder that every build on the machine copies from,
another process with other chains (a test with no deployments wrote `{}`) replaced it between
one server's write and its copy, and that server's bundle refused to sign any payment."""

from __future__ import annotations

import json
from pathlib import Path

from reflex.utils.imports import ImportVar
from reflex.utils.prerequisites import get_web_dir
from reflex.vars.base import Var, VarData
from reflex.vars.object import ObjectVar

from wallet_app.core.config import REPO_ROOT
from wallet_app.core.files import write_if_changed
from wallet_app.services import chain as chains
from wallet_app.services.chain import ChainConfig

CHAIN_TABLE_PATH = Path("public", "external", "wallet_app", "services", "chain_table.js")
CHAIN_TABLE_MODULE = "$/" + CHAIN_TABLE_PATH.as_posix()  # "$": the web folder, in the bundle's imports
# Where older checkouts wrote it: Reflex copies assets/ over public/ when the copy there is newer.
SHARED_COPY = REPO_ROOT / "assets" / "external" / "wallet_app" / "services" / "chain_table.js"


def chain_table_file() -> Path:
    """The table module of the build this process compiles (its web folder, as Reflex finds it)."""
    return Path.cwd() / get_web_dir() / CHAIN_TABLE_PATH


def chain_table(configured: list[ChainConfig]) -> dict[str, dict]:
    """chain id (decimal string) -> what the browser checks and shows for that chain."""
    return {
        str(c.chain_id): {
            "payment_contract": c.payment_contract,
            "native_symbol": c.native_symbol,
            "native_decimals": c.native_decimals,
        }
        for c in configured
    }


def write_chain_table_module(path: Path | None = None, configured: list[ChainConfig] | None = None) -> None:
    path = path or chain_table_file()
    table = chain_table(chains.get_chains() if configured is None else configured)
    write_if_changed(path, f"export const CHAINS = Object.freeze({json.dumps(table, sort_keys=True)});\n".encode())


def chains_var() -> ObjectVar:
    """The table as the page code's import of the generated module (written now, at build)."""
    SHARED_COPY.unlink(missing_ok=True)
    write_chain_table_module()
    imports = {CHAIN_TABLE_MODULE: [ImportVar(tag="CHAINS")]}
    var: Var = Var(_js_expr="CHAINS", _var_type=dict[str, dict], _var_data=VarData(imports=imports))
    return var.to(ObjectVar, dict[str, dict])
