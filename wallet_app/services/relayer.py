"""The payment relayer: sends pay() as legacy transactions from the server's key and follows them.

payments.execute only checks and queues (the claimed row: status 'pending', no nonce yet); the
relayer process (wallet_app.relayer) relays what is queued, send_queued(), then follows it,
reconcile(), every pass. Each row keeps what its transaction costs (gas_cost_wei: gas limit x
price once sent, gas used x price once mined), summed for the chain's hourly budget (check_budget).

Nonces (pipelined: the nonce lock covers allocation only, never an RPC round trip):
- under a lock per chain + relayer address, in this process and in the database (SQLite: the
  transaction's write lock; PostgreSQL: an advisory lock), next nonce = max(the node's pending
  count read before, highest nonce persisted for this relayer + 1), for every queued payment
  of the pass in one database transaction (group commit); each is written to its payment row
  with the signed raw tx BEFORE the send, so a crash right after leaves a row that reconcile()
  re-sends, never a forgotten nonce. The sends follow outside the lock in one JSON-RPC batch,
  without waiting for earlier receipts.
- a send the node refuses fails the payment; a 0-value transfer to the relayer itself takes its
  nonce (no hole; the pay()'s hash is kept beside it: should that one be mined after all, a
  provider's other backend having taken it, the payment is ok).
- a network error leaves it unknown whether the node got it: the row keeps its nonce and
  reconcile() re-sends the same raw transaction (same hash, so never a double payment).
- a send's answer (refused, 'nonce too low', none) changes its row only while the row still holds
  the transaction sent (a conditional UPDATE): reconcile() may have re-sent it meanwhile, been
  refused for its price and replaced it on the same nonce; another of the row's hashes known to
  the node is that replacement, not a nonce taken by someone else. Likewise reconcile() writes a
  row only while it holds the transaction the pass read (_keep_current).
- a queued payment whose check reverts Replayed is looked for among the Paid events: found (a
  copy of its signed Pay, or a transaction of ours its row no longer holds), it is ok with it
  once that block is final (queued until then: replaced, the relayer sends the payment itself).
- the unique index (chain_id, relayer_address, nonce) refuses a duplicate even from a writer
  that ignores the lock.
- a payer's payment of a token goes beside their others on their way only while their allowance
  and balance cover them all (_held_back); else it stays queued for a later pass, so no pay() is
  sent that the payer's earlier ones leave uncovered, to revert at the relayer's cost.

reconcile(chain) runs in the relayer process (wallet_app.relayer, every
settings.relayer_interval_seconds; /payment/status only reads) and walks the rows whose nonce is
not yet consumed on chain in a final block (also those a replaced relayer key sent: followed to
their receipt, or failed once past their deadline, never re-sent): receipt -> ok / failed(reason),
settled once its block is the chain's index_confirmations deep (is_final); until then a receipt
gone (its block reorganised away, mined_in) puts the payment back to pending, and it is followed
as a sent one: re-sent, same nonce and hash, when the node lost it (else its nonce stayed taken in
the relayer's books and every later payment waited behind the hole), mined again, or failed;
nonce consumed by another tx (the node knows none of its hashes for DROPPED_AFTER_SECONDS: a
node may answer the new nonce before the receipt, e.g. anvil under load or a provider's lagging
replica) -> failed 'dropped'; unknown to the node (never sent, or evicted) -> re-send of the same
raw tx, and when the node refuses it for its price (a gas price rise), or refuses it
relayer_stuck_seconds after its first send, replaced (_priced_out); pending longer than
settings.relayer_stuck_seconds as the nonce the chain waits for, or as a later one priced below the
node's price now (_holds_up: one that only waits behind an earlier nonce is not re-priced for
that), or left out by the node (the next nonce, known to it but not among its ready transactions,
_left_out) -> replaced with the same nonce at a higher gas price,
never above the chain's caps (max_gas_price_wei, max_gas_price_multiple x the node's price; no
room left: kept as it is, with a warning). A pay() of ours that reverted because someone else
got the same signed payment mined first (Paid for exactly it) is the user's payment made: ok.
A deadline that the chain's time has passed is final: failed 'expired' (the nonce stays tracked
until it is consumed).
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, cast

import coincurve
import rlp
from eth_abi import encode as abi_encode
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import ABIFunction, HexStr
from eth_utils import keccak
from eth_utils.abi import collapse_if_tuple, function_abi_to_4byte_selector
from sqlalchemy import ColumnElement, inspect, text, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import object_session
from sqlmodel import Session, col, select
from web3.exceptions import Web3RPCError

from wallet_app import crud
from wallet_app.core import extensions
from wallet_app.core.config import get_settings
from wallet_app.core.db import exclusive_turn, get_session, read_session
from wallet_app.errors import AppError
from wallet_app.models import Activity, Payment, now_epoch, stored_id
from wallet_app.services import merchant_webhooks
from wallet_app.services.chain import (
    _NETWORK_ERRORS,
    ChainConfig,
    balances,
    contract,
    decode_raw_tx,
    erc20_allowance_and_balance,
    gas_price,
    is_final,
    is_transient_refusal,
    transaction_known,
    web3_for,
)
from wallet_app.services.chain import receipts as _receipts
from wallet_app.services.chain import rpc_batch as _batch
from wallet_app.services.eth import ZERO_ADDRESS
from wallet_app.services.payment_watch import announce_final

log = logging.getLogger(__name__)

GAS_BUMP_PERCENT = 25  # replacement gas price: at least +10% is required by nodes
MIN_BUMP_PERCENT = 10  # below this a replacement is refused by nodes: not worth sending
FILLER_GAS = 21_000  # a plain transfer: what fills the nonce of a refused send
GAS_MARGIN_PERCENT = 25  # a relayed pay()'s gas limit over its estimate
SEND_BATCH = 200  # queued payments relayed per pass at most (one nonce transaction, one send batch)
PAID_LOOKBACK_BLOCKS = 1000  # how far back a reverted Replayed pay() looks for the Paid that won

# Custom errors of NewblPayment2, SafeERC20 and OpenZeppelin ERC-20 -> failure reasons.
_REVERT_REASONS = {
    "0x" + keccak(text=sig)[:4].hex(): reason
    for sig, reason in [
        ("Expired()", "expired"),
        ("Replayed()", "replayed"),
        ("BadSigner()", "bad_signer"),
        ("PermitFailed()", "permit_failed"),
        ("ERC20InsufficientAllowance(address,uint256,uint256)", "insufficient_allowance"),
        ("ERC20InsufficientBalance(address,uint256,uint256)", "insufficient_balance"),
        ("SafeERC20FailedOperation(address)", "transfer_failed"),
    ]
}


def revert_reason(data: object) -> str:
    """Revert data (0x hex, as nodes return it) -> a machine reason; 'reverted' when unknown."""
    if isinstance(data, dict):
        data = data.get("data")
    if isinstance(data, str) and data.startswith("0x") and len(data) >= 10:
        return _REVERT_REASONS.get(data[:10].lower(), "reverted")
    return "reverted"


def _names_an_error(error: dict) -> bool:
    """Whether a node's error carries revert data with an error selector. Without (no data, or
    '0x'): the call ran out of gas, or reverted without a reason; only an estimate tells which."""
    data = error.get("data")
    if isinstance(data, dict):
        data = data.get("data")
    return isinstance(data, str) and len(data) >= 10


def gas_price_cap(chain: ChainConfig, current: int) -> int:
    """The highest gas price the relayer pays now: the chain's absolute cap and its multiple of the node's price."""
    return min(chain.max_gas_price_wei, int(current * chain.max_gas_price_multiple))


def bumped_gas_price(old: int, current: int, cap: int | None = None) -> int | None:
    """Replacement price: GAS_BUMP_PERCENT over the old one, and never below the node's current
    price, but at most `cap`; None when the cap leaves less than the MIN_BUMP_PERCENT nodes require."""
    price = max(current, old * (100 + GAS_BUMP_PERCENT) // 100 + 1)
    if cap is not None and price > cap:
        price = cap
    return price if price > old * (100 + MIN_BUMP_PERCENT) // 100 else None


MAX_GAS_COST = 2**63 - 1  # what Payment.gas_cost_wei (BIGINT) holds: a dearer transaction is over any budget
BUDGET_WINDOW_SECONDS = 3600  # relayer_max_spend_wei_per_hour: the last hour


def gas_cost(gas: int, price: int) -> int:
    """What a transaction of `gas` at `price` costs the relayer, in wei, as Payment.gas_cost_wei keeps it."""
    return min(gas * price, MAX_GAS_COST)


def budget_reached(spent: int, budget: int | None) -> bool:
    """Whether the relayer's spend in the last hour leaves no room under the chain's budget (None: no budget)."""
    return budget is not None and spent >= budget


def budget_lock(chain: ChainConfig) -> str | None:
    """The lock under which an execute claims a share of the chain's budget and counts it again
    (core.db.lock_until_commit); None without a budget (nothing to count)."""
    return None if chain.relayer_max_spend_wei_per_hour is None else f"relayer-budget:{chain.chain_id}"


def check_budget(chain: ChainConfig, db: Session | None = None, reserved_here: int = 0) -> None:
    """Refuses payments (payments_unavailable) while what the relayer's transactions for this
    chain's payments executed in the last hour cost has reached its relayer_max_spend_wei_per_hour:
    a circuit breaker against many accounts making it pay gas for tiny payments. Counted in the
    database (Payment.gas_cost_wei), so it holds across workers and relayer processes; payments
    already queued are still sent. One indexed query; the warning once an hour per process, not
    once per refused request. In an execute's transaction (`db`), after its claim reserved
    `reserved_here` under budget_lock: whether the budget had room before that claim."""
    budget = chain.relayer_max_spend_wei_per_hour
    if budget is None:
        return
    claimed_after = now_epoch() - BUDGET_WINDOW_SECONDS
    if db is None:
        with read_session() as reader:
            spent = crud.relayer_spend(reader, chain.chain_id, claimed_after=claimed_after)
    else:
        spent = crud.relayer_spend(db, chain.chain_id, claimed_after=claimed_after) - reserved_here
    if budget_reached(spent, budget):
        raise _paused(
            chain,
            "the relayer's hourly gas budget is spent",
            "the relayer spent %s wei in the last hour, its budget is %s",
            spent,
            budget,
            every=BUDGET_WINDOW_SECONDS,
        )


def check_ready(chain: ChainConfig) -> int:
    """Refuses payments (payments_unavailable, with a warning for the operator) while the relayer's
    hourly budget is spent (check_budget), the node's gas price is above the chain's cap or the
    relayer's balance is below its floor or what the payments not yet mined and one more may cost
    at that price. -> the gas price."""
    check_budget(chain)  # first: no chain read for a refusal
    address = relayer_account().address
    price = gas_price(chain)
    _refuse_unless_ready(chain, address, price, lambda: balances(chain, address, [ZERO_ADDRESS]).get(ZERO_ADDRESS, 0))
    return price


PAUSED_WARN_SECONDS = 300  # a pause's warning (gas price, balance) again after this long, per process and cause
_paused_warned: dict[tuple, float] = {}  # (database, chain id, cause) -> time.monotonic() of its last warning


def _paused(chain: ChainConfig, cause: str, message: str, *args: object, every: float | None = None) -> AppError:
    """payments_unavailable for `cause`, its warning `message` (after the chain's id) logged once per
    `every` seconds (PAUSED_WARN_SECONDS) in this process: each refused quote and execute logged it,
    one line per request for as long as the pause lasted."""
    key = (get_settings().database_url, chain.chain_id, cause)
    with _state_lock:
        last = _paused_warned.get(key)
        warn = last is None or time.monotonic() - last >= (PAUSED_WARN_SECONDS if every is None else every)
        if warn:
            _paused_warned[key] = time.monotonic()
    if warn:
        log.warning("payments paused on chain %s: " + message, chain.chain_id, *args)
    return AppError("payments_unavailable", cause)


def _refuse_unless_ready(
    chain: ChainConfig, address: str, price: int, funds: Callable[[], int], unmined: int | None = None
) -> None:
    """payments_unavailable (_paused) when the relayer cannot pay for one more payment. `unmined`:
    crud.payments_unmined when the caller has read it already (execute, with its other reads)."""
    if price > chain.max_gas_price_wei:
        raise _paused(
            chain, "gas price above the relayer's cap", "gas price %s above the cap %s", price, chain.max_gas_price_wei
        )
    balance = funds()
    if balance < chain.relayer_min_balance_wei:
        raise _paused(
            chain,
            "relayer balance below its floor",
            "relayer %s holds %s wei, below the floor %s",
            address,
            balance,
            chain.relayer_min_balance_wei,
        )
    # The floor counts no gas price: above it, the relayer may still be unable to send the payments
    # accepted and not yet mined (their gas is not spent from the balance yet) and one more (a small
    # floor for a cheap L2 whose fees rose, a burst of payments): each one past what the balance
    # pays for would fail at its send, after its payer signed it.
    one_pay = gas_cost(chain.max_pay_gas, price)
    if unmined is None:
        with read_session() as db:
            unmined = crud.payments_unmined(db, chain.chain_id)
    payments = unmined + 1
    if balance < one_pay * payments:
        raise _paused(
            chain,
            "relayer balance below the payments' gas",
            "relayer %s holds %s wei, less than %s payments may cost at gas price %s (%s)",
            address,
            balance,
            payments,
            price,
            one_pay * payments,
        )


def _pay_check(address: str, to: str, call: str, gas: int) -> tuple[str, list]:
    """pay() run as the relayer with `gas`: answered without an error only if the call neither
    reverts nor needs more gas. One EVM run, where eth_estimateGas searches with a dozen (anvil:
    0.07 against 0.9 ms of its CPU, twice per payment before)."""
    return ("eth_call", [{"from": address, "to": to, "data": call, "gas": hex(gas)}, "latest"])


def _estimate(address: str, to: str, call: str) -> tuple[str, list]:
    return ("eth_estimateGas", [{"from": address, "to": to, "data": call}])


def ready_and_dry_run(chain: ChainConfig, call: str, unmined: int | None = None) -> int:
    """execute's dry run: check_ready()'s refusals and the pay() call as the relayer within the
    chain's max_pay_gas, in one JSON-RPC batch (one round trip instead of three). A call that
    would revert is refused with its reason (expired, replayed, insufficient_allowance, ...), one
    that needs more gas than the cap with payment_gas_too_high. `unmined`: crud.payments_unmined,
    read by the caller with its other reads. -> the node's gas price."""
    check_budget(chain)
    address, to = relayer_account().address, cast(str, chain.payment_contract)
    calls = [
        ("eth_gasPrice", []),
        ("eth_getBalance", [address, "latest"]),
        _pay_check(address, to, call, chain.max_pay_gas),
    ]
    price, balance, checked = _node_answers(chain, calls)
    try:
        numbers = int(price["result"], 16), int(balance["result"], 16)
    except KeyError as e:  # the node refused a read
        raise AppError("rpc_unavailable", f"RPC refused: {e}") from e
    _refuse_unless_ready(chain, address, numbers[0], lambda: numbers[1], unmined)
    if "error" not in checked:
        if "result" not in checked:
            raise AppError("rpc_unavailable", "RPC refused: the dry run has no answer")
        return numbers[0]
    error = checked["error"]
    if not _names_an_error(error):
        # Out of gas under the cap, or a revert without a reason: the estimate (rare, so its cost
        # does not matter) tells the two apart.
        (estimate,) = _node_answers(chain, [_estimate(address, to, call)])
        if "error" not in estimate:
            gas = int(estimate["result"], 16)
            if pay_gas_limit(chain, gas) is None:
                raise AppError("payment_gas_too_high", f"pay() needs {gas} gas, the cap is {chain.max_pay_gas}")
        error = estimate.get("error", error)
    if error.get("data"):
        raise AppError(revert_reason(error["data"]), "pay() would revert")
    raise AppError("pay_would_fail", str(error.get("message")))


def _node_answers(chain: ChainConfig, calls: list[tuple[str, list]]) -> list[dict]:
    """One JSON-RPC batch's answers; rpc_unavailable when the node is not reached or refuses it."""
    try:
        return _batch(web3_for(chain), calls)
    except _NETWORK_ERRORS as e:
        raise AppError("rpc_unavailable", f"RPC not reachable: {type(e).__name__}") from e
    except Web3RPCError as e:
        raise AppError("rpc_unavailable", f"RPC refused: {e}") from e


def relayer_account() -> LocalAccount:
    """RELAYER_PRIVATE_KEY, else the extension point's default (development sets anvil's key)."""
    configured = get_settings().relayer_private_key
    key = (configured.get_secret_value() if configured else "") or extensions.relayer_key()
    if not key:
        raise RuntimeError("RELAYER_PRIVATE_KEY must be set outside development")
    return _account(key)


@functools.lru_cache(maxsize=4)
def _account(key: str) -> LocalAccount:
    # Deriving the address is pure-Python elliptic-curve work (no coincurve here): once per key.
    return Account.from_key(key)


# ---------------------------------------------------------------- process state

_state_lock = threading.Lock()
_chain_locks: dict[tuple, threading.Lock] = {}
# The highest pay() estimate seen by kind (_kind): a queued payment is checked with one eth_call
# at it, and estimated only when it needs more or none is known yet.
_estimates: dict[tuple, int] = {}


def _key(chain: ChainConfig, relayer: str) -> tuple:
    # The database is part of the key: tests (and tools) may point one process at several.
    return (get_settings().database_url, chain.chain_id, relayer.lower())


def _chain_lock(chain: ChainConfig, relayer: str) -> threading.Lock:
    with _state_lock:
        return _chain_locks.setdefault(_key(chain, relayer), threading.Lock())


def forget_process_state() -> None:
    """What a restart loses: the locks, the known estimates and the warnings given (tests use it to
    simulate a restart)."""
    with _state_lock:
        _chain_locks.clear()
        _estimates.clear()
        _paused_warned.clear()
        _warned.clear()


# ---------------------------------------------------------------- sending


class SendOutcome:
    SENT, REJECTED, UNKNOWN, NONCE_TAKEN = "sent", "rejected", "unknown", "nonce_taken"


# A node that has the transaction already (geth, reth, anvil; Besu; Nethermind; Erigon).
_ALREADY_HELD = ("already known", "already imported", "known transaction", "alreadyknown", "already exists")


def _refusal_outcome(chain: ChainConfig, raw_tx: str, msg: str) -> tuple[str, str]:
    """What a node's refusal of eth_sendRawTransaction means. -> (outcome, message). Any refusal not
    known as a send or a provider's trouble is the transaction's own (never reached the pool)."""
    low = msg.lower()
    if any(s in low for s in _ALREADY_HELD):
        return SendOutcome.SENT, msg
    if is_transient_refusal(msg):  # kept with its nonce, the same raw tx re-sent by reconcile
        return SendOutcome.UNKNOWN, msg
    if "nonce too low" in low or "nonce has already been used" in low:
        # Taken by this very transaction (another relayer pass sent the stored raw tx first)
        # is a send, not a lost nonce: re-allocating would pay twice and leave a hole. (Taken by
        # another transaction of its row, a replacement: send_queued's _row_moved_on.)
        try:
            own = transaction_known(web3_for(chain), "0x" + keccak(hexstr=raw_tx).hex())
        except _NETWORK_ERRORS as e:
            return SendOutcome.UNKNOWN, type(e).__name__
        return (SendOutcome.SENT if own else SendOutcome.NONCE_TAKEN), msg
    return SendOutcome.REJECTED, msg


def _send_raw(chain: ChainConfig, raw_tx: str) -> tuple[str, str]:
    """One eth_sendRawTransaction, never retried here. -> (outcome, message)."""
    try:
        web3_for(chain).eth.send_raw_transaction(HexStr(raw_tx))
        return SendOutcome.SENT, ""
    except _NETWORK_ERRORS as e:
        return SendOutcome.UNKNOWN, type(e).__name__
    except (Web3RPCError, ValueError) as e:
        return _refusal_outcome(chain, raw_tx, str(e))


def _send_batch(chain: ChainConfig, raw_txs: list[str]) -> list[tuple[str, str]]:
    """The raw transactions in one JSON-RPC batch, in nonce order, without waiting for anything
    mined. -> (outcome, message) per transaction."""
    if not raw_txs:
        return []
    try:
        answers = _batch(web3_for(chain), [("eth_sendRawTransaction", [raw]) for raw in raw_txs])
    except _NETWORK_ERRORS as e:
        return [(SendOutcome.UNKNOWN, type(e).__name__)] * len(raw_txs)
    except Web3RPCError as e:  # the whole batch refused: it says nothing of each transaction
        return [(SendOutcome.UNKNOWN, str(e))] * len(raw_txs)
    return [
        (SendOutcome.SENT, "") if "error" not in a else _refusal_outcome(chain, raw, str(a["error"]))
        for raw, a in zip(raw_txs, answers, strict=True)
    ]


def _sign(
    acct: LocalAccount, chain: ChainConfig, to: str, data: str, gas: int, gas_price: int, nonce: int
) -> tuple[str, str]:
    """The relayer's transaction (EIP-155, legacy gas price, no value) signed: (raw, hash) as hex,
    byte for byte what `acct.sign_transaction` makes (table-tested against it). Built here: its
    field validation and the key derivation it repeats on every call were 44 % of a send pass's
    CPU (a burst of 100 payments: one signature each); this costs a fifth of it."""
    to_bytes, data_bytes = bytes.fromhex(to.removeprefix("0x")), bytes.fromhex(data.removeprefix("0x"))
    if len(to_bytes) != 20:
        raise ValueError(f"not an address: {to!r}")
    fields = [nonce, gas_price, gas, to_bytes, 0, data_bytes]
    signature = _signing_key(bytes(acct.key)).sign_recoverable(
        keccak(rlp.encode([*fields, chain.chain_id, 0, 0])), hasher=None
    )
    v = signature[64] + chain.chain_id * 2 + 35  # EIP-155: the recovery id bound to the chain
    r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:64], "big")
    raw = rlp.encode([*fields, v, r, s])
    return "0x" + raw.hex(), "0x" + keccak(raw).hex()


@functools.lru_cache(maxsize=4)
def _signing_key(key: bytes) -> coincurve.PrivateKey:
    return coincurve.PrivateKey(key)


def pay_call(
    merchant: str,
    token: str,
    owner: str,
    amount: int,
    payment_id: str,
    deadline: int,
    sig: bytes,
    permit: Mapping[str, Any] | None = None,
) -> str:
    """The calldata of NewblPayment2.pay(Pay, signature), or of payWithPermit(Pay, signature,
    value, deadline, v, r, s) with the payer's permit {value, deadline, signature}."""
    struct = (merchant, token, owner, amount, bytes.fromhex(payment_id[2:]), deadline)
    args: list[Any] = [struct, sig]
    if permit is not None:
        p_sig = bytes.fromhex(str(permit["signature"])[2:])
        v = p_sig[64] + 27 if p_sig[64] < 27 else p_sig[64]
        args += [int(permit["value"]), int(permit["deadline"]), v, p_sig[:32], p_sig[32:64]]
    selector, types = _function_abi("pay" if permit is None else "payWithPermit")
    # eth_abi directly: web3's Contract.encode_abi finds the function and normalises every
    # argument again on each call, about 20 times the encoding itself (once per execute and
    # again per relayed payment).
    return "0x" + (selector + abi_encode(types, args)).hex()


@functools.cache
def _function_abi(name: str) -> tuple[bytes, list[str]]:
    (fn,) = [f for f in contract("NewblPayment2").abi if f.get("type") == "function" and f.get("name") == name]
    return function_abi_to_4byte_selector(fn), [collapse_if_tuple(i) for i in cast(ABIFunction, fn)["inputs"]]


def _queued_call(row: Payment) -> str:
    if row.merchant_address is None or row.deadline is None or row.signature is None:
        raise ValueError(f"payment {row.payment_id} was queued without its signed Pay")
    return pay_call(
        row.merchant_address,
        row.token_address,
        row.from_address,
        int(row.amount),
        row.payment_id,
        row.deadline,
        bytes.fromhex(row.signature[2:]),
        json.loads(row.permit) if row.permit else None,
    )


def pay_gas_limit(chain: ChainConfig, estimate: int) -> int | None:
    """A relayed pay()'s gas limit: the estimate + GAS_MARGIN_PERCENT, capped at the chain's
    max_pay_gas; None when the estimate itself is above the cap."""
    if estimate > chain.max_pay_gas:
        return None
    return min(estimate * (100 + GAS_MARGIN_PERCENT) // 100, chain.max_pay_gas)


def _stored_payment(db: Session, row_id: int) -> Payment:
    row = db.get(Payment, row_id)
    if row is None:
        raise LookupError(f"no payment row {row_id}")
    return row


class _Relayed(NamedTuple):
    nonce: int
    raw_tx: str
    gas_price: str


def _relayed(row: Payment) -> _Relayed:
    """The relayed transaction of a row that holds a nonce (send_queued() sets these together)."""
    if row.nonce is None or row.raw_tx is None or row.gas_price is None:
        raise ValueError(f"payment {row.payment_id} holds no relayed transaction")
    return _Relayed(row.nonce, row.raw_tx, row.gas_price)


def _load(db: Session, payment_ids: list[int], activity_ids: list[int] | None = None) -> list:
    """Loads these payment rows and their activity entries (or these entries) into the session in
    two queries, so that the per-row db.get() of a pass finds them there: a round trip per row
    and table is what a pass of 100 payments spent on PostgreSQL. The caller keeps the returned
    list for the pass: the session's identity map holds unmodified objects only weakly, so once
    dropped, db.get() would query each row again (it did, 2 queries a payment per pass)."""
    rows: list = []
    if payment_ids:
        rows = list(db.exec(select(Payment).where(col(Payment.id).in_(payment_ids))))
        activity_ids = [row.activity_id for row in rows if row.activity_id is not None]
    if activity_ids:
        rows += list(db.exec(select(Activity).where(col(Activity.id).in_(activity_ids))))
    return rows


def _set_activity(db, row: Payment) -> None:
    if row.activity_id is None:
        return
    act = crud.get_activity(db, row.activity_id)
    if act is not None:
        act.tx_hash = row.tx_hash
        act.status = {"ok": "ok", "failed": "failed"}.get(row.status, "submitted")
        db.add(act)


def _fail_row(db: Session, row: Payment, reason: str) -> None:
    """A payment that holds no nonce is failed (and settled: nothing to follow). Not one whose check
    reverts Replayed while its Paid event is on chain (_paid_elsewhere, _settle_paid)."""
    row.status, row.reason, row.settled, row.updated_at = "failed", reason[:255], True, now_epoch()
    row.relayer_address = row.nonce = row.raw_tx = row.tx_hash = row.gas_price = row.sent_at = None
    row.gas_cost_wei = 0  # nothing sent: nothing spent
    _set_activity(db, row)
    db.add(row)


def _settle_paid(db: Session, row: Payment, paid_by: str) -> None:
    """A queued payment found paid by `paid_by` (_paid_elsewhere): ok and settled with it, its
    merchant's webhook owed (send_queued adds it in the same transaction)."""
    log.warning("payment %s was found paid by %s before the relayer sent it", row.payment_id, paid_by)
    row.status, row.reason, row.settled, row.tx_hash, row.updated_at = "ok", None, True, paid_by, now_epoch()
    _set_activity(db, row)
    db.add(row)


def _lock_nonces(db: Session, chain_id: int, relayer: str, row_id: int) -> None:
    """Takes the cross-process nonce lock of (chain, relayer) until `db`'s transaction ends;
    must be the transaction's first statement. PostgreSQL: a transaction-level advisory lock.
    SQLite: the first write of a transaction takes the database's write lock until commit (and,
    in WAL mode, what it reads afterwards is the newest committed state)."""
    if db.get_bind().dialect.name == "postgresql":
        key = int.from_bytes(keccak(text=f"relayer-nonce:{chain_id}:{relayer}")[:8], "big", signed=True)
        db.execute(text("SELECT pg_advisory_xact_lock(:key)").bindparams(key=key))
    else:
        db.execute(update(Payment).where(col(Payment.id) == row_id).values(updated_at=now_epoch()))


class _Job(NamedTuple):
    """A queued payment as read before the nonce lock: its pay() calldata, and its gas limit or
    why it cannot be relayed."""

    row_id: int
    call: str
    gas_limit: int
    failure: str | None


def _job(chain: ChainConfig, row_id: int, call: str, answer: dict, checked_at: int | None = None) -> _Job:
    """From the answer to pay()'s check: its estimate, or (checked_at) an eth_call with that gas."""
    if "error" in answer:  # it would revert now (expired, allowance spent, ref used) or the node refuses
        error = answer["error"]
        data = error.get("data")
        return _Job(row_id, call, 0, revert_reason(data) if data else f"relay_rejected: {error.get('message')}")
    result = answer["result"]  # a KeyError (a malformed answer) ends the pass: they stay queued
    limit = pay_gas_limit(chain, checked_at or int(result, 16))
    return _Job(row_id, call, limit or 0, None if limit else "payment_gas_too_high")


def _kind(chain: ChainConfig, row: Payment) -> tuple:
    """What a pay()'s gas depends on besides the state it meets: the chain, the token, the permit."""
    return (chain.chain_id, row.token_address.lower(), row.permit is not None)


def _known_estimate(chain: ChainConfig, kind: tuple) -> int | None:
    gas = _estimates.get(kind)
    return gas if gas is not None and pay_gas_limit(chain, gas) is not None else None


def _jobs(
    chain: ChainConfig, address: str, queued: list[tuple[int, str, tuple, int | None]], answers: list[dict]
) -> list[_Job]:
    """The queued payments' jobs, (row id, calldata, kind, known estimate or None), from their
    checks (`answers`, in order, as _check asked). A call that failed without naming an error (it
    needs more than its known estimate, or reverted without a reason) is estimated after all, in
    one more batch. Raises what _batch raises."""
    to = cast(str, chain.payment_contract)
    jobs: dict[int, _Job] = {}
    estimated: list[tuple[int, str, tuple, dict]] = []
    again: list[tuple[int, str, tuple]] = []
    for (row_id, call, kind, gas), answer in zip(queued, answers, strict=True):
        if gas is None:
            estimated.append((row_id, call, kind, answer))
        elif "error" in answer and not _names_an_error(answer["error"]):
            again.append((row_id, call, kind))
        else:
            jobs[row_id] = _job(chain, row_id, call, answer, checked_at=gas)
    if again:
        answers = _batch(web3_for(chain), [_estimate(address, to, call) for _, call, _ in again])
        estimated += [(*job, answer) for job, answer in zip(again, answers, strict=True)]
    for row_id, call, kind, answer in estimated:
        jobs[row_id] = job = _job(chain, row_id, call, answer)
        if job.failure is None:
            with _state_lock:
                _estimates[kind] = max(_estimates.get(kind, 0), int(answer["result"], 16))
    return [jobs[row_id] for row_id, *_ in queued]


class _Spend(NamedTuple):
    """What a payment takes from its payer's allowance and balance of the token."""

    payer: str
    token: str
    amount: int
    permit: bool


def _spend(row: Payment) -> _Spend:
    return _Spend(row.from_address.lower(), row.token_address.lower(), int(row.amount), row.permit is not None)


def _owed(in_flight: list[tuple[str, str, str]]) -> dict[tuple[str, str], int]:
    """What payments on their way (crud.payments_in_flight) owe, by (payer, token)."""
    owed: dict[tuple[str, str], int] = {}
    for payer, token, amount in in_flight:
        key = (payer, token.lower())
        owed[key] = owed.get(key, 0) + int(amount)
    return owed


def _held_back(
    chain: ChainConfig,
    groups: dict[tuple[str, str], list[_Job]],
    spends: dict[int, _Spend],
    owed: dict[tuple[str, str], int],
) -> set[int]:
    """The row ids of the pass to keep queued for a later pass. Each payment's check ran alone,
    against the chain without the payer's other payments of the token that are on their way
    (earlier in this pass, or sent and not yet final). Sent anyway, those the payer's allowance
    or balance cannot cover after the others would revert, and the relayer would pay their gas: a
    payer with an allowance for one payment could queue several. So a payer's payment of a token
    goes alone when nothing of theirs is on its way, and beside others only while the allowance
    and balance cover them all; a permit payment (its permit sets the allowance) only alone.
    A payment held back is checked again in a later pass, against the chain after the others.
    `groups`: the pass's payments that can be sent (_groups); `owed`: what the payers' payments on
    their way owe (_owed)."""
    held: set[int] = set()
    for (payer, token), members in groups.items():
        if len(members) == 1 and (payer, token) not in owed:
            continue  # its own check covers it
        cover = _cover(chain, payer, token)
        spent, alone = owed.get((payer, token), 0), (payer, token) not in owed
        for job in members:
            spend = spends[job.row_id]
            if alone or (not spend.permit and spent + spend.amount <= cover):
                spent += spend.amount
                alone = False
                if spend.permit:
                    cover = 0  # what its permit leaves is not known here: the rest wait for it
            else:
                held.add(job.row_id)
    return held


def _groups(jobs: list[_Job], spends: dict[int, _Spend]) -> dict[tuple[str, str], list[_Job]]:
    """The jobs that can be sent, by (payer, token), in queue order."""
    groups: dict[tuple[str, str], list[_Job]] = {}
    for job in jobs:
        if job.failure is None:
            spend = spends[job.row_id]
            groups.setdefault((spend.payer, spend.token), []).append(job)
    return groups


def _in_flight_now(db: Session, chain: ChainConfig, spends: dict[int, _Spend]) -> dict[tuple[str, str], int]:
    return _owed(crud.payments_in_flight(db, chain.chain_id, {spend.payer for spend in spends.values()}))


def _cover(chain: ChainConfig, payer: str, token: str) -> int:
    """What the payer's allowance to the payment contract and balance of the token both cover
    now; 0 when they cannot be read (only what its own check proved goes)."""
    try:
        allowance, balance = erc20_allowance_and_balance(chain, payer, token, cast(str, chain.payment_contract))
    except (AppError, *_NETWORK_ERRORS, Web3RPCError):
        return 0
    return min(allowance, balance)


def _check(address: str, to: str, call: str, gas: int | None) -> tuple[str, list]:
    """A queued pay()'s check: an eth_call with the highest estimate known for its kind (one EVM
    run; its gas limit is then that estimate's), or its own estimate when none is known."""
    return _estimate(address, to, call) if gas is None else _pay_check(address, to, call, gas)


def send_queued(chain: ChainConfig, limit: int = SEND_BATCH) -> dict[str, int]:
    """Relays up to `limit` queued payments of this chain (executed, no nonce yet), oldest first.
    Outside the nonce lock: one JSON-RPC batch for the gas price, the pending count and each
    pay()'s check (_check: an eth_call, or its estimate). Under the lock (this process's, then
    the database's), and nothing else: the nonces (max(pending count, highest persisted + 1)),
    the signed transactions and their sent_at stored in ONE transaction; a payment another
    relayer took meanwhile is skipped, one that would revert now is failed without a nonce.
    After it: every transaction in one JSON-RPC batch, without waiting for receipts
    (reconcile() follows them). -> {sent, failed}"""
    counts = {"sent": 0, "failed": 0}
    to = chain.payment_contract
    if to is None:
        return counts
    with get_session() as db:
        rows = crud.queued_payments(db, chain.chain_id, limit)
        queued = [
            (stored_id(row), _queued_call(row), kind, _known_estimate(chain, kind))
            for row in rows
            for kind in [_kind(chain, row)]
        ]
        spends = {stored_id(row): _spend(row) for row in rows}
        owed = _in_flight_now(db, chain, spends) if rows else {}
    if not queued:
        return counts
    acct = relayer_account()
    relayer = acct.address.lower()
    reads = [("eth_gasPrice", []), ("eth_getTransactionCount", [acct.address, "pending"])]
    checks = [_check(acct.address, to, call, gas) for _, call, _, gas in queued]
    try:
        answers = _batch(web3_for(chain), reads + checks)
        price, pending_count = int(answers[0]["result"], 16), int(answers[1]["result"], 16)
        jobs = _jobs(chain, acct.address, queued, answers[2:])
    except (*_NETWORK_ERRORS, Web3RPCError, KeyError):
        return counts  # the node is not answering: they stay queued for the next pass
    groups = _groups(jobs, spends)
    held = _held_back(chain, groups, spends, owed)
    # A check that reverts Replayed: the ref is used. By this very payment, when its transaction
    # (one this row no longer holds) or someone else's copy of its signed Pay was mined: ok with
    # that transaction, never failed 'replayed' while the merchant has the money.
    # Expired too: the contract checks the deadline before the ref, so a payment held while the
    # block of its Paid was not final reverts Expired once its deadline has passed meanwhile.
    replayed = [row for row, job in zip(rows, jobs, strict=True) if job.failure in ("replayed", "expired")]
    try:
        paid, not_final = _paid_elsewhere(chain, replayed)
        held |= not_final  # settled once that block is final; sent by the relayer if it is replaced
    except (*_NETWORK_ERRORS, Web3RPCError):
        paid, held = {}, held | {stored_id(row) for row in replayed}  # looked for again in a later pass
    too_dear = "relay_unavailable: gas price above the cap" if price > chain.max_gas_price_wei else None

    signed: list[tuple[int, int, str, str]] = []  # (row id, nonce, raw tx, its hash)
    final: list[Payment] = []  # failed without a nonce, or found paid
    with _chain_lock(chain, relayer), get_session() as db:
        _lock_nonces(db, chain.chain_id, relayer, jobs[0].row_id)
        # Another relayer process may have sent a payer's payment since `owed` was read (with the
        # queue, before the checks): that payer's payments of the token wait for a later pass
        # (held back is always safe).
        owed_now = _in_flight_now(db, chain, spends)
        held |= {
            job.row_id
            for group, members in groups.items()
            if owed_now.get(group, 0) > owed.get(group, 0)
            for job in members
        }
        last = crud.max_relayer_nonce(db, chain.chain_id, relayer)
        nonce = max(pending_count, -1 if last is None else last + 1)
        loaded = _load(db, [job.row_id for job in jobs])  # noqa: F841 (held for the pass, see _load)
        for job in jobs:
            if job.row_id in held:
                continue
            row = _stored_payment(db, job.row_id)
            if row.status != "pending" or row.nonce is not None or row.settled:
                continue  # another relayer process relayed it meanwhile
            if job.row_id in paid:
                _settle_paid(db, row, paid[job.row_id])
                final.append(row)
                continue
            if failure := too_dear or job.failure:
                _fail_row(db, row, failure)
                final.append(row)
                counts["failed"] += 1
                continue
            raw, tx_hash = _sign(acct, chain, to, job.call, job.gas_limit, price, nonce)
            row.relayer_address, row.nonce, row.raw_tx, row.tx_hash = relayer, nonce, raw, tx_hash
            row.gas_price, row.sent_at, row.updated_at = str(price), now_epoch(), now_epoch()
            row.gas_cost_wei = gas_cost(job.gas_limit, price)  # the most it can cost until mined
            _set_activity(db, row)
            db.add(row)
            signed.append((job.row_id, nonce, raw, tx_hash))
            nonce += 1
        merchant_webhooks.enqueue_paid(db, final, {})  # those found paid (it skips the failed)
        try:
            db.commit()
        except IntegrityError:  # a writer that ignores the lock took one of these nonces: next pass
            db.rollback()
            return {"sent": 0, "failed": 0}
    announce_final(final)

    # The bookkeeping of each send is written only while the row still holds the transaction this
    # pass sent: between the commit above and a refusal's answer, a reconcile() pass (its thread,
    # another relayer process) may have re-sent it, been refused for its price and replaced it
    # with the same nonce, that one mined.
    sends = _send_batch(chain, [s[2] for s in signed])
    for (row_id, nonce, _raw, tx_hash), (outcome, msg) in zip(signed, sends, strict=True):
        if outcome == SendOutcome.SENT:
            counts["sent"] += 1
        elif outcome == SendOutcome.NONCE_TAKEN:
            # Consumed outside this relayer (someone else with the key): no hole; queued again.
            if not _row_moved_on(chain, row_id, tx_hash) and _update(
                row_id,
                tx_hash,
                col(Payment.status) == "pending",
                relayer_address=None,
                nonce=None,
                raw_tx=None,
                tx_hash=None,
                gas_price=None,
                sent_at=None,
            ):
                log.warning("relayer nonce %s on chain %s already used: %s", nonce, chain.chain_id, msg)
        elif outcome == SendOutcome.REJECTED:
            if _refused(acct, chain, row_id, tx_hash, nonce, price, msg):
                counts["failed"] += 1
        else:  # not known to be sent: reconcile() re-sends the same raw tx
            _update(row_id, tx_hash, sent_at=None)
    return counts


def _update(row_id: int, holding: str, *also: ColumnElement[bool], **values) -> bool:
    """Writes `values` to the row if it still holds the transaction `holding` (its hash), unsettled
    (and `also`). -> whether it did."""
    with get_session() as db:
        done = db.execute(
            update(Payment)
            .where(col(Payment.id) == row_id, col(Payment.tx_hash) == holding, col(Payment.settled).is_(False), *also)
            .values(updated_at=now_epoch(), **values)
        )
        db.commit()
    return getattr(done, "rowcount", 0) == 1


def _row_moved_on(chain: ChainConfig, row_id: int, tx_hash: str) -> bool:
    """After 'nonce too low' for `tx_hash`, which the node does not know (_refusal_outcome):
    whether the nonce went to another transaction of the same payment, one of the hashes the row
    holds now (old_tx_hashes keeps those a replacement took the place of). A reconcile() pass may
    have re-sent ours before this send arrived, been refused for its price and replaced it.
    True as well when the node does not answer: reconcile() follows every hash of the row."""
    with read_session() as db:
        row = db.get(Payment, row_id)
        others = [h for h in _hashes(row) if h != tx_hash] if row is not None else []
    if not others:
        return False
    try:
        return bool(_known_hashes(web3_for(chain), others))
    except (*_NETWORK_ERRORS, Web3RPCError):
        return True


def _refused(
    acct: LocalAccount, chain: ChainConfig, row_id: int, tx_hash: str, nonce: int, price: int, msg: str
) -> bool:
    """A send the node refused: the payment failed. The row keeps its nonce with a 0-value transfer
    to the relayer itself in place of the pay(), which reconcile() sends and follows like any other
    until the nonce is consumed, and keeps the pay()'s hash: a refusal may come from one backend of
    a provider while another has the pay() in its pool, and if that is the one mined, the payment
    was made. (Given back when it was the newest nonce, the pay() mined after all left the payment
    failed and settled, its hash gone, while the merchant was paid.) Only while the row still holds
    the refused pay(), `tx_hash`: reconcile() takes no nonce lock, and may have re-sent it since,
    been refused for its price and replaced it, the replacement mined (failed and filled, that
    paid payment was announced failed). -> whether the payment was failed."""
    relayer = acct.address.lower()
    with _chain_lock(chain, relayer), get_session() as db:
        _lock_nonces(db, chain.chain_id, relayer, row_id)
        if not _hold_rows(db, {row_id: tx_hash}):
            return False  # rolled back as the session closes
        row = _stored_payment(db, row_id)
        row.status, row.reason, row.updated_at = "failed", f"relay_rejected: {msg}"[:255], now_epoch()
        row.old_tx_hashes = " ".join(_hashes(row))
        row.raw_tx, row.tx_hash = _sign(acct, chain, acct.address, "0x", FILLER_GAS, price, nonce)
        row.sent_at = None
        _set_activity(db, row)
        db.add(row)
        db.commit()
    # The operator's only word of it: an underfunded relayer's refusals ("insufficient funds")
    # pass its balance floor's check, which counts no gas price.
    log.warning(
        "payment %s failed: chain %s refused relayer %s's send (nonce %s): %s",
        row.payment_id,
        chain.chain_id,
        acct.address,
        nonce,
        msg,
    )
    announce_final([row])
    return True


def _hold_rows(db: Session, holding: dict[int, str]) -> set[int]:
    """Of these rows (id -> the hash of the transaction its writer read it with), the ids of those
    that still hold it, unsettled, taken in one UPDATE that holds them until `db`'s transaction
    ends (PostgreSQL: their row locks; SQLite: the write lock). The writers of a sent row share no
    lock (reconcile() takes none of the nonce lock), so each writes only over what it read."""
    if not holding:
        return set()
    table = Payment.__table__  # type: ignore[attr-defined]  # not the ORM's UPDATE: nothing synchronised
    with db.no_autoflush:  # the session's own changes go in after it, if at all
        held = db.execute(
            update(table)
            .where(tuple_(table.c.id, table.c.tx_hash).in_(list(holding.items())), table.c.settled.is_(False))
            .values(updated_at=now_epoch())
            .returning(table.c.id)
        )
        return set(held.scalars())


# ---------------------------------------------------------------- following


def _failure_reason(w3, row: Payment, receipt) -> str:
    block = w3.eth.get_block(receipt["blockNumber"])
    if row.deadline is not None and block["timestamp"] > row.deadline:
        return "expired"
    try:  # replay the call on the state before that block to learn which error it was
        tx = w3.eth.get_transaction(receipt["transactionHash"])
        w3.eth.call(
            {"from": tx["from"], "to": tx["to"], "data": tx["input"], "gas": tx["gas"]}, receipt["blockNumber"] - 1
        )
    except Exception as e:  # noqa: BLE001 (any revert shape)
        return revert_reason(getattr(e, "data", None))
    return "reverted"


def _hashes(row: Payment) -> list[str]:
    return [h for h in [row.tx_hash, *(row.old_tx_hashes or "").split()] if h]


def _topic(address: str) -> str:
    return "0x" + "00" * 12 + address.lower()[2:]


def _paid_by_another_tx(w3, row: Payment, receipt) -> str | None:
    """The transaction that paid exactly this payment (someone else submitted the same signed
    Pay before ours, which then reverted Replayed), or None. Replaying our call on the block
    before cannot tell: the other one may be earlier in the same block."""
    found = _paid_tx(w3, row, receipt["to"], receipt["blockNumber"])
    return None if found is None else found[0]


def _paid_elsewhere(chain: ChainConfig, rows: list[Payment]) -> tuple[dict[int, str], set[int]]:
    """Of these queued payments (their check reverted Replayed), those paid on chain in a final
    block (is_final): row id -> the transaction that paid it; and the ids of those paid in a block
    not final yet (kept queued: a reorganisation may still replace it, and then the relayer sends
    the payment itself; settled at once, the payment stayed ok with no Paid on the chain). Raises
    what web3 raises."""
    if not rows:
        return {}, set()
    w3 = web3_for(chain)
    head = w3.eth.block_number
    paid, not_final = {}, set()
    for row in rows:
        found = _paid_tx(w3, row, cast(str, chain.payment_contract), head)
        if found is None:
            continue
        paid_by, block = found
        if is_final(block, head, chain.index_confirmations):
            paid[stored_id(row)] = paid_by
        else:
            not_final.add(stored_id(row))
    return paid, not_final


def _paid_tx(w3, row: Payment, payment_contract: str, block: int) -> tuple[str, int] | None:
    """The transaction whose Paid event is exactly this payment, in the PAID_LOOKBACK_BLOCKS up to
    `block`, and the block it is in; or None. Paid is matched on its indexed (paymentRef, merchant,
    from) and then on token and amount."""
    if row.merchant_address is None:
        return None
    event = contract("NewblPayment2").events.Paid()
    logs = w3.eth.get_logs(
        {
            "address": payment_contract,
            "fromBlock": max(0, block - PAID_LOOKBACK_BLOCKS),
            "toBlock": block,
            "topics": [event.topic, row.payment_id, _topic(row.merchant_address), _topic(row.from_address)],
        }
    )
    for entry in logs:
        args = event.process_log(entry)["args"]
        if args["token"].lower() == row.token_address and str(args["amount"]) == row.amount:
            return "0x" + bytes(entry["transactionHash"]).hex(), int(entry["blockNumber"])
    return None


def _apply_receipt(db, row: Payment, w3, tx_hash: str, receipt, final: bool = True) -> None:
    """The status a receipt gives; the row is settled once its block is final, followed until then
    (mined_in: a reorganisation that drops or moves the transaction is seen, _reorganised)."""
    row.tx_hash, row.settled, row.mined_in = tx_hash, final, receipt.get("blockHash")
    if receipt.get("effectiveGasPrice") is not None:  # else the gas limit's cost stays (more, never less)
        # On an OP-stack chain the L1 data fee is paid too, often as much again (the budget counts it).
        row.gas_cost_wei = gas_cost(receipt["gasUsed"], receipt["effectiveGasPrice"]) + receipt.get("l1Fee", 0)
    if _is_filler(row, receipt):
        pass  # the filler of a refused send's nonce: its receipt only settles the nonce
    elif receipt["status"] == 1:
        row.status, row.reason = "ok", None
    elif (paid_by := _paid_by_another_tx(w3, row, receipt)) is not None:
        # Ours reverted (Replayed) because someone else submitted the same signed payment first
        # (e.g. copied from the mempool): the user's payment is made, so it is ok.
        log.warning("payment %s was submitted by another account first (%s)", row.payment_id, paid_by)
        row.old_tx_hashes = " ".join(h for h in _hashes(row) if h != paid_by)
        row.tx_hash, row.status, row.reason = paid_by, "ok", None
    else:
        row.status, row.reason = "failed", _failure_reason(w3, row, receipt)
    row.updated_at = now_epoch()
    _set_activity(db, row)
    db.add(row)


def _is_filler(row: Payment, receipt) -> bool:
    """Whether the mined transaction is the filler of a refused send (a transfer to the relayer
    itself), not the refused pay() mined after all (its hash is kept, see _refused)."""
    return _filled(row) and (receipt.get("to") or "").lower() == (row.relayer_address or "").lower()


def _filled(row: Payment) -> bool:
    """Whether the row's nonce went to the filler of a refused send (its status is not a receipt's)."""
    return row.status == "failed" and (row.reason or "").startswith("relay_rejected")


def _reorganised(row: Payment) -> None:
    """A row whose receipt was read from a block that is no longer the chain's (mined_in): the
    transaction is not mined now, so the payment is on its way again, and the rest of the pass
    follows it as a sent one (re-sent, same nonce and hash, when the node no longer has it: its
    nonce is free again, and the relayer's next nonces wait behind it)."""
    log.warning("payment %s: its block %s was reorganised away, followed again", row.payment_id, row.mined_in)
    row.mined_in = None
    if not _filled(row):
        row.status, row.reason = "pending", None


def reconcile(chain: ChainConfig, now: Callable[[], int] = now_epoch) -> dict[str, int]:
    """Brings every unsettled relayed payment of this chain up to date (see module doc).
    Returns counters {ok, failed, resent, replaced, pending} for logs and tests. One process at a
    time does it (exclusive_turn; the others skip the pass): two re-pricing the same payment from
    two gas price reads would each write its own transaction's hash over the other's, and the one
    mined could then be taken for none of ours (the payment 'dropped', failed, though paid)."""
    acct = relayer_account()
    with exclusive_turn(f"relayer-reconcile:{chain.chain_id}:{acct.address.lower()}") as mine:
        return _reconcile(chain, acct, now) if mine else _no_counts()


def _no_counts() -> dict[str, int]:
    return dict(ok=0, failed=0, resent=0, replaced=0, pending=0)


def _reconcile(chain: ChainConfig, acct: LocalAccount, now: Callable[[], int]) -> dict[str, int]:
    relayer = acct.address.lower()
    w3 = web3_for(chain)
    counts = _no_counts()
    final: list[Payment] = []  # the rows that became ok or failed in this pass
    with get_session() as db:
        rows = crud.unsettled_payments(db, chain.chain_id)
        if not rows:
            return counts
        loaded = _load(db, [], [row.activity_id for row in rows if row.activity_id is not None])  # noqa: F841
        try:
            # Order matters: nonce and time first, receipts after (a tx mined in between is seen).
            node = _node_now(w3, acct.address)
            receipts = _receipts(w3, [h for row in rows for h in _hashes(row)])
            unmined = [h for row in rows if not any(h in receipts for h in _hashes(row)) for h in _hashes(row)]
            known = _known_hashes(w3, unmined)
        except (*_NETWORK_ERRORS, Web3RPCError):
            return counts
        stuck_after = get_settings().relayer_stuck_seconds

        stale: set[int] = set()  # the rows another writer changed during the pass (_keep_current)

        def owed(db_: Session) -> set[int]:  # before each commit: what is still ours, and its webhooks
            stale.update(_keep_current(db_, rows))
            merchant_webhooks.enqueue_paid(db_, [row for row in rows if stored_id(row) not in stale], receipts)
            return stale

        # Every RPC of the usual pass is above; the writes go in at the commit (no autoflush), so
        # SQLite's write lock is not held across the rare path's RPCs (re-sends, failure reasons).
        with db.no_autoflush:
            for row in rows:
                before = _followed(row)
                tx_hash, receipt = next(((h, receipts[h]) for h in _hashes(row) if h in receipts), (None, None))
                if receipt is None and row.mined_in is not None:
                    _reorganised(row)  # then followed below as a sent transaction
                if tx_hash is not None and receipt is not None:
                    # The head was read before the receipts: one mined since is in a block past it.
                    head = max(node.head, receipt["blockNumber"])
                    deep = is_final(receipt["blockNumber"], head, chain.index_confirmations)
                    if (row.tx_hash, row.mined_in) == (tx_hash, receipt.get("blockHash")):
                        row.settled = deep  # its status is known: waiting for its block to be final
                    else:
                        _apply_receipt(db, row, w3, tx_hash, receipt, deep)
                        counts[row.status] += 1
                elif row.relayer_address != relayer:
                    # Sent with a key this relayer no longer holds (RELAYER_PRIVATE_KEY replaced):
                    # followed to its receipt, never re-sent or re-priced; past its deadline its
                    # pay() can only revert, so it is failed and settled, and its payer's next
                    # payments no longer wait for it.
                    if row.deadline is not None and node.timestamp > row.deadline:
                        if row.status == "pending":
                            row.status, row.reason = "failed", "expired"
                        row.settled = True
                        counts["failed"] += 1
                    else:
                        counts["pending"] += 1
                elif _relayed(row).nonce < node.mined_nonce:
                    seen = any(h in known for h in _hashes(row))
                    if seen or not _vanished_for(stored_id(row), DROPPED_AFTER_SECONDS):
                        counts["pending"] += 1  # mined (its receipt comes later), or not gone for long yet
                    else:
                        # Its nonce went to a transaction that is none of ours: this payment never ran.
                        _vanished.pop(stored_id(row), None)
                        row.settled = True
                        if row.status == "pending":
                            row.status, row.reason = "failed", "dropped"
                        counts["failed"] += 1
                else:
                    if row.status == "pending" and row.deadline is not None and node.timestamp > row.deadline:
                        row.status, row.reason = "failed", "expired"
                    counts["pending"] += 1
                    if row.sent_at is None or row.tx_hash not in known:
                        outcome, msg = _send_raw(chain, _relayed(row).raw_tx)
                        if outcome == SendOutcome.SENT:
                            # The first send's time is kept: one the node keeps losing is re-priced
                            # when it has waited as long as one it keeps (below).
                            row.sent_at = row.sent_at or now()
                            counts["resent"] += 1
                        elif _priced_out(outcome, msg, row.sent_at, now(), stuck_after) and _replace(
                            chain, acct, row, node.gas_price, now, owed
                        ):
                            counts["replaced"] += 1
                        else:
                            _warn_changed(
                                row.payment_id, "re-send of payment %s (nonce %s) gave %s: %s", row.nonce, outcome, msg
                            )
                    elif (
                        (
                            (waited := now() - row.sent_at) >= stuck_after
                            and _holds_up(row, node.mined_nonce, node.gas_price)
                        )
                        or _left_out(row, node.mined_nonce, node.pool_nonce, waited)
                    ) and _replace(chain, acct, row, node.gas_price, now, owed):
                        counts["replaced"] += 1
                if row.status != before[0] and row.status != "pending":
                    final.append(row)  # final, or a refused send's pay() found mined after all (ok)
                if _followed(row) != before:  # a payment still waiting for its block is not rewritten
                    row.updated_at = now_epoch()
                    _set_activity(db, row)
                    db.add(row)
        # One write per pass: receipts are learnt again after a crash, re-sends are of the same
        # raw transaction, and a replacement is persisted before its send (_replace).
        owed(db)  # in the same transaction as the settlement
        db.commit()
    # After the commit: the waiters are handed the committed status (not a change dropped as stale).
    announce_final([row for row in final if stored_id(row) not in stale])
    return counts


def _keep_current(db: Session, rows: list[Payment]) -> set[int]:
    """Before a reconcile() commit: the rows the pass changed are held (_hold_rows) if each still
    holds the transaction the pass read it with; the ids of the others, which another writer
    changed meanwhile, are returned with the pass's changes to them dropped (expired: read again
    as that writer left them). send_queued's bookkeeping of a send it had in flight writes rows
    under the nonce lock, which reconcile() does not take: a copy read before _refused committed
    its filler, written over it after, dropped the filler's hash."""
    with db.no_autoflush:
        changed = {stored_id(row): row for row in rows if db.is_modified(row)}
        read = {row_id: _as_read(row) for row_id, row in changed.items()}
        stale = set(changed) - _hold_rows(db, {row_id: h for row_id, h in read.items() if h is not None})
        for row_id in stale:
            row = changed[row_id]
            log.warning(
                "payment %s was changed by another writer during the follow pass: left as it is", row.payment_id
            )
            activity = crud.get_activity(db, row.activity_id) if row.activity_id is not None else None
            db.expire(row)
            if activity is not None:
                db.expire(activity)  # _set_activity's copy of the row's changes
    return stale


def _as_read(row: Payment) -> str | None:
    """The row's tx_hash as the session read (or last committed) it, whatever the pass set since."""
    history = inspect(row).attrs.tx_hash.history
    return next(iter([*history.deleted, *history.unchanged]), None)


LEFT_OUT_SECONDS = 2.0


class _NodeNow(NamedTuple):
    mined_nonce: int  # the relayer's next nonce in the latest block
    pool_nonce: int  # the same counting the node's pool of ready transactions
    timestamp: int  # the latest block's
    gas_price: int
    head: int = 0  # the latest block's number


def _node_now(w3, address: str) -> _NodeNow:
    """The node's state a follow pass starts from, in one JSON-RPC batch: four web3 calls were four
    round trips and, with web3's formatting, a third of the pass's CPU. Web3RPCError for an error."""
    calls: list[tuple[str, list]] = [
        ("eth_getTransactionCount", [address, "latest"]),
        ("eth_getTransactionCount", [address, "pending"]),
        ("eth_getBlockByNumber", ["latest", False]),
        ("eth_gasPrice", []),
    ]
    answers = _batch(w3, calls)
    try:
        mined, pool, block, price = (answer["result"] for answer in answers)
        return _NodeNow(
            int(mined, 16), int(pool, 16), int(block["timestamp"], 16), int(price, 16), int(block["number"], 16)
        )
    except (KeyError, TypeError, ValueError) as e:
        raise Web3RPCError(f"unexpected answer to the follow pass's reads: {answers!r}") from e


def _left_out(row: Payment, mined_nonce: int, pool_nonce: int, waited: int) -> bool:
    """Whether the node has left this payment's transaction out: the next nonce to be mined, sent
    LEFT_OUT_SECONDS ago, known to the node (else it is re-sent) and yet not among its ready
    transactions (its pending count stops before it). Such a node never mines it: anvil loses one
    of a batch of sends now and then, with the later nonces queued behind it, until a replacement
    comes (relayer_stuck_seconds). Replaced at once, but only the first time: a provider whose
    pending count lags must not drive the price up on every pass. `waited`: seconds since it was sent."""
    return _relayed(row).nonce == mined_nonce == pool_nonce and not row.old_tx_hashes and waited >= LEFT_OUT_SECONDS


# A node's refusal of a transaction for its price (geth, reth, anvil, Erigon, Nethermind, Besu).
_PRICE_REFUSALS = ("underpriced", "less than block base fee", "fee too low", "feetoolow", "below minimum")


def _priced_out(outcome: str, msg: str, sent_at: int | None, now: int, stuck_after: float) -> bool:
    """Whether a refused re-send (the node knows the transaction no more) is replaced at a higher
    price: the node names its price as the reason (it was evicted under a price rise and is taken
    back at none below it), or it was sent relayer_stuck_seconds ago. Not for 'replacement
    underpriced': the node holds another of our transactions with this nonce, so it is not lost."""
    if outcome != SendOutcome.REJECTED or "replacement" in msg.lower():
        return False
    return any(s in msg.lower() for s in _PRICE_REFUSALS) or (sent_at is not None and now - sent_at >= stuck_after)


def _holds_up(row: Payment, mined_nonce: int, gas_price_now: int) -> bool:
    """Whether re-pricing a transaction that has waited relayer_stuck_seconds can speed anything
    up: the next nonce to be mined (the one the chain waits for), or a later one priced below the
    node's price now (it would be stuck in its turn: re-priced now, it goes in the same block as
    the earlier ones). One that only waits behind an earlier nonce is left as it is: its price was
    enough, and every relayer_stuck_seconds of waiting would raise it by GAS_BUMP_PERCENT, up to
    the caps, to be mined that dear."""
    sent = _relayed(row)
    return sent.nonce == mined_nonce or int(sent.gas_price) < gas_price_now


DROPPED_AFTER_SECONDS = 30.0
# payment row id -> time.monotonic() it was first seen consumed and unknown (not the payment id:
# several users' payments of one merchant ref share it)
_vanished: dict[int, float] = {}


def _vanished_for(row_id: int, seconds: float) -> bool:
    """Whether this payment's nonce has been seen consumed, with none of its transactions known to
    the node, for `seconds` (counted from the first such pass of this process)."""
    if len(_vanished) >= 10_000:
        _vanished.clear()
    return time.monotonic() - _vanished.setdefault(row_id, time.monotonic()) >= seconds


# (payment id, kind) -> the last warning of that kind logged about it by reconcile()
_warned: dict[tuple[str, str], str] = {}


def _warn_changed(payment_id: str, message: str, *args: object) -> None:
    """A warning about one payment's transaction (`message`'s first %s is its id), logged only when
    it differs from the last one of its kind (`message`) logged about that payment in this process:
    reconcile() meets the same refusal on every pass (five a second while one is unsettled), and an
    operator needs its first line and its changes, not a line per pass. Per kind: a pass may give
    two (a re-send refused, then no room to re-price), which alternated would each be new."""
    line = message % (payment_id, *args)
    with _state_lock:
        if _warned.get((payment_id, message)) == line:
            return
        if len(_warned) >= 10_000:
            _warned.clear()
        _warned[(payment_id, message)] = line
    log.warning("%s", line)


def _followed(row: Payment) -> tuple:
    """What reconcile() may change on a row."""
    return (
        row.status,
        row.reason,
        row.settled,
        row.tx_hash,
        row.old_tx_hashes,
        row.raw_tx,
        row.gas_price,
        row.sent_at,
        row.mined_in,
    )


def _known_hashes(w3, hashes: list[str]) -> set[str]:
    """Which of these transactions the node knows (mined or in its mempool), in one JSON-RPC batch."""
    if not hashes:
        return set()
    answers = _batch(w3, [("eth_getTransactionByHash", [h]) for h in hashes])
    return {h for h, answer in zip(hashes, answers, strict=True) if answer.get("result")}


def _replace(
    chain: ChainConfig, acct: LocalAccount, row: Payment, gas_price_now: int, now, owed: Callable[[Session], set[int]]
) -> bool:
    """Same nonce, same call, higher gas price (within the chain's caps; False when they leave no
    room). Persisted before the send, and every hash is kept: whichever of them is mined is found
    by its receipt. The commit that persists it also commits the pass's rows settled so far, so
    `owed` adds their merchants' webhooks to it: a pass that died after it lost them for good. A row
    another writer changed since the pass read it is not replaced (False; _keep_current)."""
    sent = _relayed(row)
    old = decode_raw_tx(sent.raw_tx)
    if old.to is None:
        raise ValueError(f"payment {row.payment_id}: the relayed transaction has no recipient")
    old_raw, old_hash, old_price, old_hashes = row.raw_tx, row.tx_hash, row.gas_price, row.old_tx_hashes
    old_cost = row.gas_cost_wei
    price = bumped_gas_price(int(sent.gas_price), gas_price_now, gas_price_cap(chain, gas_price_now))
    if price is None:
        _warn_changed(
            row.payment_id,
            "payment %s (nonce %s) stuck at gas price %s: the chain's cap leaves no room to re-price",
            row.nonce,
            sent.gas_price,
        )
        return False
    raw, tx_hash = _sign(acct, chain, old.to, old.data, old.gas_limit, price, sent.nonce)
    row.old_tx_hashes = " ".join(_hashes(row))
    row.raw_tx, row.tx_hash, row.gas_price, row.sent_at = raw, tx_hash, str(price), None
    row.gas_cost_wei = gas_cost(old.gas_limit, price)
    if not _commit(row, owed):
        return False
    outcome, msg = _send_raw(chain, raw)
    if outcome == SendOutcome.SENT:
        row.sent_at = now()
    elif outcome != SendOutcome.UNKNOWN:
        _warn_changed(row.payment_id, "replacement of payment %s (nonce %s) refused: %s", row.nonce, msg)
        # As it was: the refused one never reached the node's pool (and its hash, kept, would
        # add one to the row at every refused attempt).
        row.raw_tx, row.tx_hash, row.gas_price, row.sent_at = old_raw, old_hash, old_price, now()
        row.old_tx_hashes, row.gas_cost_wei = old_hashes, old_cost
    return True


def _commit(row: Payment, owed: Callable[[Session], set[int]]) -> bool:
    """Commits the pass so far; -> whether `row`'s changes were written (`owed`: the ids dropped)."""
    db = object_session(row)
    if db is None:
        raise ValueError(f"payment {row.payment_id} is not attached to a session")
    db.add(row)
    dropped = owed(cast(Session, db))  # the reconcile pass's sqlmodel Session
    db.commit()
    return stored_id(row) not in dropped
