"""Merchant payments: quotes (with the approve transaction when the allowance is short),
server-side checks of the signed Pay message, relaying (services.relayer), status.

Typed data (design.md section 4): domain {name "NewblPayment2", version "1", chainId,
verifyingContract = the chain's payment_contract};
Pay(address merchant,address token,address from,uint256 amount,bytes32 paymentRef,uint48 deadline)
with paymentRef = the quote's payment_id. Amounts are integer strings in the smallest unit.

Decisions:
- available = allowance(user -> payment contract) >= amount AND balance >= amount. A short
  balance gives available=false, transaction=null, reason="insufficient_balance" (approving
  would not help, so the client should stop instead of polling).
- A quote poll for the same (user, address, chain, token, amount[, merchant]) while an unused
  quote younger than settings.payment_quote_ttl_seconds exists returns that same payment_id,
  so the 1 s polls after an approve do not pile up quotes.
- The public payment id (execute's `id`, status's `id`) is the payment_id itself.
- A merchant link's `ref` (issue 14 item 6) is taken as the payment_id, so the merchant finds the
  payment by its own order. Payment ids are unique per user, as the contract keeps a paymentRef
  per payer: the user's own quote or payment holds the ref for that user (payment_ref_used for
  another amount or merchant, or once executed), until a quote never executed lapses a minute
  after its TTL, or a payment fails for good (failed and settled: nothing of it can be mined any
  more; the user may then pay the order again, and a status read names the newest). Another
  user's quote or failed payment holds nothing: one who guessed an order's ref (they are often
  sequential) and quoted it, or let a payment of it fail, stopped the real customer from paying
  that order. Another user's payment of the same order (ref, chain, merchant,
  token and amount), executed and not failed, refuses it (payment_ref_used at the quote and, under
  the ref's lock, at execute's claim): the order is paid, and paying it again moves money twice.
- execute is idempotent per payment_id: a repeat with the same chain/token/amount/merchant
  returns the same id and sends nothing; a different merchant for a used id is refused.
- The relayer's gas is guarded (issue 12): only the chain's payment_tokens are quoted or
  executed (checked before any chain read); the deadline must be between
  settings.payment_min_deadline_seconds and payment_max_deadline_seconds ahead; a quote older
  than payment_quote_ttl_seconds is expired; a pay() that needs more gas than the chain's
  max_pay_gas is refused (its gas limit is its estimate + 25%, capped there); per-user quotas (new quotes
  and executes per hour, open quotes at a time) are counted in the database;
  relayer.check_ready() refuses payments while the node's gas price is above the chain's cap
  or the relayer's balance is below its floor, and relayer.check_budget() while its gas spend
  in the last hour has reached the chain's relayer_max_spend_wei_per_hour. An executed payment
  counts max_pay_gas x the gas price from its claim on (Payment.gas_cost_wei; the relayer brings
  it down to the real cost). The quotas and the budget are counted again after each write,
  under locks (core.db.lock_until_commit), so requests racing on several workers cannot pass
  them together.
- Gasless payments (issue 14): when the allowance is short and the token has EIP-2612 permit
  (chains.permit_domain), the quote offers `permit`, the Permit typed data (owner = payer,
  spender = the payment contract, value = amount, the token's current nonce, deadline = now +
  PERMIT_DEADLINE_SECONDS), instead of an approve transaction. execute then takes the signed
  permit {owner, spender, value, nonce, deadline, signature}, checks every field and the
  signature, and the relayer submits payWithPermit (permit + pay in one transaction, the relayer
  paying the gas). A permit whose nonce the token has moved past (used, e.g. front-run from the
  mempool) is dropped when the allowance it gave is there: plain pay() then.
"""

from __future__ import annotations

import functools
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar

from eth_account import Account
from eth_account.messages import SignableMessage, encode_typed_data
from eth_utils import keccak
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from wallet_app import crud
from wallet_app.core.config import get_settings
from wallet_app.core.db import get_session, lock_until_commit, read_session
from wallet_app.errors import AppError
from wallet_app.models import Payment, User, now_epoch, stored_id
from wallet_app.services import activity, payment_watch, relayer, tokens
from wallet_app.services import chain as chains
from wallet_app.services.eth import (
    checksum,
    parse_address,
    parse_chain_id,
    parse_uint256,
)
from wallet_app.services.merchant_links import parse_ref as parse_payment_id  # a payment's id is its ref

UINT48_MAX = 2**48 - 1
# A link without a ref paid again within this long is announced first (recent_payment): the page
# remembers one finished payment per tab, so a second tab or device offered Pay again.
RECENT_PAYMENT_SECONDS = 15 * 60
# An execute's chain reads, dry run and locks come between its quote's TTL check and its claim:
# the executes quota looks this much further back among the quotes made (_executed_in_the_hour).
CLAIM_SLACK_SECONDS = 300
PERMIT_DEADLINE_SECONDS = 300  # the quote's permit: as short as the Pay deadline (specification section 9)

PAY_DOMAIN_NAME, PAY_DOMAIN_VERSION = "NewblPayment2", "1"
PAY_TYPES = [
    {"name": "merchant", "type": "address"},
    {"name": "token", "type": "address"},
    {"name": "from", "type": "address"},
    {"name": "amount", "type": "uint256"},
    {"name": "paymentRef", "type": "bytes32"},
    {"name": "deadline", "type": "uint48"},
]
PERMIT_TYPES = [
    {"name": "owner", "type": "address"},
    {"name": "spender", "type": "address"},
    {"name": "value", "type": "uint256"},
    {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]
DOMAIN_TYPES = [
    {"name": "name", "type": "string"},
    {"name": "version", "type": "string"},
    {"name": "chainId", "type": "uint256"},
    {"name": "verifyingContract", "type": "address"},
]


# ---------------------------------------------------------------- pure parsing


def parse_signature(value: object, code: str = "invalid_signature") -> bytes:
    if not isinstance(value, str) or not re.fullmatch(r"0x[0-9a-fA-F]{130}", value.strip()):
        raise AppError(code, "signature must be 0x and 65 bytes of hex")
    return bytes.fromhex(value.strip()[2:])


def pay_typed_data(chain_id: int, verifying_contract: str, message: dict) -> dict:
    """The full EIP-712 message as eth-account's encode_typed_data and the browser's signTypedData take it."""
    return {
        "types": {"EIP712Domain": DOMAIN_TYPES, "Pay": PAY_TYPES},
        "primaryType": "Pay",
        "domain": {
            "name": PAY_DOMAIN_NAME,
            "version": PAY_DOMAIN_VERSION,
            "chainId": chain_id,
            "verifyingContract": verifying_contract,
        },
        "message": message,
    }


def _type_hash(name: str, fields: list[dict[str, str]]) -> bytes:
    return keccak(text=f"{name}(" + ",".join(f"{f['type']} {f['name']}" for f in fields) + ")")


def _word(kind: str, value: Any) -> bytes:
    """One static EIP-712 field as its 32-byte encoding (the only kinds Pay and its domain use)."""
    if kind in ("address", "bytes32"):  # 0x hex of 20 or 32 bytes, left-padded to a word
        raw = bytes.fromhex(str(value)[2:])
        if len(raw) != (20 if kind == "address" else 32):
            raise ValueError(kind)
        return raw.rjust(32, b"\0")
    bits = int(kind.removeprefix("uint"))
    if not isinstance(value, int) or not 0 <= value < 2**bits:
        raise ValueError(kind)
    return value.to_bytes(32, "big")


_PAY_TYPE_HASH = _type_hash("Pay", PAY_TYPES)


@functools.lru_cache(maxsize=64)
def _pay_domain_separator(chain_id: int, verifying_contract: str) -> bytes:
    return keccak(
        _type_hash("EIP712Domain", DOMAIN_TYPES)
        + keccak(text=PAY_DOMAIN_NAME)
        + keccak(text=PAY_DOMAIN_VERSION)
        + _word("uint256", chain_id)
        + _word("address", verifying_contract)
    )


def pay_signable(chain_id: int, verifying_contract: str, message: dict) -> SignableMessage:
    """What encode_typed_data(pay_typed_data(...)) gives, in a tenth of its time: Pay's fields are
    all static, so its struct hash is one keccak over fixed words (execute checks one per call)."""
    body = keccak(_PAY_TYPE_HASH + b"".join(_word(f["type"], message[f["name"]]) for f in PAY_TYPES))
    return SignableMessage(b"\x01", _pay_domain_separator(chain_id, verifying_contract), body)


def recover_pay_signer(chain_id: int, verifying_contract: str, message: dict, signature: bytes) -> str | None:
    """The address that signed the Pay message, or None for a signature that does not recover."""
    try:
        return Account.recover_message(pay_signable(chain_id, verifying_contract, message), signature=signature)
    except Exception:  # noqa: BLE001 (malformed v/r/s in many shapes)
        return None


def permit_typed_data(domain: chains.PermitDomain, message: dict) -> dict:
    """The EIP-2612 Permit typed data of a token (message: owner, spender, value, nonce, deadline)."""
    return {
        "types": {"EIP712Domain": DOMAIN_TYPES, "Permit": PERMIT_TYPES},
        "primaryType": "Permit",
        "domain": domain.as_typed(),
        "message": message,
    }


def recover_typed_signer(typed: dict, signature: bytes) -> str | None:
    """The address that signed the typed data, or None for a signature that does not recover."""
    try:
        return Account.recover_message(encode_typed_data(full_message=typed), signature=signature)
    except Exception:  # noqa: BLE001 (malformed v/r/s in many shapes)
        return None


class SignedPermit(TypedDict):
    """A checked permit as the payment row keeps it (Payment.permit, JSON) for the relayer."""

    value: int
    deadline: int
    signature: str  # 0x + 65 bytes


def parse_permit(value: object) -> dict[str, object]:
    if not isinstance(value, dict) or set(value) != {"owner", "spender", "value", "nonce", "deadline", "signature"}:
        raise AppError("invalid_permit", "permit must have owner, spender, value, nonce, deadline and signature")
    return value


# ---------------------------------------------------------------- quote


def _payment_contract(chain: chains.ChainConfig) -> str:
    if not chain.payment_contract:
        raise AppError("payments_unavailable", f"no payment contract on chain {chain.chain_id}")
    return chain.payment_contract


def _payment_chain(chain_id: object) -> chains.ChainConfig:
    chain = chains.get_chain(parse_chain_id(chain_id, code="unsupported_chain"))
    _payment_contract(chain)
    return chain


def _user_address(user: User) -> str:
    if not user.address:
        raise AppError("no_address", "the session has no wallet address yet")
    return checksum(user.address)


def _payable_token(chain: chains.ChainConfig, token_address: object) -> str:
    """The token, when it is on the chain's allow-list (payment_tokens of the chains file)."""
    token = parse_address(token_address, code="invalid_token")
    if token not in chain.payment_tokens:
        raise AppError("token_not_payable", f"{token} is not a payment token on chain {chain.chain_id}")
    return token


PAYABLE_INFO_SECONDS = 600.0
_payable_infos: dict[tuple[int, str], tuple[float, chains.TokenInfo]] = {}
_payable_info_locks: dict[tuple[int, str], threading.Lock] = {}  # one per payable token (the allow-list bounds it)
_payable_info_locks_lock = threading.Lock()


def _payable_token_info(user: User, chain: chains.ChainConfig, token: str) -> chains.TokenInfo | None:
    """tokens.token_info of an allow-listed payment token, kept for PAYABLE_INFO_SECONDS: its
    symbol and decimals do not change, and a token outside the configured list costs two chain
    reads per execute. Bounded by the allow-list, so no input can grow it."""
    key = (chain.chain_id, token)
    # One lookup at a time per token: a burst of executes after a start (or an expiry) all missed
    # the cache and each read the database and the chain for the same answer. Per token: the
    # other tokens' executes are not held behind a chain read that hangs.
    with _payable_info_locks_lock:
        lock = _payable_info_locks.setdefault(key, threading.Lock())
    with lock:
        kept = _payable_infos.get(key)
        if kept is not None and time.monotonic() < kept[0]:
            return kept[1]
        info = tokens.token_info(user, chain, token)
        if info is not None:
            _payable_infos[key] = (time.monotonic() + PAYABLE_INFO_SECONDS, info)
        return info


def check_quota(times: list[int], limit: int, window: int, now: int, code: str, what: str, written: int = 0) -> None:
    """Refuses (code, 429) when `times` (the counted entries, oldest first, each counted for
    `window` s) reach `limit`; retry_after: seconds until enough of them leave the window for
    one more (the Retry-After header). `written`: how many of `times` this transaction is making
    (counted again after the write: they take no room of their own)."""
    room = limit + written
    if len(times) >= room:
        leaves_at = times[len(times) - room] + window if room > 0 else now + window
        raise AppError(code, f"{what}: {len(times) - written} of {limit}", retry_after=max(1, leaves_at - now))


def _check_executes_quota(claimed: list[int], now: int, written: int = 0) -> None:
    """The quota of executes per hour over the user's claim times (check_quota)."""
    limit = get_settings().payment_executes_per_hour
    check_quota(claimed, limit, 3600, now, "payment_quota_exceeded", "executes per hour", written)


def _executed_in_the_hour(db: Session, user_id: int, now: int) -> list[int]:
    """When the user's payments of the last hour were executed (crud.claim_times), oldest first.
    A quote is claimed at most its TTL after it was made, give or take an execute's own time
    (its chain reads and locks come between the TTL check and the claim): CLAIM_SLACK_SECONDS."""
    made_after = now - 3600 - get_settings().payment_quote_ttl_seconds - CLAIM_SLACK_SECONDS
    return crud.claim_times(db, user_id, claimed_after=now - 3600, created_after=made_after)


def _check_user_budget(chain: chains.ChainConfig, db: Session, user_id: int, now: int, reserved: int) -> None:
    """Refuses (payment_quota_exceeded) an execute when the user's payments of the last hour had
    reserved settings.payment_user_budget_percent of the chain's budget before it (as check_budget
    does for the whole budget), counted in the execute's transaction under the user's lock after
    its claim reserved `reserved`: the budget pauses payments for everyone once spent, so no one
    account may spend it (paying itself 1 unit, a permit needing no ETH, 30 times an hour did)."""
    budget = chain.relayer_max_spend_wei_per_hour
    if budget is None:
        return
    share = budget * get_settings().payment_user_budget_percent // 100
    before = crud.relayer_spend(db, chain.chain_id, claimed_after=now - 3600, user_id=user_id) - reserved
    if before >= share:
        raise AppError(
            "payment_quota_exceeded", f"this user's payments' gas: {before} of {share} wei", retry_after=3600
        )


def quote(
    user: User, chain_id: object, token_address: object, amount: object, merchant: object = None, ref: object = None
) -> dict:
    """{available, transaction, verifying_contract, payment_id[, reason][, permit]} (see module doc). `ref`: a
    merchant link's paymentRef, used as the payment_id (one payment per ref and user, and one per
    order: payment_ref_used)."""
    chain = _payment_chain(chain_id)
    contract = _payment_contract(chain)
    token = _payable_token(chain, token_address)
    units = parse_uint256(amount)
    merchant_addr = parse_address(merchant, code="invalid_merchant").lower() if merchant not in (None, "") else None
    wanted = parse_payment_id(ref) if ref not in (None, "") else None
    owner = _user_address(user)
    refuse_paying_oneself(merchant_addr, owner)
    request = _QuoteRequest(
        user_id=stored_id(user),
        chain_id=chain.chain_id,
        token_address=token.lower(),
        amount=str(units),
        from_address=owner.lower(),
        merchant_address=merchant_addr,
    )
    payment_id = _open_quote(request, wanted)  # quotas before any chain read; a poll of an open quote is free
    relayer.check_ready(chain)
    allowance, balance = chains.erc20_allowance_and_balance(chain, owner, token, contract)

    result: dict[str, Any] = {
        "available": False,
        "transaction": None,
        "verifying_contract": contract,
        "payment_id": payment_id or _new_quote(request, wanted),
    }
    if balance < units:
        result["reason"] = "insufficient_balance"
    elif allowance < units:
        domain = chains.permit_domain(chain, token)
        if domain is not None:  # gasless: a Permit to sign instead of an approve to send
            message = {
                "owner": owner,
                "spender": contract,
                "value": str(units),
                "nonce": str(chains.permit_nonce(chain, token, owner)),
                "deadline": now_epoch() + PERMIT_DEADLINE_SECONDS,
            }
            result["permit"] = permit_typed_data(domain, message)
        else:
            result["transaction"] = chains.build_erc20_approve(chain, owner, token, contract, units)
        result["reason"] = "allowance_short"
    else:
        result["available"] = True
    return result


def refuse_paying_oneself(merchant: str | None, owner: str) -> None:
    """A payment to the payer's own address moves nothing and only spends the relayer's gas
    (merchant_is_payer; the payment page checks its link with this too). `owner` "": no check."""
    if merchant is not None and merchant.lower() == owner.lower():
        raise AppError("merchant_is_payer", "the merchant is the payer")


class _QuoteRequest(TypedDict):
    user_id: int
    chain_id: int
    token_address: str
    amount: str
    from_address: str
    merchant_address: str | None


def _open_quote(request: _QuoteRequest, ref: str | None = None) -> str | None:
    """The unused quote for the same request (and ref) when there is a fresh one; else None once
    the user's quotas allow a new one (payment_quota_exceeded, too_many_open_quotes). A ref that
    the user's other quote or payment holds, or that another user paid for the same order:
    payment_ref_used."""
    settings = get_settings()
    now = now_epoch()
    with get_session() as db:
        if ref is not None and _order_paid_by_others(db, request, ref):  # also for a poll of the user's quote
            raise AppError("payment_ref_used", "another user paid this order")
        held = crud.get_payment(db, request["user_id"], ref) if ref is not None else None
        if held is not None and not _frees_its_id(held, now):
            same = crud.find_open_quote(db, **request, created_after=now - settings.payment_quote_ttl_seconds)
            if same is None or same.id != held.id:
                raise AppError("payment_ref_used", "another quote or payment of this user holds this ref")
            return held.payment_id
        row = (
            None
            if ref is not None
            else crud.find_open_quote(db, **request, created_after=now - settings.payment_quote_ttl_seconds)
        )
        if row is not None:
            return row.payment_id
        _check_quote_quotas(db, request["user_id"], now)
    return None


def _frees_its_id(row: Payment, now: int) -> bool:
    """Whether the user's payment of an id lets a new quote take the id: a quote never executed
    that lapsed, or a payment failed for good (models.HOLDS_ITS_ID)."""
    lapsed = row.status == "quoted" and row.created_at < _lapsed_before(now)
    return lapsed or (row.status == "failed" and row.settled)


def _order_paid_by_others(db: Session, request: _QuoteRequest, ref: str) -> bool:
    """crud.order_paid_by_others for this request's order (none before a merchant is named)."""
    merchant = request["merchant_address"]
    return merchant is not None and crud.order_paid_by_others(
        db, request["user_id"], ref, request["chain_id"], merchant, request["token_address"], request["amount"]
    )


def _ref_lock(payment_id: str) -> str:
    """The lock under which execute claims a payment of this id (a ref): of two users paying the
    same order at once, the second claim sees the first (crud.order_paid_by_others)."""
    return f"payment-ref:{payment_id}"


def _quota_lock(user_id: int) -> str:
    """The lock under which a user's quotas are counted and a quote or execute written (core.db.
    lock_until_commit): without it two workers could both count the same room and both write."""
    return f"payment-quota:{user_id}"


def _check_quote_quotas(db: Session, user_id: int, now: int, written: int = 0) -> None:
    """The quotas of new quotes per hour and of open quotes (check_quota's `written`: the quote
    this transaction made, when counted again after the write)."""
    settings = get_settings()
    ttl = settings.payment_quote_ttl_seconds
    hourly = crud.quote_times(db, user_id, created_after=now - 3600)
    check_quota(
        hourly, settings.payment_quotes_per_hour, 3600, now, "payment_quota_exceeded", "quotes per hour", written
    )
    open_now = crud.quote_times(db, user_id, created_after=now - ttl, open_only=True)
    check_quota(open_now, settings.payment_open_quotes_max, ttl, now, "too_many_open_quotes", "open quotes", written)


def _lapsed_before(now: int) -> int:
    """A quote never executed and made before this holds its ref no more: the link is quoted afresh
    (by whoever opens it). A minute past the quote's TTL, so that an execute that found it fresh a
    moment ago has long finished with it."""
    return now - get_settings().payment_quote_ttl_seconds - 60


def _new_quote(request: _QuoteRequest, ref: str | None = None) -> str:
    """Writes the quote, its quotas counted again after the write under the user's lock: the
    check in _open_quote is a cheap early refusal, this one holds across workers."""
    now = now_epoch()
    with get_session() as db:
        try:
            lock_until_commit(db, _quota_lock(request["user_id"]))
            if ref is not None:
                crud.drop_unused_quote(db, request["user_id"], ref, created_before=_lapsed_before(now))
            row = crud.add_quote(db, ref or "0x" + secrets.token_bytes(32).hex(), **request)
            _check_quote_quotas(db, request["user_id"], now, written=1)
            db.commit()
        except IntegrityError:  # another quote of this user took this ref a moment ago
            db.rollback()
            raise AppError("payment_ref_used", "another quote of this user holds this ref") from None
        return row.payment_id


# ---------------------------------------------------------------- execute


def execute(
    user: User,
    chain_id: object,
    merchant_address: object,
    token_address: object,
    amount: object,
    payment_id: object,
    deadline: object,
    signature: object,
    permit: object = None,
) -> str:
    """Checks everything, queues pay() (payWithPermit() with a permit) once per payment_id for the
    relayer process, returns the id (= payment_id)."""
    chain = _payment_chain(chain_id)
    contract = _payment_contract(chain)
    merchant = parse_address(merchant_address, code="invalid_merchant")
    token = _payable_token(chain, token_address)
    units = parse_uint256(amount)
    pid = parse_payment_id(payment_id)
    dl = parse_uint256(deadline, code="invalid_deadline")
    sig = parse_signature(signature)
    owner = _user_address(user)
    refuse_paying_oneself(merchant, owner)

    settings = get_settings()
    now = int(time.time())
    with read_session() as db:  # the reads on one pooled connection
        row = crud.payment_columns(db, stored_id(user), pid)
        executed = _executed_in_the_hour(db, stored_id(user), now)
        unmined = crud.payments_unmined(db, chain.chain_id)
    if row is None or row.user_id != user.id:
        raise AppError("unknown_payment")
    if (row.chain_id, row.token_address, row.amount) != (
        chain.chain_id,
        token.lower(),
        str(units),
    ) or row.from_address != owner.lower():
        raise AppError("quote_mismatch", "chain, token or amount differ from the quote")
    if row.merchant_address is not None and row.merchant_address != merchant.lower():
        if row.status != "quoted":
            raise AppError("payment_id_used", "this payment_id already paid another merchant")
        raise AppError("quote_mismatch", "the quote is for another merchant")
    if row.status != "quoted":
        return row.payment_id  # already executed: the same id, nothing sent again

    if dl <= now or row.created_at < now - settings.payment_quote_ttl_seconds:
        raise AppError("expired", "deadline has passed or the quote is too old")
    if dl < now + settings.payment_min_deadline_seconds:
        raise AppError("invalid_deadline", "deadline too near: the relayed transaction needs time")
    if dl > now + settings.payment_max_deadline_seconds or dl > UINT48_MAX:
        raise AppError("invalid_deadline", "deadline too far in the future")
    message = {"merchant": merchant, "token": token, "from": owner, "amount": units, "paymentRef": pid, "deadline": dl}
    signer = recover_pay_signer(chain.chain_id, contract, message, sig)
    if signer is None or signer.lower() != owner.lower():
        raise AppError("bad_signer", "the Pay message is not signed by the session's address")

    _check_executes_quota(executed, now)
    signed_permit = None if permit is None else _checked_permit(chain, token, owner, contract, units, permit, now)

    # Dry run as the relayer, with relayer.check_ready's refusals: refuses what would revert
    # (expired on chain time, allowance, used ref) or cost more gas than the chain's cap, before
    # anything is queued.
    price = relayer.ready_and_dry_run(
        chain, relayer.pay_call(merchant, token, owner, units, pid, dl, sig, signed_permit), unmined
    )
    reserved = relayer.gas_cost(chain.max_pay_gas, price)  # what it may cost, counted from the claim
    info = _payable_token_info(user, chain, token)  # before the claim: a failure here leaves nothing half done

    row_id, user_id = int(row.id), stored_id(user)
    stored_permit = json.dumps(signed_permit) if signed_permit else None

    def claim(db: Session) -> tuple[str, str | None] | None:
        """Claims the quote and queues the payment, with its activity entry, in `db`'s transaction:
        of two concurrent executes exactly one wins. None when claimed here, else the payment's
        (payment_id, merchant) as the winner left it. The executes quota is counted again after
        the claim, under the user's lock: the check above is an early refusal, this one holds
        across workers (a refusal here undoes the claim with the rest of the job). So is the
        chain's budget: concurrent executes each found room for one more before any claimed it."""
        # The chain's budget before the user's, in every execute: one order.
        budget_lock = relayer.budget_lock(chain)
        lock_until_commit(db, *([budget_lock] if budget_lock else []), _quota_lock(user_id), _ref_lock(pid))
        # services.activity owns the table; the relayer keeps the entry's tx_hash and status current.
        activity_id = activity.record_activity(
            user_id,
            "payment",
            chain_id=chain.chain_id,
            token_address=token,
            amount=units,
            counterparty=merchant,
            data={"payment_id": pid},
            token_symbol=info.token_symbol if info else None,
            token_decimals=info.token_decimals if info else None,
            db=db,
        )
        if crud.claim_quote(db, row_id, merchant.lower(), dl, "0x" + sig.hex(), activity_id, stored_permit, reserved):
            if crud.order_paid_by_others(db, user_id, pid, chain.chain_id, merchant.lower(), token.lower(), str(units)):
                raise AppError("payment_ref_used", "another user paid this order")  # undoes the claim
            _check_executes_quota(_executed_in_the_hour(db, user_id, now), now, written=1)
            relayer.check_budget(chain, db, reserved_here=reserved)
            _check_user_budget(chain, db, user_id, now, reserved)
            return None
        crud.delete_activity(db, activity_id)  # not ours to record: the winner has its own
        again = crud.get_payment(db, user_id, pid)
        if again is None:
            raise AppError("unknown_payment")
        return again.payment_id, again.merchant_address

    lost = _group_commit.write(claim)  # the relayer process sends it (relayer.send_queued)
    if lost is not None:
        if lost[1] != merchant.lower():
            raise AppError("payment_id_used", "this payment_id already paid another merchant")
        return lost[0]
    payment_watch.announce_queued(chain.chain_id)
    return row.payment_id


def _checked_permit(
    chain: chains.ChainConfig, token: str, owner: str, contract: str, units: int, permit: object, now: int
) -> SignedPermit | None:
    """The permit, checked field by field and by its signature (invalid_permit), or None when the
    token's nonce moved past it and the allowance is there anyway (nothing to permit)."""
    fields = parse_permit(permit)
    settings = get_settings()
    if parse_address(fields["owner"], code="invalid_permit").lower() != owner.lower():
        raise AppError("invalid_permit", "the permit's owner is not the payer")
    if parse_address(fields["spender"], code="invalid_permit").lower() != contract.lower():
        raise AppError("invalid_permit", "the permit's spender is not the payment contract")
    value = parse_uint256(fields["value"], code="invalid_permit")
    if value < units:
        raise AppError("invalid_permit", "the permit allows less than the amount")
    deadline = parse_uint256(fields["deadline"], code="invalid_permit")
    if not now + settings.payment_min_deadline_seconds <= deadline <= now + settings.payment_max_deadline_seconds:
        raise AppError("invalid_permit", "the permit's deadline is too near or too far")
    nonce = parse_uint256(fields["nonce"], code="invalid_permit", allow_zero=True)
    sig = parse_signature(fields["signature"], code="invalid_permit")
    domain = chains.permit_domain(chain, token)
    if domain is None:
        raise AppError("permit_unsupported", f"{token} has no EIP-2612 permit")
    message = {"owner": owner, "spender": contract, "value": value, "nonce": nonce, "deadline": deadline}
    signer = recover_typed_signer(permit_typed_data(domain, message), sig)
    if signer is None or signer.lower() != owner.lower():
        raise AppError("invalid_permit", "the permit is not signed by the session's address")
    if nonce != chains.permit_nonce(chain, token, owner):
        allowance, _ = chains.erc20_allowance_and_balance(chain, owner, token, contract)
        if allowance >= units:
            return None  # used already (by us or a front-runner): the allowance it gave pays
        raise AppError("permit_nonce_stale", "the token's permit nonce is not the permit's")
    return {"value": value, "deadline": deadline, "signature": "0x" + sig.hex()}


T = TypeVar("T")


class _Write:
    def __init__(self, job: Callable[[Session], Any]) -> None:
        self.job = job
        self.result: Any = None
        self.error: Exception | None = None
        self.done = False


class GroupCommit:
    """Writes that arrive together are committed together: a thread's write(job) runs job(db) in
    a transaction shared with the writes queued meanwhile by this process's other threads, and
    returns once that transaction is committed. One thread at a time writes (the leader) and
    takes every write queued so far: no thread waits for a batch to fill. A commit is what a
    burst of executes waited on: SQLite has one writer at a time and a disk sync per commit
    (about 6 ms here), so 100 executes queued behind 100 syncs; now behind a handful. On
    PostgreSQL a batch spares each write its own connection check, BEGIN and COMMIT round trips:
    CPU of the worker and of the server that a burst was short of (bench/payments: 100 executes
    answered in 0.87-0.94 s against 1.06-1.23 s one transaction each, three runs each). A job
    that raises fails its batch, which is then written again one job per transaction, so only
    the failing one fails (also a deadlock between two workers' batches). Jobs must do nothing
    but database work (they may run twice)."""

    def __init__(self) -> None:
        self._queue: list[_Write] = []
        self._queue_lock = threading.Lock()
        self._leader = threading.Lock()

    def write(self, job: Callable[[Session], T]) -> T:
        entry = _Write(job)
        with self._queue_lock:
            self._queue.append(entry)
        with self._leader:
            if not entry.done:  # not written by the previous leader: lead the next batch
                with self._queue_lock:
                    batch, self._queue = self._queue, []
                self._commit(batch)
        return self._answer(entry)

    @staticmethod
    def _answer(entry: _Write) -> Any:
        if entry.error is not None:
            raise entry.error
        return entry.result

    @staticmethod
    def _commit(batch: list[_Write]) -> None:
        try:
            with get_session() as db:
                for entry in batch:
                    entry.result = entry.job(db)
                db.commit()
        except Exception as e:
            if len(batch) == 1:
                batch[0].error = e
            else:
                for entry in batch:  # rolled back: each alone, so one failure fails only itself
                    GroupCommit._commit([entry])
        finally:
            for entry in batch:
                entry.done = True


_group_commit = GroupCommit()


# ---------------------------------------------------------------- a payment made a moment ago


def recent_payment(user: User, chain_id: int, merchant: str, token: str, units: int) -> tuple[str, int] | None:
    """(payment_id, whole minutes ago, at least 1) of the user's newest payment of exactly this
    merchant, chain, token and amount executed in the last RECENT_PAYMENT_SECONDS and not failed;
    None when there is none. The payment page announces it before paying a link without a ref
    again (one with a ref is refused: payment_ref_used)."""
    now = now_epoch()
    with read_session() as db:
        found = crud.recent_payment(
            db,
            stored_id(user),
            chain_id,
            merchant.lower(),
            token.lower(),
            str(units),
            claimed_after=now - RECENT_PAYMENT_SECONDS,
            # a quote is executed up to its TTL after it was made (a second Pay reuses it)
            created_after=now - RECENT_PAYMENT_SECONDS - get_settings().payment_quote_ttl_seconds,
        )
    if found is None:
        return None
    return found[0], max(1, (now - found[1]) // 60)


# ---------------------------------------------------------------- status


def status(user: User, payment_id: object) -> dict:
    """{status: 'ok' | 'failed' | 'pending', reason?}. Only reads: the relayer process
    (wallet_app.relayer) follows the chain and settles the row."""
    pid = parse_payment_id(payment_id)
    with read_session() as db:
        row = crud.payment_columns(db, stored_id(user), pid)
    if row is None or row.user_id != user.id or row.status == "quoted":
        raise AppError("unknown_payment")
    return payment_watch.status_answer(row.status, row.reason)


async def wait_status(user: User, payment_id: object, wait: float) -> dict:
    """status(), held while it is pending until the relayer has made the payment final or `wait`
    seconds have passed (services.payment_watch): the payer sees it settled at once."""
    pid = parse_payment_id(payment_id)
    return await payment_watch.until_final((stored_id(user), pid), wait, lambda: status(user, pid))
