"""The chains-file loader's ${NAME} substitution (services/chain.expand_env), table tests, and the
shipped chains files loading with their variables set."""

import json

import pytest

from wallet_app.core.config import REPO_ROOT
from wallet_app.errors import AppError
from wallet_app.services.chain import expand_env, load_chains

ENV = {"RPC": "https://rpc.example/v2/k3y", "HOST": "node", "PORT": "8545", "EMPTY": ""}


@pytest.mark.parametrize(
    "value,expanded",
    [
        ("${RPC}", "https://rpc.example/v2/k3y"),
        ("http://${HOST}:${PORT}/", "http://node:8545/"),  # several, inside a string
        ("$RPC and $$ and ${ not a name} and ${1X}", "$RPC and $$ and ${ not a name} and ${1X}"),  # left alone
        ("no variables", "no variables"),
        (31337, 31337),
        (None, None),
        (1.5, 1.5),
        ({"rpc_url": "${RPC}", "tokens": [{"token_symbol": "${HOST}"}], "n": 6},
         {"rpc_url": "https://rpc.example/v2/k3y", "tokens": [{"token_symbol": "node"}], "n": 6}),
    ],
)
def test_expand_env(value, expanded):
    assert expand_env(value, ENV) == expanded


@pytest.mark.parametrize("value,name", [("${MISSING}", "MISSING"), ("x${EMPTY}", "EMPTY"),
                                        ({"a": ["${PORT}", "${NOPE}"]}, "NOPE")])
def test_an_unset_or_empty_variable_is_named(value, name):
    with pytest.raises(ValueError, match=f"^environment variable {name} is not set$"):
        expand_env(value, ENV)


def test_the_loader_refuses_a_file_with_an_unset_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("NEWBL_TEST_UNSET_RPC", raising=False)
    entry = json.loads((REPO_ROOT / "chains.testnets.json").read_text())[0]
    path = tmp_path / "chains.json"
    path.write_text(json.dumps([{**entry, "rpc_url": "${NEWBL_TEST_UNSET_RPC}"}]))
    with pytest.raises(AppError) as exc:
        load_chains(path, tmp_path)
    assert exc.value.code == "bad_config"
    assert "environment variable NEWBL_TEST_UNSET_RPC is not set" in str(exc.value)


def test_variables_come_from_dotenv_too_the_environment_first(tmp_path, monkeypatch):
    """As the settings read them: an operator's `.env` (in the directory the server starts in)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEPOLIA_RPC_URL", raising=False)
    monkeypatch.setenv("BASE_SEPOLIA_RPC_URL", "https://from-the-environment.example")
    (tmp_path / ".env").write_text("SEPOLIA_RPC_URL=https://from-dotenv.example/key\n"
                                   "BASE_SEPOLIA_RPC_URL=https://overridden.example\n")
    sepolia, base = load_chains(REPO_ROOT / "chains.testnets.json", tmp_path)
    assert (sepolia.rpc_url, base.rpc_url) == ("https://from-dotenv.example/key", "https://from-the-environment.example")


def test_the_testnets_file_loads_with_its_rpc_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("SEPOLIA_RPC_URL", "https://sepolia.example/v3/key")
    monkeypatch.setenv("BASE_SEPOLIA_RPC_URL", "https://base-sepolia.example/key")
    (tmp_path / "deployments-11155111.json").write_text(json.dumps({"payment": "0x" + "11" * 20}))
    sepolia, base = load_chains(REPO_ROOT / "chains.testnets.json", tmp_path)
    assert (sepolia.chain_id, sepolia.rpc_url) == (11155111, "https://sepolia.example/v3/key")
    assert (base.chain_id, base.rpc_url) == (84532, "https://base-sepolia.example/key")
    assert sepolia.multicall_address == base.multicall_address == "0xcA11bde05977b3631167028862bE2a173976CA11"
    # Circle's USDC (developers.circle.com/stablecoins/usdc-contract-addresses), payable.
    assert [(t.token_symbol, t.token_address, t.token_decimals) for t in sepolia.tokens] == [
        ("USDC", "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", 6)]
    assert [(t.token_symbol, t.token_address, t.token_decimals) for t in base.tokens] == [
        ("USDC", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", 6)]
    assert sepolia.payment_tokens == ("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",)
    assert base.payment_tokens == ("0x036CbD53842c5426634e7929541eC2318f3dCF7e",)
    # The payment contract comes from `python -m contracts.deploy` (recorded for Sepolia only here).
    assert sepolia.payment_contract == "0x" + "11" * 20 and base.payment_contract is None
    # Base is an OP-stack chain: every transaction pays an L1 data fee on top (chain.l1_fee).
    assert (sepolia.l1_fee_oracle, base.l1_fee_oracle) == (None, "0x420000000000000000000000000000000000000F")


@pytest.mark.parametrize("written, budget", [
    ({}, 10**17),  # absent: the default, 0.1 ETH an hour
    ({"relayer_max_spend_wei_per_hour": None}, None),  # null: no budget
    ({"relayer_max_spend_wei_per_hour": 5 * 10**15}, 5 * 10**15),
    ({"relayer_max_spend_wei_per_hour": "7"}, 7),
    ({"relayer_max_spend_wei_per_hour": 0}, "bad_config"),
    ({"relayer_max_spend_wei_per_hour": -1}, "bad_config"),
    ({"relayer_max_spend_wei_per_hour": "lots"}, "bad_config"),
])
def test_the_relayer_budget_per_chain(tmp_path, written, budget):
    entry = {"chain_id": 8453, "chain_name": "Base", "rpc_url": "https://mainnet.base.org",
             "multicall_address": "0xcA11bde05977b3631167028862bE2a173976CA11", "tokens": [], **written}
    path = tmp_path / "chains.json"
    path.write_text(json.dumps([entry]))
    if budget == "bad_config":
        with pytest.raises(AppError) as exc:
            load_chains(path, tmp_path)
        assert exc.value.code == "bad_config"
    else:
        (chain,) = load_chains(path, tmp_path)
        assert chain.relayer_max_spend_wei_per_hour == budget
