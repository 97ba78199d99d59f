"""Deploy the contracts (idempotent): the development set with its faucet, or a real network's.

    python -m contracts.deploy [--rpc http://127.0.0.1:8545] [--fund 0xADDRESS]
    DEPLOYER_PRIVATE_KEY=0x... python -m contracts.deploy --rpc URL --chain-id N [--deployments-dir DIR]

The first form is development's: anvil's first account deploys Multicall3, NewblPayment2 and the
test tokens. The second is for a real network (an operator's): the node must be chain N (a check
against deploying on the wrong network), the deployer key comes from DEPLOYER_PRIVATE_KEY (never
printed; not one of anvil's public keys) and pays the gas; it deploys NewblPayment2, and Multicall3
only when the chain has no code at the canonical address 0xcA11bde05977b3631167028862bE2a173976CA11;
no test tokens.

Deployments are recorded in <deployments_dir>/deployments-<chain_id>.json:
    {"chain_id", "deployer", "multicall", "payment", "payment_code_hash",
     "tokens": {"tUSD": addr, "tKRW": addr, "tEUR": addr}, "token_code_hashes": {"tUSD": hash, ...}}
A re-run against the same chain reuses every address that still has code there and
deploys only what is missing (a fresh anvil without its state file has none). The payment
contract is also redeployed when its recorded code hash (keccak of the compiled creation
code) is not the current build's: a developer's saved anvil state may hold an older
NewblPayment2 (e.g. the one with a global used-set, before issue 12). A test token is
redeployed likewise when its recorded code hash is not its contract's current build (the
tokens before permit had none recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
# The deployer key of `--chain-id` (a real network), from the environment only.
DEPLOYER_KEY_ENV = "DEPLOYER_PRIVATE_KEY"
# Multicall3 at the same address on most EVM chains (github.com/mds1/multicall).
CANONICAL_MULTICALL3 = "0xcA11bde05977b3631167028862bE2a173976CA11"
# A public network takes longer than anvil to mine.
RECEIPT_TIMEOUT_SECONDS = 300

# (symbol, name, contract): tUSD and tKRW have EIP-2612 permit (gasless payments); tEUR has
# not, so the approve path of a payment stays exercised.
TEST_TOKENS = [
    ("tUSD", "Newbl Test USD", "TestToken"),
    ("tKRW", "Newbl Test KRW", "TestToken"),
    ("tEUR", "Newbl Test EUR", "PlainTestToken"),
]
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
    tx_hash = w3.eth.send_raw_transaction(signed.raw_transaction)
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=RECEIPT_TIMEOUT_SECONDS)
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


def deploy(
    rpc_url: str,
    deployments_dir: Path | None = None,
    key: str = DEV_DEPLOYER_KEY,
    *,
    chain_id: int | None = None,
    test_tokens: bool = True,
) -> dict:
    """Compiles if needed, deploys whatever is missing on this chain, records and returns the addresses.
    chain_id: refuse a node of another chain; test_tokens=False: a real network's set (no test tokens)."""
    compile_contracts()
    w3 = _w3(rpc_url)
    node_chain_id = w3.eth.chain_id
    if chain_id is not None and node_chain_id != chain_id:
        raise DeployError(f"the node at --rpc is chain {node_chain_id}, not {chain_id}: nothing deployed")
    old = load_deployments(node_chain_id, deployments_dir) or {}
    old_tokens = old.get("tokens", {})
    with _tx_lock:
        if _has_code(w3, old.get("multicall")):
            multicall = old["multicall"]
        elif _has_code(w3, CANONICAL_MULTICALL3):
            multicall = CANONICAL_MULTICALL3
        else:
            multicall = _deploy_contract(w3, key, "Multicall3")
        payment_hash = code_hash("NewblPayment2")
        current = old.get("payment_code_hash") == payment_hash and _has_code(w3, old.get("payment"))
        payment = old.get("payment") if current else _deploy_contract(w3, key, "NewblPayment2")
        tokens, token_hashes = {}, {}
        old_hashes = old.get("token_code_hashes", {})
        for symbol, name, contract_name in TEST_TOKENS if test_tokens else ():
            addr, token_hashes[symbol] = old_tokens.get(symbol), code_hash(contract_name)
            same = old_hashes.get(symbol) == token_hashes[symbol] and _has_code(w3, addr)
            tokens[symbol] = addr if same else _deploy_contract(w3, key, contract_name, name, symbol)
    result = {
        "chain_id": node_chain_id,
        "deployer": Account.from_key(key).address,
        "multicall": multicall,
        "payment": payment,
        "payment_code_hash": payment_hash,
        "tokens": tokens,
    }
    if test_tokens:
        result["token_code_hashes"] = token_hashes
    if result != old:
        path = deployments_path(node_chain_id, deployments_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(path)  # readers never see a half-written file
    return result


class DeployError(RuntimeError):
    """A refusal of the command line: the text says why (never a key)."""


def deployer_key_from_env() -> str:
    """DEPLOYER_PRIVATE_KEY, checked: 64 hex digits and not one of anvil's public keys."""
    from wallet_app.core.config import ANVIL_PUBLIC_KEYS

    key = os.environ.get(DEPLOYER_KEY_ENV, "").strip()
    if not key:
        raise DeployError(f"{DEPLOYER_KEY_ENV} is not set: the deployer's key (it pays the gas) comes from it.")
    if not re.fullmatch(r"(0x)?[0-9a-fA-F]{64}", key):
        raise DeployError(f"{DEPLOYER_KEY_ENV} is not a private key: set it to 64 hex digits (0x optional).")
    key = "0x" + key.lower().removeprefix("0x")
    if key in ANVIL_PUBLIC_KEYS:
        raise DeployError(f"{DEPLOYER_KEY_ENV} is one of anvil's public test keys: use a key of your own.")
    return key


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
    parser.add_argument(
        "--chain-id", type=int, help=f"a real network: the node must be this chain; the key from {DEPLOYER_KEY_ENV}"
    )
    args = parser.parse_args(argv)
    if args.chain_id is not None:
        if args.fund:
            parser.error("--fund is the development faucet's, not for --chain-id")
        try:
            key = deployer_key_from_env()
            result = deploy(args.rpc, args.deployments_dir, key, chain_id=args.chain_id, test_tokens=False)
        except DeployError as e:
            print(f"refused: {e}", file=sys.stderr)
            return 2
        print(json.dumps(result, indent=2))
        print(f"recorded in {deployments_path(result['chain_id'], args.deployments_dir)}", file=sys.stderr)
        return 0
    print(json.dumps(deploy(args.rpc, args.deployments_dir), indent=2))
    if args.fund:
        print("funded:", *fund(args.rpc, args.fund, args.deployments_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
