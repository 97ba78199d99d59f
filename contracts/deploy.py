"""Deploy the development contracts (idempotent) and fund addresses from the dev faucet.

    python -m contracts.deploy [--rpc http://127.0.0.1:8545] [--fund 0xADDRESS]

Deployments are recorded in <deployments_dir>/deployments-<chain_id>.json:
    {"chain_id", "deployer", "multicall", "payment", "payment_code_hash", "tokens": {"tUSD": addr, "tKRW": addr}}
A re-run against the same chain reuses every address that still has code there and
deploys only what is missing (a fresh anvil without its state file has none). The payment
contract is also redeployed when its recorded code hash (keccak of the compiled creation
code) is not the current build's: a developer's saved anvil state may hold an older
NewblPayment2 (e.g. the one with a global used-set, before issue 12).
The deployer is anvil's first development account; never use this script on a real chain.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any, cast

from eth_account import Account
from eth_utils import keccak
from web3 import Web3
from web3.types import TxParams, TxReceipt

from contracts.artifacts import REPO_ROOT, artifact, compile_contracts

DEFAULT_DEPLOYMENTS_DIR = REPO_ROOT / "data"

# anvil's account 0 of the well-known "test test ... junk" development mnemonic.
DEV_DEPLOYER_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

TEST_TOKENS = [("tUSD", "Newbl Test USD"), ("tKRW", "Newbl Test KRW")]
TOKEN_DECIMALS = 6
FAUCET_ETH_WEI = 10**18
FAUCET_TOKEN_UNITS = 1_000 * 10**TOKEN_DECIMALS

_tx_lock = threading.Lock()  # one deployer nonce sequence per process (faucet calls may overlap)


def deployments_path(chain_id: int, deployments_dir: Path | None = None) -> Path:
    return Path(deployments_dir or DEFAULT_DEPLOYMENTS_DIR) / f"deployments-{chain_id}.json"


def load_deployments(chain_id: int, deployments_dir: Path | None = None) -> dict | None:
    path = deployments_path(chain_id, deployments_dir)
    return json.loads(path.read_text()) if path.exists() else None


def _w3(rpc_url: str) -> Web3:
    return Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 30}, exception_retry_configuration=None))


def _send(w3: Web3, key: str, tx: dict[str, Any]) -> TxReceipt:
    """Signs with the deployer key (no unlocked node accounts needed) and waits for success."""
    acct = Account.from_key(key)
    tx = {
        **tx,
        "from": acct.address,
        "chainId": w3.eth.chain_id,
        "nonce": w3.eth.get_transaction_count(acct.address, "pending"),
        "gasPrice": w3.eth.gas_price,
    }
    tx.setdefault("value", 0)
    tx["gas"] = w3.eth.estimate_gas(cast(TxParams, tx))  # the fields of a legacy transaction
    signed = acct.sign_transaction(tx)
    receipt = w3.eth.wait_for_transaction_receipt(w3.eth.send_raw_transaction(signed.raw_transaction), timeout=60)
    if receipt["status"] != 1:
        raise RuntimeError(f"transaction failed: {receipt['transactionHash'].hex()}")
    return receipt


def _deploy_contract(w3: Web3, key: str, name: str, *args) -> str:
    art = artifact(name)
    data = w3.eth.contract(abi=art["abi"], bytecode=art["bytecode"]).constructor(*args).data_in_transaction
    receipt = _send(w3, key, {"data": data})
    address = receipt["contractAddress"]
    if address is None:
        raise RuntimeError(f"deploying {name} created no contract")
    return Web3.to_checksum_address(address)


def _has_code(w3: Web3, address: str | None) -> bool:
    if not address:
        return False
    return len(w3.eth.get_code(Web3.to_checksum_address(address))) > 0


def code_hash(name: str) -> str:
    """keccak of a contract's compiled creation code: which build a deployment came from."""
    return "0x" + keccak(hexstr=artifact(name)["bytecode"]).hex()


def deploy(rpc_url: str, deployments_dir: Path | None = None, key: str = DEV_DEPLOYER_KEY) -> dict:
    """Compiles if needed, deploys whatever is missing on this chain, records and returns the addresses."""
    compile_contracts()
    w3 = _w3(rpc_url)
    chain_id = w3.eth.chain_id
    old = load_deployments(chain_id, deployments_dir) or {}
    old_tokens = old.get("tokens", {})
    with _tx_lock:
        multicall = (
            old.get("multicall") if _has_code(w3, old.get("multicall")) else _deploy_contract(w3, key, "Multicall3")
        )
        payment_hash = code_hash("NewblPayment2")
        current = old.get("payment_code_hash") == payment_hash and _has_code(w3, old.get("payment"))
        payment = old.get("payment") if current else _deploy_contract(w3, key, "NewblPayment2")
        tokens = {}
        for symbol, name in TEST_TOKENS:
            addr = old_tokens.get(symbol)
            tokens[symbol] = addr if _has_code(w3, addr) else _deploy_contract(w3, key, "TestToken", name, symbol)
    result = {
        "chain_id": chain_id,
        "deployer": Account.from_key(key).address,
        "multicall": multicall,
        "payment": payment,
        "payment_code_hash": payment_hash,
        "tokens": tokens,
    }
    if result != old:
        path = deployments_path(chain_id, deployments_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(path)  # readers never see a half-written file
    return result


def fund(
    rpc_url: str,
    address: str,
    deployments_dir: Path | None = None,
    key: str = DEV_DEPLOYER_KEY,
    eth_wei: int = FAUCET_ETH_WEI,
    token_units: int = FAUCET_TOKEN_UNITS,
) -> list[str]:
    """Dev faucet: sends gas and mints every test token to `address`. Returns the tx hashes."""
    w3 = _w3(rpc_url)
    to = Web3.to_checksum_address(address)
    deployed = load_deployments(w3.eth.chain_id, deployments_dir)
    if not deployed:
        raise RuntimeError(f"no deployments for chain {w3.eth.chain_id}: run deploy first")
    abi = artifact("TestToken")["abi"]
    hashes = []
    with _tx_lock:
        if eth_wei:
            hashes.append(_send(w3, key, {"to": to, "value": eth_wei})["transactionHash"])
        for token in deployed["tokens"].values():
            data = w3.eth.contract(address=token, abi=abi).encode_abi("mint", [to, token_units])
            hashes.append(_send(w3, key, {"to": token, "data": data})["transactionHash"])
    return ["0x" + bytes(h).hex() for h in hashes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rpc", default="http://127.0.0.1:8545")
    parser.add_argument("--deployments-dir", type=Path, default=DEFAULT_DEPLOYMENTS_DIR)
    parser.add_argument("--fund", metavar="ADDRESS", help="also send gas and test tokens to this address")
    args = parser.parse_args(argv)
    print(json.dumps(deploy(args.rpc, args.deployments_dir), indent=2))
    if args.fund:
        print("funded:", *fund(args.rpc, args.fund, args.deployments_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
