import json
import shutil
import time

import pytest
from eth_account import Account
from web3.exceptions import ProviderConnectionError, RequestTimedOut

from contracts.deploy import code_hash, deploy, deployments_path
from wallet_app.errors import AppError
from wallet_app.services import chain as chain_mod
from wallet_app.services.chain import get_chain, load_chains
from wallet_app.services.eth import ZERO_ADDRESS


def test_deploy_is_idempotent(anvil_node, deployed, deployments_dir, w3):
    path = deployments_path(31337, deployments_dir)
    before = path.read_text()
    again = deploy(anvil_node.url, deployments_dir)
    assert again == deployed
    assert path.read_text() == before
    assert json.loads(before) == deployed
    for addr in [deployed["multicall"], deployed["payment"], *deployed["tokens"].values()]:
        assert len(w3.eth.get_code(addr)) > 0
    assert len(set([deployed["multicall"], deployed["payment"], *deployed["tokens"].values()])) == 5
    assert sorted(deployed["tokens"]) == ["tEUR", "tKRW", "tUSD"]
    assert deployed["token_code_hashes"] == {
        "tUSD": code_hash("TestToken"), "tKRW": code_hash("TestToken"), "tEUR": code_hash("PlainTestToken")}


def test_permit_is_detected_per_token(chain, deployed, anvil_node):
    """tUSD and tKRW have EIP-2612 permit (the domain checked against their DOMAIN_SEPARATOR());
    tEUR and a contract that is not a token have none."""
    usd = chain_mod.permit_domain(chain, deployed["tokens"]["tUSD"])
    assert usd == chain_mod.PermitDomain("Newbl Test USD", "1", 31337, deployed["tokens"]["tUSD"])
    assert chain_mod.permit_domain(chain, deployed["tokens"]["tKRW"]).name == "Newbl Test KRW"
    assert chain_mod.permit_domain(chain, deployed["tokens"]["tEUR"]) is None
    assert chain_mod.permit_domain(chain, deployed["payment"]) is None
    assert chain_mod.permit_nonce(chain, deployed["tokens"]["tUSD"], Account.create().address) == 0


def test_deploy_replaces_a_test_token_of_another_build(anvil_node, deployed, deployments_dir, tmp_path, w3):
    """A saved anvil state may hold the tokens of before permit: recorded without a code hash, they are redeployed."""
    shutil.copy(deployments_path(31337, deployments_dir), tmp_path)
    recorded = json.loads(deployments_path(31337, tmp_path).read_text())
    del recorded["token_code_hashes"]
    deployments_path(31337, tmp_path).write_text(json.dumps(recorded))
    result = deploy(anvil_node.url, tmp_path)
    assert all(result["tokens"][s] != deployed["tokens"][s] for s in deployed["tokens"])
    assert result["token_code_hashes"] == deployed["token_code_hashes"]
    assert deploy(anvil_node.url, tmp_path) == result  # and from then on they are kept


def test_deploy_redeploys_only_what_has_no_code(anvil_node, deployed, deployments_dir, tmp_path, w3):
    shutil.copy(deployments_path(31337, deployments_dir), tmp_path)
    recorded = json.loads(deployments_path(31337, tmp_path).read_text())
    recorded["tokens"]["tUSD"] = Account.create().address  # no code there
    deployments_path(31337, tmp_path).write_text(json.dumps(recorded))
    result = deploy(anvil_node.url, tmp_path)
    assert result["tokens"]["tUSD"] not in (recorded["tokens"]["tUSD"], deployed["tokens"]["tUSD"])
    assert len(w3.eth.get_code(result["tokens"]["tUSD"])) > 0
    assert {k: v for k, v in result.items() if k != "tokens"} == {k: v for k, v in deployed.items() if k != "tokens"}
    assert result["tokens"]["tKRW"] == deployed["tokens"]["tKRW"]
    assert json.loads(deployments_path(31337, tmp_path).read_text()) == result


def test_deploy_replaces_a_payment_contract_of_another_build(anvil_node, deployed, deployments_dir, tmp_path, w3):
    """A developer's saved anvil state may hold the NewblPayment2 of before issue 12 (global
    used-set): it has code, but its recorded code hash (none, in files of then) is not this build's."""
    shutil.copy(deployments_path(31337, deployments_dir), tmp_path)
    recorded = json.loads(deployments_path(31337, tmp_path).read_text())
    del recorded["payment_code_hash"]
    deployments_path(31337, tmp_path).write_text(json.dumps(recorded))
    result = deploy(anvil_node.url, tmp_path)
    assert result["payment"] != deployed["payment"] and len(w3.eth.get_code(result["payment"])) > 0
    assert result["payment_code_hash"] == deployed["payment_code_hash"] == code_hash("NewblPayment2")
    assert {k: v for k, v in result.items() if k != "payment"} == {k: v for k, v in deployed.items() if k != "payment"}
    assert json.loads(deployments_path(31337, tmp_path).read_text()) == result
    assert deploy(anvil_node.url, tmp_path) == result  # and from then on it is kept


def test_config_placeholders_resolve_from_deployments(chain, deployed, anvil_node):
    assert chain.rpc_url == anvil_node.url
    assert chain.multicall_address == deployed["multicall"]
    assert chain.payment_contract == deployed["payment"]
    assert [(t.token_symbol, t.token_address, t.token_decimals) for t in chain.tokens] == [
        ("tUSD", deployed["tokens"]["tUSD"], 6), ("tKRW", deployed["tokens"]["tKRW"], 6)]
    assert chain.native_token().token_address == ZERO_ADDRESS
    with pytest.raises(AppError) as exc:
        get_chain(1, [chain])
    assert exc.value.code == "unsupported_chain"


def test_chain_without_deployments_is_left_out_and_literal_chains_load(chains_file, tmp_path):
    entries = json.loads(chains_file.read_text())
    entries.append({
        "chain_id": 8453, "chain_name": "Base", "rpc_url": "https://mainnet.base.org",
        "multicall_address": "0xcA11bde05977b3631167028862bE2a173976CA11", "payment_contract": None,
        "native_symbol": "ETH", "native_decimals": 18, "explorer_url": "https://basescan.org",
        "tokens": [{"token_address": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "token_symbol": "USDC",
                    "token_name": "USD Coin", "token_decimals": 6}],
    })
    path = tmp_path / "chains.json"
    path.write_text(json.dumps(entries))
    chains = load_chains(path, tmp_path / "no-deployments-here")
    assert [c.chain_id for c in chains] == [8453]
    assert chains[0].tokens[0].token_address == "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    # No relayer limits written: nothing is payable, the caps and floor are the defaults.
    assert chains[0].payment_tokens == ()
    assert (chains[0].max_pay_gas, chains[0].max_gas_price_wei, chains[0].max_gas_price_multiple,
            chains[0].relayer_min_balance_wei) == (300_000, 500 * 10**9, 3.0, 10**16)
    assert chains[0].index_confirmations == 5  # the indexer's default distance from the head

    entries[-1].update(payment_tokens=["0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"], max_pay_gas=150_000,
                       max_gas_price_wei=10**11, max_gas_price_multiple=1.5, relayer_min_balance_wei=10**17,
                       index_confirmations=12)
    path.write_text(json.dumps(entries))
    (base,) = load_chains(path, tmp_path / "no-deployments-here")
    assert base.index_confirmations == 12
    assert base.payment_tokens == ("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",)
    assert (base.max_pay_gas, base.max_gas_price_wei, base.max_gas_price_multiple, base.relayer_min_balance_wei) == (
        150_000, 10**11, 1.5, 10**17)
    for bad in ({"max_gas_price_multiple": 0.5}, {"max_pay_gas": 0}, {"payment_tokens": ["0x12"]},
                {"index_confirmations": -1}):
        path.write_text(json.dumps([{**entries[-1], **bad}]))
        with pytest.raises(AppError) as exc:
            load_chains(path, tmp_path)
        assert exc.value.code == "bad_config"

    entries[-1]["multicall_address"] = "0x1234"
    path.write_text(json.dumps(entries))
    with pytest.raises(AppError) as exc:
        load_chains(path, tmp_path)
    assert exc.value.code == "bad_config"


def test_reads_retry_once_on_network_error():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise ProviderConnectionError("reset")
        return 7

    assert chain_mod._read(flaky) == 7 and len(calls) == 2

    def down():
        calls.append(1)
        raise RequestTimedOut("no answer")

    calls.clear()
    with pytest.raises(AppError) as exc:
        chain_mod._read(down)
    assert exc.value.code == "rpc_unavailable" and len(calls) == 2


def test_unreachable_rpc_gives_rpc_unavailable(chain):
    from dataclasses import replace

    from tools.ports import free_port

    dead = replace(chain, rpc_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(AppError) as exc:
        chain_mod.token_metadata(dead, chain.tokens[0].token_address)
    assert exc.value.code == "rpc_unavailable"


def test_get_chains_follows_settings_and_deployments(settings_env, chains_file, deployments_dir, deployed, tmp_path,
                                                     monkeypatch):
    from wallet_app.core.config import get_settings

    monkeypatch.setenv("CHAINS_FILE", str(chains_file))
    monkeypatch.setenv("DEPLOYMENTS_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        assert chain_mod.get_chains() == []  # nothing deployed there yet
        shutil.copy(deployments_path(31337, deployments_dir), tmp_path)
        # picked up without a restart, once the files are looked at again (every CHAINS_CHECK_SECONDS)
        end = time.monotonic() + 2 * chain_mod.CHAINS_CHECK_SECONDS
        while not chain_mod.get_chains() and time.monotonic() < end:
            time.sleep(0.05)
        (only,) = chain_mod.get_chains()
        assert only.payment_contract == deployed["payment"]
        assert get_chain(31337) == only
    finally:
        get_settings.cache_clear()
