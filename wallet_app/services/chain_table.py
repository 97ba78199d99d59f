"""The chains table shipped in the browser bundle at build time, for the PIN dialog's re-checks
(custom_components/wallet_js/keyring.js): chain id -> {payment_contract, native_symbol,
native_decimals}, from the chains file and its deployments resolved as services.chain.get_chains()
resolves them. A generated module under assets/external (not committed), like the catalogues:
the browser checks what it signs against this table, never against what the server says later."""

from __future__ import annotations

import json

from reflex.utils.imports import ImportVar
from reflex.vars.base import Var, VarData
from reflex.vars.object import ObjectVar

from wallet_app.core.config import REPO_ROOT
from wallet_app.i18n import write_generated_module
from wallet_app.services import chain as chains
from wallet_app.services.chain import ChainConfig

CHAIN_TABLE_FILE = REPO_ROOT / "assets" / "external" / "wallet_app" / "services" / "chain_table.js"
CHAIN_TABLE_MODULE = "$/public/external/wallet_app/services/chain_table.js"


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


def write_chain_table_module(path=CHAIN_TABLE_FILE, configured: list[ChainConfig] | None = None) -> None:
    table = chain_table(chains.get_chains() if configured is None else configured)
    write_generated_module(path, f"export const CHAINS = Object.freeze({json.dumps(table, sort_keys=True)});\n")


def chains_var() -> ObjectVar:
    """The table as the page code's import of the generated module (written now, at build)."""
    write_chain_table_module()
    imports = {CHAIN_TABLE_MODULE: [ImportVar(tag="CHAINS")]}
    var: Var = Var(_js_expr="CHAINS", _var_type=dict[str, dict], _var_data=VarData(imports=imports))
    return var.to(ObjectVar, dict[str, dict])
