"""A real anvil (fresh, in memory, free port) with the contracts deployed, for the whole session."""

import json
from pathlib import Path

import pytest
from eth_account import Account
from web3 import Web3

from contracts.deploy import DEV_DEPLOYER_KEY, deploy, fund
from wallet_app.core.config import REPO_ROOT
from wallet_app.dev.anvil import Anvil
from wallet_app.services.chain import get_chain, load_chains


@pytest.fixture(scope="session")
def anvil_node():
    with Anvil(port=0, start_timeout=20) as node:
        yield node


@pytest.fixture(scope="session")
def deployments_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("deployments")


@pytest.fixture(scope="session")
def deployed(anvil_node, deployments_dir) -> dict:
    return deploy(anvil_node.url, deployments_dir)


@pytest.fixture(scope="session")
def chains_file(anvil_node, tmp_path_factory) -> Path:
    """chains.dev.json as shipped, pointed at the test node."""
    entries = json.loads((REPO_ROOT / "chains.dev.json").read_text())
    for e in entries:
        e["rpc_url"] = anvil_node.url
    path = tmp_path_factory.mktemp("config") / "chains.json"
    path.write_text(json.dumps(entries))
    return path


@pytest.fixture(scope="session")
def chain(deployed, chains_file, deployments_dir):
    return get_chain(31337, load_chains(chains_file, deployments_dir))


@pytest.fixture(scope="session")
def w3(anvil_node) -> Web3:
    return Web3(Web3.HTTPProvider(anvil_node.url, request_kwargs={"timeout": 10}))


@pytest.fixture
def funded(anvil_node, deployed, deployments_dir):
    """A new account with 1 ETH and 1,000 of each test token from the dev faucet."""
    acct = Account.create()
    fund(anvil_node.url, acct.address, deployments_dir)
    return acct


@pytest.fixture(scope="session")
def deployer():
    return Account.from_key(DEV_DEPLOYER_KEY)


@pytest.fixture(scope="session")
def send_tx(w3):
    """send_tx(acct, to, data, value): signs a legacy transaction locally, sends it, returns the receipt."""
    return lambda acct, to, data="0x", value=0: _send(w3, acct, to, data, value)


def _send(w3: Web3, acct, to: str, data: str, value: int) -> dict:
    tx = {"to": to, "data": data, "value": value, "chainId": w3.eth.chain_id, "gasPrice": w3.eth.gas_price,
          "nonce": w3.eth.get_transaction_count(acct.address, "pending")}
    tx["gas"] = w3.eth.estimate_gas({**tx, "from": acct.address})
    signed = acct.sign_transaction(tx)
    return w3.eth.wait_for_transaction_receipt(w3.eth.send_raw_transaction(signed.raw_transaction), timeout=30)
