"""A merchant confirms a payment without trusting the payer's screen: the payment contract's Paid
events for a paymentRef, read from the chain (GET /api/v1/merchant/payments?ref=).

Paid(bytes32 indexed paymentRef, address indexed merchant, address indexed from, address token,
uint256 amount): the ref is an indexed topic, so one eth_getLogs filtered by it over the whole
chain finds every payment of that ref. Providers that limit eth_getLogs ranges refuse that; then
bounded ranges are read instead: the blocks of the relayed transactions our database names for
the ref (pointers only: what is answered is the chain's log; at most HINTS, one per payer), and
the newest LOOKBACK_WINDOWS windows.

The contract lets different payers use the same ref (it is per payer), so the answer is a list:
a merchant checks the token, amount (and payer) it expects, not only that the ref was paid.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from eth_typing import ChecksumAddress, HexStr
from web3 import Web3
from web3.exceptions import TransactionNotFound, Web3RPCError
from web3.types import FilterParams

from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.services import chain as chains
from wallet_app.services.eth import checksum, parse_chain_id
from wallet_app.services.merchant_links import parse_ref

log = logging.getLogger(__name__)

LOG_WINDOW_BLOCKS = 10_000  # what public providers commonly allow per eth_getLogs
LOOKBACK_WINDOWS = 5  # the bounded fallback reads at most this many windows back from the head
HINTS = 5  # the newest relayed transactions of a ref whose blocks the bounded fallback reads


def fallback_ranges(head: int, hint_blocks: list[int], window: int, windows: int) -> list[tuple[int, int]]:
    """The bounded (from, to) block ranges read when a whole-chain eth_getLogs is refused: each
    hinted block alone, then windows back from the head (newest first), none overlapping."""
    ranges = [(b, b) for b in dict.fromkeys(hint_blocks) if 0 <= b <= head]
    hi = head
    for _ in range(windows):
        if hi < 0:
            break
        lo = max(0, hi - window + 1)
        ranges.append((lo, hi))
        hi = lo - 1
    return ranges


def find_payments(ref: object, chain_id: object = None) -> dict[str, Any]:
    """{ref, payments: [...]} on the configured chains (or the one chain_id names);
    payment_not_found when no chain has a Paid event for the ref."""
    pid = parse_ref(ref)
    if chain_id not in (None, ""):
        selected = [chains.get_chain(parse_chain_id(chain_id, code="unsupported_chain"))]
    else:
        selected = chains.get_chains()
    found = [p for chain in selected if chain.payment_contract for p in chain_payments(chain, pid)]
    if not found:
        raise AppError("payment_not_found", "no Paid event for this ref")
    return {"ref": pid, "payments": found}


def chain_payments(chain: chains.ChainConfig, ref: str) -> list[dict[str, Any]]:
    """The Paid events of `ref` on `chain` (oldest first), each with its confirmations now."""
    w3 = chains.web3_for(chain)
    contract = cast(ChecksumAddress, checksum(chain.payment_contract or ""))
    event = chains.contract("NewblPayment2").events.Paid()
    head = chains._read(lambda: w3.eth.block_number)

    def logs_in(lo: int, hi: int) -> list[Any]:
        query = FilterParams(address=contract, topics=[event.topic, HexStr(ref)], fromBlock=lo, toBlock=hi)
        return list(chains._read(lambda: w3.eth.get_logs(query)))

    try:
        logs = logs_in(0, head)
    except Web3RPCError as e:  # the provider limits eth_getLogs ranges
        log.info("chain %s refused a whole-chain eth_getLogs (%s); reading bounded ranges", chain.chain_id, e)
        logs = []
        for lo, hi in fallback_ranges(head, _hint_blocks(w3, chain, ref), LOG_WINDOW_BLOCKS, LOOKBACK_WINDOWS):
            logs += logs_in(lo, hi)
    out, seen = [], set()
    for entry in logs:
        key = (bytes(entry["transactionHash"]), entry["logIndex"])
        if entry.get("removed") or key in seen or checksum(entry["address"]) != contract:
            continue
        seen.add(key)
        args = event.process_log(entry)["args"]
        out.append(
            {
                "chain_id": chain.chain_id,
                "tx_hash": "0x" + bytes(entry["transactionHash"]).hex(),
                "block_number": entry["blockNumber"],
                "log_index": entry["logIndex"],
                "confirmations": max(0, head - entry["blockNumber"] + 1),
                "token": checksum(args["token"]),
                "amount": str(args["amount"]),
                "payer": checksum(args["from"]),
                "merchant": checksum(args["merchant"]),
            }
        )
    return sorted(out, key=lambda p: (p["block_number"], p["log_index"]))


def _hint_blocks(w3: Web3, chain: chains.ChainConfig, ref: str) -> list[int]:
    """The blocks of the transactions our relayer recorded for this ref (each payer pays a ref
    once), from their receipts."""
    with get_session() as db:
        hashes = crud.relayed_tx_hashes(db, chain.chain_id, ref, HINTS)
    blocks = []
    for tx_hash in hashes:
        try:
            receipt = chains._read(lambda h=tx_hash: w3.eth.get_transaction_receipt(h))  # type: ignore[misc]
        except TransactionNotFound:
            continue
        blocks.append(int(receipt["blockNumber"]))
    return blocks
