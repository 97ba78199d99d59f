"""The chains table the browser bundle ships (wallet_app/services/chain_table.py): built from the
chains file and its deployments as services.chain resolves them, a module node can import."""

import json
import re
import subprocess

from wallet_app.services.chain import load_chains
from wallet_app.services.chain_table import CHAIN_TABLE_PATH, SHARED_COPY, chains_var, write_chain_table_module

PAYMENT = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"


def _chains(tmp_path):
    chain = {"chain_id": 31337, "chain_name": "Dev", "rpc_url": "http://127.0.0.1:1",
             "multicall_address": "deployments:multicall", "payment_contract": "deployments:payment",
             "native_symbol": "ETH", "tokens": [{"token_address": "deployments:tokens.tUSD", "token_symbol": "tUSD",
                                                 "token_decimals": 6}]}
    literal = {**chain, "chain_id": 5, "multicall_address": "0xcA11bde05977b3631167028862bE2a173976CA11",
               "payment_contract": None, "native_symbol": "GO", "native_decimals": 9, "tokens": []}
    undeployed = {**chain, "chain_id": 7}
    (tmp_path / "chains.json").write_text(json.dumps([chain, literal, undeployed]))
    (tmp_path / "deployments-31337.json").write_text(json.dumps({
        "multicall": "0x" + "11" * 20, "payment": PAYMENT.lower(), "tokens": {"tUSD": "0x" + "22" * 20}}))
    return load_chains(tmp_path / "chains.json", tmp_path)


def test_the_module_holds_the_resolved_payment_contracts(tmp_path):
    path = tmp_path / "chain_table.mjs"
    write_chain_table_module(path, _chains(tmp_path))
    (table,) = re.findall(r"^export const CHAINS = Object.freeze\((.*)\);\n$", path.read_text())
    assert json.loads(table) == {
        "31337": {"payment_contract": PAYMENT, "native_symbol": "ETH", "native_decimals": 18},
        "5": {"payment_contract": None, "native_symbol": "GO", "native_decimals": 9},
    }  # chain 7 is not deployed yet: left out, so the browser refuses to sign for it
    script = f"import({json.dumps(path.as_uri())}).then(m => console.log(JSON.stringify(m.CHAINS)))"
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(out) == json.loads(table)
    stamp = path.stat().st_mtime_ns
    write_chain_table_module(path, _chains(tmp_path))
    assert path.stat().st_mtime_ns == stamp  # rewritten only on change


def test_pages_import_the_table_instead_of_inlining_it(tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web"))
    var = chains_var()
    assert str(var) == "CHAINS"
    assert "$/public/external/wallet_app/services/chain_table.js" in str(var._get_all_var_data().imports)
    assert (tmp_path / "web" / "public" / "external" / "wallet_app" / "services" / "chain_table.js").is_file()
    assert not SHARED_COPY.exists()  # an older checkout's copy, which Reflex would copy over it, is gone


def test_each_build_writes_its_own_table_in_its_web_folder(tmp_path, monkeypatch):
    """Two servers compiling at once with other chains: neither's table reaches the other's
    build (in CI a test with no deployments once gave a server's bundle `{}` through assets/)."""
    deployed = _chains(tmp_path)
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web-a"))
    write_chain_table_module(configured=deployed)
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web-b"))
    write_chain_table_module(configured=[])
    tables = {name: (tmp_path / name / CHAIN_TABLE_PATH).read_text() for name in ("web-a", "web-b")}
    assert PAYMENT in tables["web-a"]
    assert tables["web-b"] == "export const CHAINS = Object.freeze({});\n"
