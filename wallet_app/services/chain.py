"""Chains: configuration, balances, token lookup, building and submitting transactions.

Configuration is a JSON list (settings.chains_file, `chains.dev.json` in development):
    {chain_id, chain_name, rpc_url, multicall_address, payment_contract, native_symbol,
     native_name, native_decimals, explorer_url, tokens: [{token_address, token_symbol,
     token_name, token_decimals}],
     and the relayer's limits (issue 12; defaults in RELAYER_LIMIT_DEFAULTS when absent):
     payment_tokens: [addresses] the only tokens /payment quotes and executes (absent: none),
     max_pay_gas: the highest gas limit of a relayed pay() (an estimate above it is refused),
     max_gas_price_wei and max_gas_price_multiple (of the node's current price): the ceiling
     of every relayed gas price, re-pricing included (a node price above the absolute cap
     makes payments unavailable), relayer_min_balance_wei: below it (or below max_pay_gas at
     the node's gas price for each payment not yet mined and one more) payments are unavailable,
     relayer_max_spend_wei_per_hour: the relayer's gas budget (what its transactions cost in the
     last hour, services.relayer.check_budget; default RELAYER_MAX_SPEND_DEFAULT, null: none),
     index_confirmations: how far behind the head incoming transfers are indexed (issue 14;
     default 5; the dev chain's anvil mines only on demand and never reorgs: 0),
     l1_fee_oracle: on an OP-stack chain (Base, Optimism), its GasPriceOracle
     (0x420000000000000000000000000000000000000F), whose getL1Fee prices the L1 data fee every
     transaction pays on top of gas x price (l1_fee; absent: the chain has none)}
Any string may name environment variables as ${NAME} (e.g. "rpc_url": "${SEPOLIA_RPC_URL}": an
RPC URL often carries a provider's API key, which stays out of the file), from the environment or
`.env` as the settings are; one that is unset or empty refuses the file (bad_config naming it).
An address may be written as "deployments:<key>" (e.g. "deployments:tokens.tUSD"); it is
resolved from <settings.deployments_dir>/deployments-<chain_id>.json written by contracts/deploy.py.
Production chains use literal addresses (e.g. the canonical Multicall3
0xcA11bde05977b3631167028862bE2a173976CA11), so adding one is configuration only.
A chain whose placeholders cannot be resolved yet (not deployed) is left out, with a warning.

Errors are AppError(code, message): machine codes for the API/UI, English for logs.
ABIs come from the compiled contracts (contracts.artifacts).
Reads are retried once on a network error; nothing that moves funds is retried.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

import rlp
from eth_abi import decode as abi_decode
from eth_abi import encode as abi_encode
from eth_abi.exceptions import DecodingError
from eth_account import Account
from eth_typing import ChecksumAddress, HexStr
from eth_utils import keccak
from web3 import Web3
from web3.contract import Contract
from web3.exceptions import (
    ContractLogicError,
    ProviderConnectionError,
    RequestTimedOut,
    TransactionNotFound,
    Web3RPCError,
)
from web3.types import RPCEndpoint, Wei

from contracts import artifacts
from wallet_app.core.config import environment, get_settings
from wallet_app.errors import AppError
from wallet_app.services.eth import (
    ZERO_ADDRESS,
    checksum,
    is_zero,
    parse_address,
    parse_uint256,
)
from wallet_app.services.rpc_http import RpcOverHttp

log = logging.getLogger(__name__)

PLACEHOLDER_PREFIX = "deployments:"
RPC_TIMEOUT_SECONDS = 15
MAX_RAW_TX_BYTES = 128 * 1024

T = TypeVar("T")

# The relayer's limits when the chains file does not set them (see the module doc).
RELAYER_LIMIT_DEFAULTS: dict[str, int | float] = {
    "max_pay_gas": 300_000,  # pay() with a plain ERC-20 uses about 70k
    "max_gas_price_wei": 500 * 10**9,
    "max_gas_price_multiple": 3.0,
    "relayer_min_balance_wei": 10**16,  # 0.01 ETH
}


# The relayer's hourly gas budget when the chains file does not name one: a circuit breaker that
# stops a Sybil flood of tiny payments from draining the key (10x the default balance floor).
RELAYER_MAX_SPEND_DEFAULT = 10**17  # 0.1 ETH

INDEX_CONFIRMATIONS_DEFAULT = 5


@dataclass(frozen=True)
class TokenInfo:
    token_address: str
    token_symbol: str
    token_name: str
    token_decimals: int


@dataclass(frozen=True)
class ChainConfig:
    chain_id: int
    chain_name: str
    rpc_url: str = field(repr=False)  # its path or query keeps a provider's API key: never in a log
    multicall_address: str
    payment_contract: str | None
    native_symbol: str
    native_name: str
    native_decimals: int
    explorer_url: str | None
    tokens: tuple[TokenInfo, ...]
    payment_tokens: tuple[str, ...] = ()  # checksummed; the tokens /payment accepts
    max_pay_gas: int = int(RELAYER_LIMIT_DEFAULTS["max_pay_gas"])
    max_gas_price_wei: int = int(RELAYER_LIMIT_DEFAULTS["max_gas_price_wei"])
    max_gas_price_multiple: float = float(RELAYER_LIMIT_DEFAULTS["max_gas_price_multiple"])
    relayer_min_balance_wei: int = int(RELAYER_LIMIT_DEFAULTS["relayer_min_balance_wei"])
    relayer_max_spend_wei_per_hour: int | None = RELAYER_MAX_SPEND_DEFAULT  # None: no budget
    # The incoming-transfer indexer stays this many blocks behind the head (reorgs; services.indexer).
    index_confirmations: int = INDEX_CONFIRMATIONS_DEFAULT
    l1_fee_oracle: str | None = None  # checksummed; an OP-stack chain's GasPriceOracle (l1_fee)

    def native_token(self) -> TokenInfo:
        return TokenInfo(ZERO_ADDRESS, self.native_symbol, self.native_name, self.native_decimals)


@dataclass(frozen=True)
class DecodedTx:
    sender: str
    chain_id: int | None  # None: signed without EIP-155 replay protection
    nonce: int
    gas_price: int
    gas_limit: int
    to: str | None  # None: contract creation
    value: int
    data: str
    tx_hash: str


# ---------------------------------------------------------------- configuration


def _checksum(value: Any, what: str) -> str:
    try:
        return parse_address(value, allow_zero=True)
    except AppError as e:
        raise AppError("bad_config", f"{what}: not an address: {value!r}") from e


def _resolve(value: Any, deployments: dict | None, what: str) -> str | None:
    """A literal address, or a "deployments:a.b" placeholder; None when not deployed yet."""
    if isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIX):
        node: Any = deployments
        for part in value[len(PLACEHOLDER_PREFIX) :].split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return _checksum(node, what) if node is not None else None
    return _checksum(value, what)


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: Any, environ: Mapping[str, str]) -> Any:
    """`value` (a chains-file entry: dicts, lists, strings, numbers) with every ${NAME} in its
    strings replaced by that environment variable; ValueError names one that is unset or empty."""
    if isinstance(value, dict):
        return {k: expand_env(v, environ) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_env(v, environ) for v in value]
    if not isinstance(value, str):
        return value

    def sub(match: re.Match[str]) -> str:
        if not environ.get(match[1]):
            raise ValueError(f"environment variable {match[1]} is not set")
        return environ[match[1]]

    return _ENV_REF.sub(sub, value)


def load_chains(path: Path | None = None, deployments_dir: Path | None = None) -> list[ChainConfig]:
    path = Path(path or get_settings().chains_file)
    deployments_dir = Path(deployments_dir or get_settings().deployments_dir)
    chains = []
    environ = environment()
    for raw in json.loads(path.read_text()):
        try:
            raw = expand_env(raw, environ)
            chain_id = int(raw["chain_id"])
            dep_file = deployments_dir / f"deployments-{chain_id}.json"
            deployments = json.loads(dep_file.read_text()) if dep_file.exists() else None
            multicall = _resolve(raw["multicall_address"], deployments, f"chain {chain_id} multicall_address")
            payment = raw.get("payment_contract")
            payment = _resolve(payment, deployments, f"chain {chain_id} payment_contract") if payment else None
            tokens = []
            for t in raw.get("tokens", []):
                addr = _resolve(t["token_address"], deployments, f"chain {chain_id} token {t.get('token_symbol')}")
                if addr is None:
                    multicall = None  # an undeployed token means the chain is not set up yet
                    break
                tokens.append(
                    TokenInfo(
                        addr,
                        str(t["token_symbol"]),
                        str(t.get("token_name") or t["token_symbol"]),
                        int(t["token_decimals"]),
                    )
                )
            payment_tokens = [
                _resolve(t, deployments, f"chain {chain_id} payment_tokens") for t in raw.get("payment_tokens", [])
            ]
            if None in payment_tokens:
                multicall = None
            limits = {k: type(v)(raw.get(k, v)) for k, v in RELAYER_LIMIT_DEFAULTS.items()}
            if min(limits.values()) <= 0 or limits["max_gas_price_multiple"] < 1:
                raise ValueError(f"relayer limits must be positive (the multiple at least 1): {limits}")
            budget = raw.get("relayer_max_spend_wei_per_hour", RELAYER_MAX_SPEND_DEFAULT)
            if budget is not None and int(budget) <= 0:
                raise ValueError(f"relayer_max_spend_wei_per_hour must be positive or null: {budget}")
            confirmations = int(raw.get("index_confirmations", INDEX_CONFIRMATIONS_DEFAULT))
            if confirmations < 0:
                raise ValueError(f"index_confirmations must be 0 or more: {confirmations}")
            if multicall is None:
                log.warning("chain %s left out: contracts not deployed (%s missing or incomplete)", chain_id, dep_file)
                continue
            chains.append(
                ChainConfig(
                    chain_id=chain_id,
                    chain_name=str(raw["chain_name"]),
                    rpc_url=str(raw["rpc_url"]),
                    multicall_address=multicall,
                    payment_contract=payment,
                    native_symbol=str(raw.get("native_symbol", "ETH")),
                    native_name=str(raw.get("native_name", "Ether")),
                    native_decimals=int(raw.get("native_decimals", 18)),
                    explorer_url=raw.get("explorer_url"),
                    tokens=tuple(tokens),
                    payment_tokens=tuple(t for t in payment_tokens if t is not None),
                    max_pay_gas=int(limits["max_pay_gas"]),
                    max_gas_price_wei=int(limits["max_gas_price_wei"]),
                    max_gas_price_multiple=float(limits["max_gas_price_multiple"]),
                    relayer_min_balance_wei=int(limits["relayer_min_balance_wei"]),
                    relayer_max_spend_wei_per_hour=None if budget is None else int(budget),
                    index_confirmations=confirmations,
                    l1_fee_oracle=_checksum(raw["l1_fee_oracle"], f"chain {chain_id} l1_fee_oracle")
                    if raw.get("l1_fee_oracle")
                    else None,
                )
            )
        except (KeyError, TypeError, ValueError) as e:
            raise AppError("bad_config", f"{path}: chain entry {raw.get('chain_id')!r}: {e!r}") from e
    return chains


_cache_lock = threading.Lock()
_chains_cache: tuple[tuple, list[ChainConfig]] | None = None
_chains_checked: tuple[Path, Path, float] | None = None  # the files, and the interval they were last looked at in
CHAINS_CHECK_SECONDS = 1.0


def get_chains() -> list[ChainConfig]:
    """The configured chains; reloaded when the settings name other files at once, and within
    CHAINS_CHECK_SECONDS when the config or a deployments file changes (the files are looked at no
    more often: listing the folder on every call was 3% of a loaded API worker's time)."""
    global _chains_cache, _chains_checked
    settings = get_settings()
    path, deployments_dir = Path(settings.chains_file), Path(settings.deployments_dir)
    checked = (path, deployments_dir, time.monotonic() // CHAINS_CHECK_SECONDS)
    with _cache_lock:
        if _chains_cache is not None and _chains_checked == checked:
            return _chains_cache[1]
        files = [path, *sorted(deployments_dir.glob("deployments-*.json"))]
        stamp = (str(deployments_dir), *((str(f), f.stat().st_mtime_ns) for f in files if f.exists()))
        if _chains_cache is None or _chains_cache[0] != stamp:
            _chains_cache = (stamp, load_chains(path, deployments_dir))
        _chains_checked = checked
        return _chains_cache[1]


def get_chain(chain_id: int, chains: list[ChainConfig] | None = None) -> ChainConfig:
    for chain in chains if chains is not None else get_chains():
        if chain.chain_id == chain_id:
            return chain
    raise AppError("unsupported_chain", f"chain {chain_id} is not configured")


# ---------------------------------------------------------------- clients and reads

_clients: dict[tuple[int, str], Web3] = {}
_NETWORK_ERRORS = (ProviderConnectionError, RequestTimedOut)  # services.rpc_http's failures


def web3_for(chain: ChainConfig) -> Web3:
    key = (chain.chain_id, chain.rpc_url)
    with _cache_lock:
        if key not in _clients:
            # Without retries (a send must not go twice; we retry reads ourselves).
            w3 = Web3(RpcOverHttp(chain.rpc_url, RPC_TIMEOUT_SECONDS))
            # The validation middleware asks eth_chainId before every call; the chain id is
            # configuration here, and signed transactions carry their own (checked below).
            w3.middleware_onion.remove("validation")
            _clients[key] = w3
        return _clients[key]


def _read(fn: Callable[[], T]) -> T:
    """A chain read, retried once on a network error."""
    try:
        return fn()
    except _NETWORK_ERRORS:
        try:
            return fn()
        except _NETWORK_ERRORS as e:
            raise AppError("rpc_unavailable", f"RPC not reachable: {type(e).__name__}") from e


def rpc_batch(w3: Web3, calls: list[tuple[str, list]]) -> list[dict]:
    """One JSON-RPC batch: an answer ({result} or {error}) per call, in order."""
    answers = w3.provider.make_batch_request(calls)  # type: ignore[attr-defined]
    if not isinstance(answers, list):  # the node refused the whole batch
        raise Web3RPCError(str(answers.get("error")))
    return cast(list[dict], answers)


def transaction_known(w3: Web3, tx_hash: str | None) -> bool:
    """Whether the node knows the transaction (mined or in its pool); its errors propagate."""
    if not tx_hash:
        return False
    try:
        return w3.eth.get_transaction(HexStr(tx_hash)) is not None
    except TransactionNotFound:
        return False


def is_final(block: int, head: int, confirmations: int) -> bool:
    """Whether a block is deep enough under the head to be taken as final: the chain's
    index_confirmations, as the indexer counts them (0: the head itself). A status read from a
    receipt in a block less deep may be undone by a reorganisation."""
    return block <= head - confirmations


def final_receipts(w3: Web3, chain: ChainConfig, found: dict[str, dict]) -> dict[str, dict]:
    """Of these receipts (receipts()' form), those whose block is final now (one eth_blockNumber,
    none when the chain takes its head as final)."""
    if not found or chain.index_confirmations == 0:
        return found
    head = _read(lambda: w3.eth.block_number)
    return {h: r for h, r in found.items() if is_final(r["blockNumber"], head, chain.index_confirmations)}


def receipts(w3: Web3, hashes: list[str]) -> dict[str, dict]:
    """The receipts of these transactions that are mined, by hash, in one JSON-RPC batch (the
    fields the relayer and the activity statuses read: status, blockNumber, blockHash (a reorg
    moves or removes it), transactionHash, to,
    and what the transaction cost: gasUsed and effectiveGasPrice, None from a node without it, and
    l1Fee, the L1 data fee an OP-stack chain (Base, Optimism) charges on top, 0 elsewhere)."""
    if not hashes:
        return {}
    found = {}
    for h, answer in zip(hashes, rpc_batch(w3, [("eth_getTransactionReceipt", [h]) for h in hashes]), strict=True):
        r = answer.get("result")
        if r:
            found[h] = {
                "status": int(r["status"], 16),
                "blockNumber": int(r["blockNumber"], 16),
                "blockHash": (r.get("blockHash") or "").lower() or None,
                "transactionHash": r["transactionHash"],
                "to": Web3.to_checksum_address(r["to"]) if r.get("to") else None,
                "gasUsed": int(r["gasUsed"], 16),
                "effectiveGasPrice": int(r["effectiveGasPrice"], 16) if r.get("effectiveGasPrice") else None,
                "l1Fee": int(r["l1Fee"], 16) if r.get("l1Fee") else 0,
            }
    return found


ERC20 = "IERC20Full"  # OpenZeppelin's IERC20Metadata (contracts/IERC20Full.sol)


@cache
def contract(name: str) -> type[Contract]:
    """An encoder/decoder for a compiled contract's ABI (no address, no provider needed)."""
    return Web3().eth.contract(abi=artifacts.abi(name))


# The token calls a signed or built transaction is decoded as: name -> argument types. ERC-20's, with
# increaseAllowance (not in OpenZeppelin 5's interface) and increaseApproval (its name in older
# tokens, OpenZeppelin 1.x), so the signatures are written out; and the other approvals that let a
# spender take the user's tokens: ERC-721/1155's setApprovalForAll, and Permit2's
# approve(token, spender, amount, expiration), named permit2Approve here (CALL_FUNCTIONS).
ERC20_CALLS: dict[str, tuple[str, ...]] = {
    "transfer": ("address", "uint256"),
    "transferFrom": ("address", "address", "uint256"),
    "approve": ("address", "uint256"),
    "increaseAllowance": ("address", "uint256"),
    "increaseApproval": ("address", "uint256"),
    "setApprovalForAll": ("address", "bool"),
    "permit2Approve": ("address", "address", "uint160", "uint48"),
}
CALL_FUNCTIONS = {"permit2Approve": "approve"}  # the function's own name, where ERC20_CALLS' differs


@cache
def erc20_call_selectors() -> dict[str, str]:
    """4-byte selector (0x + 8 hex) -> the ERC20_CALLS call's name."""
    return {
        "0x" + keccak(text=f"{CALL_FUNCTIONS.get(n, n)}({','.join(a)})")[:4].hex(): n for n, a in ERC20_CALLS.items()
    }


def erc20_call_name(data: Any) -> str | None:
    """The name of the ERC20_CALLS call whose selector `data` starts with (whatever follows it), else None."""
    return erc20_call_selectors().get(data[:10].lower()) if isinstance(data, str) else None


def decode_erc20_call(data: Any) -> tuple[str, tuple] | None:
    """(name, arguments) of one of ERC20_CALLS, the arguments decoded from the head of the data when it
    holds at least them: a token compiled by Solidity ignores bytes after its arguments, so such a call
    runs as that call and is decoded as it (erc20_call_malformed tells it apart; /sign refuses it).
    None for another selector, or arguments that are short, not hex, or do not decode (an address
    with dirty high bytes, which Solidity refuses too)."""
    name = erc20_call_name(data)
    if name is None:
        return None
    types = ERC20_CALLS[name]
    try:
        body = bytes.fromhex(data[10:])
    except ValueError:
        return None
    size = 32 * len(types)
    if len(body) < size:
        return None
    try:
        return name, tuple(abi_decode(list(types), body[:size]))
    except Exception:
        return None


def erc20_call_malformed(data: Any) -> bool:
    """`data` starts with an ERC20_CALLS selector but is not exactly that call's arguments: bytes after
    them (the token still runs the call), fewer (an old token reads them zero-padded: the short address
    attack), or ones that do not decode."""
    name = erc20_call_name(data)
    if name is None:
        return False
    return len(data) != 10 + 64 * len(ERC20_CALLS[name]) or decode_erc20_call(data) is None


@cache
def _selectors() -> dict[str, bytes]:
    return {
        "aggregate3": artifacts.selector("Multicall3", "aggregate3"),
        "getEthBalance": artifacts.selector("Multicall3", "getEthBalance"),
        "balanceOf": artifacts.selector(ERC20, "balanceOf"),
    }


def _aggregate(chain: ChainConfig, calls: list[tuple[str, bytes]]) -> list[tuple[bool, bytes]]:
    """One eth_call to the multicall contract; each call may fail on its own."""
    w3 = web3_for(chain)
    # eth_abi directly: web3's contract encoder costs about 1 ms per call of Python.
    encoded = abi_encode(["(address,bool,bytes)[]"], [[(t, True, d) for t, d in calls]])
    data = "0x" + (_selectors()["aggregate3"] + encoded).hex()
    # Plain eth_call: contract.functions...call() would add eth_chainId round trips.
    ret = _read(lambda: w3.eth.call({"to": chain.multicall_address, "data": HexStr(data)}))
    try:
        decoded = abi_decode(["(bool,bytes)[]"], bytes(ret))[0]
    except DecodingError as e:  # e.g. "0x": no multicall contract at that address on this node
        raise Web3RPCError(f"the aggregate3 answer does not decode: {e}") from e
    return [(ok, bytes(r)) for ok, r in decoded]


# The gas of a balance read made on its own: a token's balanceOf takes far less (proxies included);
# the node's own cap (tens of millions) per call would let a list of gas burners cost it 50 times that.
SINGLE_READ_GAS = 1_000_000


def _single_read(target: str, data: bytes) -> tuple[str, list]:
    """An eth_call of its own (SINGLE_READ_GAS), as a JSON-RPC request."""
    return ("eth_call", [{"to": target, "data": "0x" + data.hex(), "gas": hex(SINGLE_READ_GAS)}, "latest"])


def _each(chain: ChainConfig, requests: list[tuple[str, list]]) -> list[tuple[bool, bytes]]:
    """Each read on its own, in one JSON-RPC batch: an eth_call's data, an eth_getBalance's
    quantity as 32 bytes (as the multicall's getEthBalance answers it)."""
    w3 = web3_for(chain)
    found = []
    for (method, _), answer in zip(requests, _read(lambda: rpc_batch(w3, requests)), strict=True):
        result = answer.get("result")
        try:
            if result is None:
                found.append((False, b""))
            elif method == "eth_getBalance":
                found.append((True, int(str(result), 16).to_bytes(32, "big")))
            else:
                found.append((True, bytes.fromhex(str(result).removeprefix("0x"))))
        except (ValueError, OverflowError):
            found.append((False, b""))
    return found


def balances(chain: ChainConfig, owner: str, tokens: list[str]) -> dict[str, int]:
    """Balances of `owner` in smallest units, keyed by the token addresses as given; the zero
    address is the native coin. A token whose balanceOf fails or returns garbage (not a
    token, self-destructed) is left out of the result rather than failing the whole list.
    The calls the aggregate did not answer are made again, each alone: a token (anyone can
    add one to their list) whose balanceOf burns its gas starves the calls after it, and one
    answering megabytes makes the whole aggregate run out of gas."""
    owner = parse_address(owner, allow_zero=True)
    if not tokens:
        return {}
    owner_arg = abi_encode(["address"], [owner])
    sel = _selectors()
    calls, alone = [], []
    for token in tokens:
        addr = parse_address(token, allow_zero=True)
        if is_zero(addr):
            calls.append((chain.multicall_address, sel["getEthBalance"] + owner_arg))
            alone.append(("eth_getBalance", [owner, "latest"]))  # also where the multicall contract is missing
        else:
            calls.append((addr, sel["balanceOf"] + owner_arg))
            alone.append(_single_read(*calls[-1]))
    try:
        answers = _aggregate(chain, calls)
    except (ContractLogicError, Web3RPCError):
        answers = [(False, b"")] * len(calls)
    missing = [i for i, (ok, ret) in enumerate(answers) if not (ok and len(ret) == 32)]
    if missing:
        try:
            for i, again in zip(missing, _each(chain, [alone[i] for i in missing]), strict=True):
                answers[i] = again
        except (AppError, Web3RPCError, ValueError):  # the node refused the batch: those stay left out
            pass
    result = {}
    for token, (ok, ret) in zip(tokens, answers, strict=False):
        if ok and len(ret) == 32:
            result[token] = int.from_bytes(ret, "big")
    return result


def _decode_string(ret: bytes) -> str | None:
    try:
        return abi_decode(["string"], ret)[0]
    except Exception:
        # Some old tokens (e.g. MKR) return bytes32 instead of string.
        if len(ret) == 32:
            return ret.rstrip(b"\0").decode("utf-8", errors="replace")
        return None


# What a token's own name() and symbol() may put on a page: no control or format characters (Unicode
# categories Cc and Cf: bidi overrides such as U+202E, zero-width characters, NUL, line breaks), no
# line/paragraph separators, surrogates or unassigned code points (Cn: no font draws them the same
# way), no Default_Ignorable_Code_Point (drawn as nothing, though some are marks or letters: "tUSD"
# plus U+034F, U+FE0F or the Hangul filler U+3164 looked like tUSD and passed the copycat check),
# and at most this many characters.
SYMBOL_MAX_CHARS = 32
NAME_MAX_CHARS = 64
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp"})
# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties.txt); unicodedata does not have it.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip


def _hidden(c: str) -> bool:
    code = ord(c)
    return unicodedata.category(c) in _HIDDEN_CATEGORIES or any(a <= code <= b for a, b in _DEFAULT_IGNORABLE)


def clean_token_text(text: str | None, max_chars: int) -> str:
    """A token's self-declared name or symbol made safe to show: hidden characters removed, the
    surrounding white space trimmed, then cut to `max_chars` characters ("" for None)."""
    kept = "".join(c for c in text or "" if not _hidden(c))
    return kept.strip()[:max_chars].strip()


MAX_DECIMALS = 77  # with more, not one whole token fits in a uint256 (2**256 < 10**78)


def token_metadata(chain: ChainConfig, token_address: str) -> TokenInfo:
    """Name, symbol and decimals; the zero address gives the native coin of the chain. The name and
    symbol read from the token pass through clean_token_text (a symbol that is empty after it is no
    ERC-20's)."""
    addr = parse_address(token_address, allow_zero=True)
    if is_zero(addr):
        return chain.native_token()
    w3 = web3_for(chain)
    if not _read(lambda: w3.eth.get_code(cast(ChecksumAddress, addr))):
        raise AppError("not_a_contract", f"no contract at {addr} on chain {chain.chain_id}")
    sel = lambda fn: bytes.fromhex(contract(ERC20).encode_abi(fn, [])[2:])  # noqa: E731
    try:
        (ok_n, r_n), (ok_s, r_s), (ok_d, r_d) = _aggregate(
            chain, [(addr, sel("name")), (addr, sel("symbol")), (addr, sel("decimals"))]
        )
    except (ContractLogicError, Web3RPCError) as e:  # e.g. an answer of megabytes: out of gas copying it
        raise AppError("not_erc20", f"{addr}: name()/symbol()/decimals() failed the call: {e}") from e
    symbol = clean_token_text(_decode_string(r_s) if ok_s else None, SYMBOL_MAX_CHARS)
    decimals = int.from_bytes(r_d, "big") if ok_d and len(r_d) == 32 else None
    if not symbol or decimals is None or decimals > MAX_DECIMALS:
        raise AppError("not_erc20", f"{addr} does not answer symbol()/decimals() like an ERC-20")
    name = clean_token_text(_decode_string(r_n) if ok_n else None, NAME_MAX_CHARS) or symbol
    return TokenInfo(addr, symbol, name, decimals)


# ---------------------------------------------------------------- transactions


def build_erc20_transfer(chain: ChainConfig, sender: str, token: str, to: str, amount_units: int) -> dict[str, str]:
    """An unsigned legacy (type 0) ERC-20 transfer, numbers as decimal strings (design.md section 4)."""
    sender, token, to = parse_address(sender), parse_address(token), parse_address(to, allow_zero=True)
    amount_units = parse_uint256(amount_units)
    return _build_token_call(
        chain, sender, token, contract(ERC20).encode_abi("transfer", [to, amount_units]), "transfer"
    )


def transaction_count(chain: ChainConfig, address: str, block: str = "latest") -> int:
    """How many transactions `address` has sent as of `block` ('latest' or 'pending')."""
    w3 = web3_for(chain)
    return int(_read(lambda: w3.eth.get_transaction_count(cast(ChecksumAddress, parse_address(address)), block)))  # type: ignore[arg-type]


def gas_price(chain: ChainConfig) -> int:
    """The gas price (wei) a transaction built here is given: fee_prices' first."""
    return fee_prices(chain)[0]


def fee_prices(chain: ChainConfig) -> tuple[int, int | None]:
    """(the gas price a transaction built here is given, next_base_fee), the base fee read once for
    both (/sign's preview checks the one against the other). The price is a legacy one's (base fee and
    tip in one): the node's (eth_gasPrice), but never below the next block's base fee plus the tip
    in the node's price. geth's eth_gasPrice is the LATEST block's base fee plus a tip, and while
    blocks are fuller than their target the next block's base fee is up to 12.5% above it: a send
    built at it was refused at once as fee_outdated (txpreview.fee_outdated, 'The network fee has
    gone up since this transaction was prepared'), and so was each one prepared again."""
    w3 = web3_for(chain)
    price = int(_read(lambda: w3.eth.gas_price))
    upcoming = next_base_fee(chain)
    if upcoming is None:
        return price, None
    latest = _block(chain, "latest")
    current = _base_fee_of(latest) if latest is not None else None
    tip = price - current if current is not None and price > current else 0
    return max(price, upcoming + tip), upcoming


def next_base_fee(chain: ChainConfig) -> int | None:
    """The base fee of the block the node builds next (its pending block's; the latest's when it has
    no pending block), or None on a chain without one (no EIP-1559): a transaction priced below it is
    not mined at that price (anvil refuses it, geth keeps it in its pool, unmined)."""
    for tag in ("pending", "latest"):
        block = _block(chain, tag)
        if block is not None:
            return _base_fee_of(block)
    return None


def _block(chain: ChainConfig, tag: str) -> dict | None:
    """The node's block `tag` ('pending', 'latest'; its header fields), None when it has none."""
    provider = web3_for(chain).provider

    def block_of() -> Any:
        return provider.make_request(RPCEndpoint("eth_getBlockByNumber"), [tag, False])

    answer = _read(block_of)
    found = answer.get("result") if isinstance(answer, dict) else None
    return found if isinstance(found, dict) else None


def _base_fee_of(block: dict) -> int | None:
    fee = block.get("baseFeePerGas")
    return int(fee, 16) if isinstance(fee, str) and re.fullmatch(r"0x[0-9a-fA-F]{1,64}", fee) else None


GET_L1_FEE = keccak(text="getL1Fee(bytes)")[:4]


def unsigned_legacy_rlp(tx: dict[str, str]) -> bytes:
    """A built transaction ({nonce, gas_price, gas_limit, to, value, data}, decimal strings) as the
    RLP of its unsigned legacy fields, what an OP-stack GasPriceOracle's getL1Fee prices."""
    return rlp.encode(
        [
            int(tx["nonce"]),
            int(tx["gas_price"]),
            int(tx["gas_limit"]),
            bytes.fromhex(parse_address(tx["to"], allow_zero=True)[2:]),
            int(tx["value"]),
            bytes.fromhex(tx["data"][2:]),
        ]
    )


def l1_fee(chain: ChainConfig, tx: dict[str, str]) -> int:
    """The L1 data fee (wei) an OP-stack chain charges `tx` on top of gas x price: its GasPriceOracle's
    getL1Fee of the unsigned transaction (which adds what a signature weighs); 0 on a chain without
    one (no l1_fee_oracle). AppError rpc_unavailable when the oracle does not answer a fee."""
    if chain.l1_fee_oracle is None:
        return 0
    w3 = web3_for(chain)
    call = {
        "to": chain.l1_fee_oracle,
        "data": HexStr("0x" + (GET_L1_FEE + abi_encode(["bytes"], [unsigned_legacy_rlp(tx)])).hex()),
    }
    try:
        answer = bytes(_read(lambda: w3.eth.call(call)))  # type: ignore[arg-type]
    except (ContractLogicError, Web3RPCError) as e:
        raise AppError("rpc_unavailable", f"the L1 fee oracle refused getL1Fee: {e}") from e
    if len(answer) != 32:
        raise AppError("rpc_unavailable", f"the L1 fee oracle answered {len(answer)} bytes")
    return int.from_bytes(answer, "big")


def _build_token_call(chain: ChainConfig, sender: str, token: str, data: str, what: str) -> dict[str, str]:
    """An unsigned legacy call of `token` with `data` from `sender`: pending nonce, gas price, estimate."""
    w3 = web3_for(chain)
    nonce = _read(lambda: w3.eth.get_transaction_count(cast(ChecksumAddress, sender), "pending"))
    price = gas_price(chain)
    try:
        gas = _read(lambda: w3.eth.estimate_gas({"from": sender, "to": token, "data": HexStr(data), "value": Wei(0)}))
    except (ContractLogicError, Web3RPCError) as e:
        # Typically the balance is too low or the token refuses the call.
        raise AppError("estimate_failed", f"{what} would fail: {e}") from e
    return {
        "chain_id": str(chain.chain_id),
        "to": token,
        "data": data,
        "value": "0",
        "nonce": str(nonce),
        "gas_limit": str(padded_gas(gas)),
        "gas_price": str(price),
    }


def padded_gas(estimate: int) -> int:
    """The gas limit of a call estimated at `estimate`: half as much again (MetaMask's buffer for
    contract calls), and at least GAS_MARGIN more. The estimate is exact for the state it ran on,
    and a token's costs move with it: a transfer to a recipient that empties its balance before the
    send is mined sets a zero slot (17,100 gas more: a tUSD transfer estimated at 34,455 used 51,555),
    and at the estimate it ran out of gas and reverted, its fee paid for nothing. A legacy
    transaction pays only the gas it uses; the limit is what the balance must cover."""
    estimate = int(estimate)
    return max(estimate * 3 // 2, estimate + GAS_MARGIN)


GAS_MARGIN = 25_000  # a zero storage slot set (22,100) and a few thousand more


def _raw_bytes(raw_tx: str | bytes) -> bytes:
    if isinstance(raw_tx, bytes):
        raw = raw_tx
    elif isinstance(raw_tx, str) and re.fullmatch(r"0x([0-9a-fA-F]{2})+", raw_tx.strip()):
        raw = bytes.fromhex(raw_tx.strip()[2:])
    else:
        raise AppError("invalid_raw_tx", "raw_tx must be 0x-prefixed hex")
    if len(raw) > MAX_RAW_TX_BYTES:
        raise AppError("invalid_raw_tx", "raw_tx too large")
    return raw


def decode_raw_tx(raw_tx: str | bytes) -> DecodedTx:
    """Decodes a signed legacy transaction and recovers its sender (typed transactions are refused)."""
    raw = _raw_bytes(raw_tx)
    if not raw or raw[0] < 0xC0:
        raise AppError("invalid_raw_tx", "only legacy (type 0) transactions are accepted")
    try:
        fields = rlp.decode(raw)
        if not isinstance(fields, list) or len(fields) != 9 or not all(isinstance(f, bytes) for f in fields):
            raise ValueError("not a 9-field legacy transaction")
        nonce, gas_price, gas, to, value, data, v, _r, _s = fields
        sender = Account.recover_transaction(raw)
    except Exception as e:
        raise AppError("invalid_raw_tx", f"cannot decode signed transaction: {e}") from e
    as_int = lambda b: int.from_bytes(b, "big")  # noqa: E731
    v = as_int(v)
    return DecodedTx(
        sender=checksum(sender),
        chain_id=(v - 35) // 2 if v >= 35 else None,
        nonce=as_int(nonce),
        gas_price=as_int(gas_price),
        gas_limit=as_int(gas),
        to=checksum("0x" + to.hex()) if to else None,
        value=as_int(value),
        data="0x" + data.hex(),
        tx_hash="0x" + keccak(raw).hex(),
    )


# A provider's answer about itself, not the transaction: whether it reached a pool is unknown.
_TRANSIENT_REFUSALS = (
    "rate limit",
    "too many requests",
    "limit exceeded",
    "timeout",
    "timed out",
    "internal error",
    "temporarily",
    "unavailable",
    "try again",
)


def is_transient_refusal(message: str) -> bool:
    low = message.lower()
    return any(s in low for s in _TRANSIENT_REFUSALS)


def submit_raw(chain: ChainConfig, raw_tx: str | bytes, expected_sender: str | None = None) -> str:
    """Broadcasts a signed transaction once (never retried) after checking its chain id and,
    when given, that it is signed by `expected_sender` (the session's address). Its hash also when
    the node holds it already (sent before, or mined): one transaction, however often it is sent."""
    decoded = decode_raw_tx(raw_tx)
    if decoded.chain_id != chain.chain_id:
        raise AppError("wrong_chain", f"transaction is for chain {decoded.chain_id}, not {chain.chain_id}")
    if expected_sender is not None and decoded.sender.lower() != expected_sender.strip().lower():
        raise AppError("sender_mismatch", "transaction is not signed by the session's address")
    w3 = web3_for(chain)
    try:
        w3.eth.send_raw_transaction(_raw_bytes(raw_tx))
    except _NETWORK_ERRORS as e:
        # No answer that could be read: the node may have taken it. Told "try again" while it is in
        # the pool, the user would sign a second transaction on the next nonce and pay twice.
        if _known_after_all(w3, decoded.tx_hash):
            return decoded.tx_hash
        raise AppError("rpc_unavailable", f"RPC not reachable: {type(e).__name__}") from e
    except (Web3RPCError, ValueError) as e:
        # This very transaction may be the node's already: the same signed bytes sent again after
        # an answer was lost ("already known"), or mined meanwhile ("nonce too low"). Told
        # "rejected", the user would sign a new transaction on the next nonce and pay twice.
        known = _known_after_all(w3, decoded.tx_hash)
        if known:
            return decoded.tx_hash
        if known is None or is_transient_refusal(str(e)):
            # A provider's trouble (a rate limit, a timeout, its internal error), or no way to ask:
            # unknown whether it reached a pool, so not "rejected" (its entry stays pending).
            raise AppError("rpc_unavailable", f"node could not take the transaction now: {e}") from e
        raise AppError("rejected", f"node rejected the transaction: {e}") from e
    return decoded.tx_hash


def _known_after_all(w3: Web3, tx_hash: str) -> bool | None:
    """Whether the node knows the transaction after a send got no readable answer; None when it
    cannot tell either."""
    try:
        return transaction_known(w3, tx_hash)
    except (*_NETWORK_ERRORS, Web3RPCError):
        return None


# ---------------------------------------------------------------- allowances (merchant payments)


def erc20_allowance_and_balance(chain: ChainConfig, owner: str, token: str, spender: str) -> tuple[int, int]:
    """(allowance(owner, spender), balanceOf(owner)) in one multicall; not_erc20 if the token does not answer."""
    owner, token, spender = parse_address(owner), parse_address(token), parse_address(spender)
    erc20 = contract(ERC20)
    calls = [
        (token, bytes.fromhex(erc20.encode_abi("allowance", [owner, spender])[2:])),
        (token, bytes.fromhex(erc20.encode_abi("balanceOf", [owner])[2:])),
    ]
    (ok_a, r_a), (ok_b, r_b) = _aggregate(chain, calls)
    if not (ok_a and ok_b and len(r_a) == 32 and len(r_b) == 32):
        raise AppError("not_erc20", f"{token} does not answer allowance()/balanceOf() like an ERC-20")
    return int.from_bytes(r_a, "big"), int.from_bytes(r_b, "big")


def build_erc20_approve(chain: ChainConfig, owner: str, token: str, spender: str, amount_units: int) -> dict[str, str]:
    """An unsigned legacy (type 0) approve(spender, amount), same shape as build_erc20_transfer."""
    owner, token, spender = parse_address(owner), parse_address(token), parse_address(spender)
    amount_units = parse_uint256(amount_units, allow_zero=True)
    return _build_token_call(
        chain, owner, token, contract(ERC20).encode_abi("approve", [spender, amount_units]), "approve"
    )


# ---------------------------------------------------------------- EIP-2612 permit (gasless payments)

EIP712_DOMAIN_TYPEHASH = keccak(
    text="EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
)


@dataclass(frozen=True)
class PermitDomain:
    """A token's EIP-712 domain for permit(), checked against its DOMAIN_SEPARATOR()."""

    name: str
    version: str
    chain_id: int
    verifying_contract: str  # the token, EIP-55

    def as_typed(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "chainId": self.chain_id,
            "verifyingContract": self.verifying_contract,
        }


def _sig(text: str) -> bytes:
    return keccak(text=text)[:4]


def domain_separator(name: str, version: str, chain_id: int, token: str) -> bytes:
    return keccak(
        abi_encode(
            ["bytes32", "bytes32", "bytes32", "uint256", "address"],
            [EIP712_DOMAIN_TYPEHASH, keccak(text=name), keccak(text=version), chain_id, token],
        )
    )


def read_permit_domain(chain_id: int, token: str, answers: list[tuple[bool, bytes]]) -> PermitDomain | None:
    """Pure: the domain from the answers to (DOMAIN_SEPARATOR, eip712Domain, name, version, nonces(0))
    when they show an EIP-2612 token, else None. The name and version come from eip712Domain()
    (EIP-5267) or name() and version() (default "1", e.g. older OpenZeppelin tokens); either way
    they must hash to the token's own DOMAIN_SEPARATOR(), so a permit signed with them is valid."""
    (ok_sep, sep), (ok_5267, d5267), (ok_name, r_name), (ok_ver, r_ver), (ok_nonce, r_nonce) = answers
    if not (ok_sep and len(sep) == 32 and ok_nonce and len(r_nonce) == 32):
        return None
    candidates: list[tuple[str, str]] = []
    if ok_5267:
        try:
            _fields, name, version, *_rest = abi_decode(
                ["bytes1", "string", "string", "uint256", "address", "bytes32", "uint256[]"], d5267
            )
            candidates.append((name, version))
        except Exception:  # noqa: BLE001 (not EIP-5267 after all)
            pass
    name = _decode_string(r_name) if ok_name else None
    if name is not None:
        version = (_decode_string(r_ver) if ok_ver else None) or "1"
        candidates += [(name, version), (name, "1")]
    for name, version in candidates:
        if domain_separator(name, version, chain_id, token) == sep:
            return PermitDomain(name, version, chain_id, checksum(token))
    return None


_permit_domains: dict[tuple[int, str], PermitDomain | None] = {}


def permit_domain(chain: ChainConfig, token: str) -> PermitDomain | None:
    """The token's permit domain, or None when it has no EIP-2612 permit; one multicall per token
    and process (a token's code does not change under an address)."""
    addr = parse_address(token)
    key = (chain.chain_id, addr)
    with _cache_lock:
        if key in _permit_domains:
            return _permit_domains[key]
    calls = [
        (addr, _sig("DOMAIN_SEPARATOR()")),
        (addr, _sig("eip712Domain()")),
        (addr, _sig("name()")),
        (addr, _sig("version()")),
        (addr, _sig("nonces(address)") + abi_encode(["address"], [ZERO_ADDRESS])),
    ]
    domain = read_permit_domain(chain.chain_id, addr, _aggregate(chain, calls))
    with _cache_lock:
        _permit_domains[key] = domain
    return domain


def permit_nonce(chain: ChainConfig, token: str, owner: str) -> int:
    """nonces(owner) of an EIP-2612 token: the nonce the owner's next permit must carry."""
    addr, owner = parse_address(token), parse_address(owner)
    [(ok, ret)] = _aggregate(chain, [(addr, _sig("nonces(address)") + abi_encode(["address"], [owner]))])
    if not ok or len(ret) != 32:
        raise AppError("permit_unsupported", f"{addr} does not answer nonces()")
    return int.from_bytes(ret, "big")
