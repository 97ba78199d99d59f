"""A real network by configuration (issue 14 item 2): an anvil started with Ethereum Sepolia's chain
id stands in for the public network (the canonical Multicall3 and Circle's USDC put at their real
addresses); `python -m contracts.deploy --rpc URL --chain-id N` deploys there with the key from
DEPLOYER_PRIVATE_KEY, idempotently; the app on chains.testnets.json quotes a payment against it."""

import json
import os
import subprocess
import sys

import pytest
from eth_account import Account
from web3 import Web3

from contracts.artifacts import artifact
from contracts.deploy import CANONICAL_MULTICALL3, _deploy_contract, code_hash, deployments_path
from wallet_app.core.config import ANVIL_PUBLIC_KEYS, REPO_ROOT, get_settings
from wallet_app.dev import faucet
from wallet_app.dev.anvil import Anvil
from wallet_app.services import chain as chain_svc

SEPOLIA = 11155111
SEPOLIA_USDC = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"  # chains.testnets.json
TOKEN_ABI = artifact("TestToken")["abi"]


def rpc(w3: Web3, method: str, *params) -> None:
    answer = w3.provider.make_request(method, list(params))  # type: ignore[arg-type]
    assert "error" not in answer, answer


def copy_contract(w3: Web3, source: str, target: str, slots: int = 0) -> None:
    """Puts `source`'s code and first storage slots at `target`: what the public chain has there."""
    rpc(w3, "anvil_setCode", target, "0x" + bytes(w3.eth.get_code(source)).hex())
    for slot in range(slots):
        rpc(w3, "anvil_setStorageAt", target, hex(slot), "0x" + bytes(w3.eth.get_storage_at(source, slot)).hex())


@pytest.fixture(scope="module")
def sepolia():
    """A 'public' Sepolia: anvil with its chain id, Multicall3 at the canonical address and an
    ERC-20 'USDC' at Circle's address (OpenZeppelin's ERC20 + Ownable: slots 0-5 hold the supply,
    name, symbol and owner, so the token's minter is `minter`)."""
    with Anvil(port=0, chain_id=SEPOLIA, start_timeout=20) as node:
        w3 = Web3(Web3.HTTPProvider(node.url, request_kwargs={"timeout": 10}))
        minter = Account.create()
        rpc(w3, "anvil_setBalance", minter.address, hex(10**20))
        copy_contract(w3, _deploy_contract(w3, minter.key.hex(), "Multicall3"), CANONICAL_MULTICALL3)
        copy_contract(w3, _deploy_contract(w3, minter.key.hex(), "PlainTestToken", "USDC", "USDC"), SEPOLIA_USDC, 6)
        yield node, w3, minter


@pytest.fixture(scope="module")
def deployer(sepolia):
    _node, w3, _minter = sepolia
    acct = Account.create()
    rpc(w3, "anvil_setBalance", acct.address, hex(10**18))
    return acct


def run_deploy(*args: str, key: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DEPLOYER_PRIVATE_KEY"}
    if key is not None:
        env["DEPLOYER_PRIVATE_KEY"] = key
    return subprocess.run([sys.executable, "-m", "contracts.deploy", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


@pytest.fixture(scope="module")
def recorded(sepolia, deployer, tmp_path_factory):
    """The deploy command run once against the 'public' chain: (deployments dir, its output)."""
    node, w3, _ = sepolia
    out_dir = tmp_path_factory.mktemp("deployments")
    done = run_deploy("--rpc", node.url, "--chain-id", str(SEPOLIA), "--deployments-dir", str(out_dir),
                      key=deployer.key.hex())
    assert done.returncode == 0, done.stderr
    return out_dir, done


def test_deploy_records_the_payment_contract_and_uses_the_canonical_multicall(sepolia, deployer, recorded):
    _node, w3, _ = sepolia
    out_dir, done = recorded
    result = json.loads(done.stdout)
    assert json.loads(deployments_path(SEPOLIA, out_dir).read_text()) == result
    assert result == {"chain_id": SEPOLIA, "deployer": deployer.address, "multicall": CANONICAL_MULTICALL3,
                      "payment": result["payment"], "payment_code_hash": code_hash("NewblPayment2"), "tokens": {}}
    assert len(w3.eth.get_code(result["payment"])) > 0
    assert w3.eth.get_transaction_count(deployer.address) == 1  # NewblPayment2 only: no Multicall3, no test tokens
    assert deployer.key.hex().removeprefix("0x") not in (done.stdout + done.stderr).lower()


def test_re_running_the_deploy_changes_nothing(sepolia, deployer, recorded):
    node, w3, _ = sepolia
    out_dir, first = recorded
    before = deployments_path(SEPOLIA, out_dir).read_text()
    again = run_deploy("--rpc", node.url, "--chain-id", str(SEPOLIA), "--deployments-dir", str(out_dir),
                       key=deployer.key.hex())
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert deployments_path(SEPOLIA, out_dir).read_text() == before
    assert w3.eth.get_transaction_count(deployer.address) == 1  # nothing sent


@pytest.mark.parametrize(
    "chain_id,key,message",
    [
        (1, "fresh", "refused: the node at --rpc is chain 11155111, not 1: nothing deployed"),
        (SEPOLIA, None,
         "refused: DEPLOYER_PRIVATE_KEY is not set: the deployer's key (it pays the gas) comes from it."),
        (SEPOLIA, "0x1234",
         "refused: DEPLOYER_PRIVATE_KEY is not a private key: set it to 64 hex digits (0x optional)."),
        (SEPOLIA, ANVIL_PUBLIC_KEYS[0],
         "refused: DEPLOYER_PRIVATE_KEY is one of anvil's public test keys: use a key of your own."),
    ],
)
def test_refusals_send_nothing(sepolia, tmp_path, chain_id, key, message):
    node, w3, _ = sepolia
    acct = Account.create()
    rpc(w3, "anvil_setBalance", acct.address, hex(10**18))
    done = run_deploy("--rpc", node.url, "--chain-id", str(chain_id), "--deployments-dir", str(tmp_path),
                      key=acct.key.hex() if key == "fresh" else key)
    assert (done.returncode, done.stderr.strip(), done.stdout) == (2, message, "")
    assert w3.eth.get_transaction_count(acct.address) == 0 and not list(tmp_path.iterdir())


def test_a_chain_without_multicall3_gets_one(tmp_path):
    with Anvil(port=0, chain_id=84532, start_timeout=20) as node:
        w3 = Web3(Web3.HTTPProvider(node.url, request_kwargs={"timeout": 10}))
        acct = Account.create()
        rpc(w3, "anvil_setBalance", acct.address, hex(10**18))
        done = run_deploy("--rpc", node.url, "--chain-id", "84532", "--deployments-dir", str(tmp_path),
                          key=acct.key.hex())
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["multicall"] != CANONICAL_MULTICALL3 and len(w3.eth.get_code(result["multicall"])) > 0
        assert w3.eth.get_transaction_count(acct.address) == 2  # Multicall3 and NewblPayment2


@pytest.fixture
def on_testnets(settings_env, sepolia, recorded, monkeypatch):
    """The app's settings on chains.testnets.json as shipped, Sepolia's RPC the 'public' anvil."""
    node, _w3, _ = sepolia
    monkeypatch.setenv("CHAINS_FILE", str(REPO_ROOT / "chains.testnets.json"))
    monkeypatch.setenv("DEPLOYMENTS_DIR", str(recorded[0]))
    monkeypatch.setenv("SEPOLIA_RPC_URL", node.url)
    monkeypatch.setenv("BASE_SEPOLIA_RPC_URL", "http://127.0.0.1:9")  # not used here
    get_settings.cache_clear()
    chain_svc._chains_cache = None  # the variables changed, not the files
    yield
    chain_svc._chains_cache = None
    chain_svc._clients.clear()
    assert faucet.wait_idle()


def test_the_app_quotes_a_payment_on_the_testnet(on_testnets, client, login, sepolia, recorded):
    _node, w3, minter = sepolia
    payer = Account.create()
    login(f"{payer.address.lower()}@example.com")
    assert client.post("/api/v1/me/address", json={"address": payer.address}).status_code == 200
    usdc = w3.eth.contract(address=SEPOLIA_USDC, abi=TOKEN_ABI)
    tx = usdc.functions.mint(payer.address, 25 * 10**6).build_transaction(
        {"from": minter.address, "nonce": w3.eth.get_transaction_count(minter.address), "gasPrice": w3.eth.gas_price})
    sent = w3.eth.send_raw_transaction(minter.sign_transaction(tx).raw_transaction)
    assert w3.eth.wait_for_transaction_receipt(sent, timeout=30)["status"] == 1

    r = client.get("/api/v1/payment/available",
                   params={"chain_id": SEPOLIA, "token_address": SEPOLIA_USDC, "amount": str(10 * 10**6)})
    assert r.status_code == 200, r.text
    quote = r.json()
    payment = json.loads(deployments_path(SEPOLIA, recorded[0]).read_text())["payment"]
    # Enough USDC, no allowance yet: an approve of the deployed NewblPayment2 on chain 11155111.
    assert (quote["available"], quote["reason"], quote["verifying_contract"]) == (False, "allowance_short", payment)
    assert (quote["transaction"]["chain_id"], quote["transaction"]["to"]) == (str(SEPOLIA), SEPOLIA_USDC)
    # The seeded token list reads the balance through the canonical Multicall3 (Base Sepolia's RPC is
    # down here: that chain contributes nothing).
    usdc_rows = [(a["chain_id"], a["token_symbol"], a["balance"]) for a in client.get("/api/v1/assets").json()
                 if a["token_address"] == SEPOLIA_USDC]
    assert usdc_rows == [(SEPOLIA, "USDC", str(25 * 10**6))]
