"""What a /sign transaction does, in words, and whether it is refused (issue 11 items 1 and 3).

Pure functions (table-tested in tests/unit/services/test_txpreview.py), then `load` which
reads what they need from the chain.

The token calls are decoded by services.chain.decode_erc20_call (transfer, transferFrom, approve,
increaseAllowance and increaseApproval, setApprovalForAll, Permit2's approve: only when called on
PERMIT2 itself, call_name); the texts of each are sign_line_<name> in the sign catalogue area.
describe(tx, chain, token) -> Preview: summary lines (catalogue keys + params), warnings,
    the network fee (gas_limit x gas_price, plus an OP-stack chain's L1 data fee, in the native
    coin, rounded up: amounts.format_fee) and the chain's name.
    `token` is the TokenInfo of the call's token (token_of: the called contract, or the token
    Permit2's approve names; None: not an ERC-20, the call is 'Contract call'; setApprovalForAll
    needs none). Approvals (allowance increases, Permit2's too) of UNLIMITED (2^128) or more, and
    setApprovalForAll(operator, true), are shown as unlimited, with a warning. A call with an
    ERC20_CALLS selector is never an unknown 'Contract call': its arguments are
    decoded from the head of its data, and data that is not exactly them (services.chain.
    erc20_call_malformed: a trailing byte still runs the call) is named and warned of, and refused.
label_token(info, listed) / balance_changes(changes, infos, listed): a token of neither the chain's
    configured list nor the user's is named by its shortened address, never by its own symbol()
    (a contract may call itself 'USDC'), with the 'unknown token' warning.
refusal(tx, chain, node_gas_price, native_balance, max_gas_price_multiple, base_fee) -> AppError or None:
    the zero `to`, a malformed ERC-20 call (invalid_tx), a gas price above the multiple of the
    node's, or below the next block's base fee (fee_outdated), fee + value above the balance.
nonce_refusal(nonce, mined, pending_count) -> AppError or None: any nonce but the account's next
    (a replace link's excepted).
matches(signed, tx) -> the signed transaction (services.chain.decode_raw_tx) is the link's, field by field.
counterparty(tx) -> who the transaction gives to (a token call's recipient, spender or operator,
    else `to`), checked by services.activity.recipient_risk against the user's history (item 4).
parse_simulation(answer, owner, shown) -> Simulation: the owner's balance changes per token (the
    zero address: the native coin) from an eth_simulateV1 answer with traceTransfers (native value
    moves are traced as Transfer logs of 0xeeee…eeee), "reverted", or "unavailable" for any
    error or unexpected shape, or a move the balances cannot show (an NFT of the owner's, an
    approval the owner gives but the one the lines show) (item 2; tested with answers recorded
    from anvil 1.7.1). simulate runs it in the next block as near as can be told (next_block); a
    gain it shows is said to be the simulation's word only (sign_warn_gain).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from eth_utils import keccak
from web3.types import RPCEndpoint

from wallet_app.core.config import get_settings
from wallet_app.errors import AppError
from wallet_app.models import User
from wallet_app.services import accounts, activity, tokens
from wallet_app.services import chain as chain_svc
from wallet_app.services.amounts import format_balance, format_fee
from wallet_app.services.chain import (
    ChainConfig,
    DecodedTx,
    TokenInfo,
    decode_erc20_call,
    erc20_call_malformed,
    erc20_call_name,
)
from wallet_app.services.eth import ZERO_ADDRESS, checksum, is_zero, short_address

# Approvals of this or more are shown as unlimited, with a warning: no real token's supply comes near
# 2^128, so such an amount (2^256 - 1, 2^254, 10^60...) lets the spender take all of the token.
UNLIMITED = 2**128
MAX_SHOWN_TIME = 253402300800  # 10000-01-01 UTC: a Permit2 expiration from then on is shown as none
TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
NATIVE_LOG_ADDRESS = "0x" + "ee" * 20  # eth_simulateV1 traceTransfers: native value moves
APPROVAL_TOPIC = "0x" + keccak(text="Approval(address,address,uint256)").hex()
APPROVAL_FOR_ALL_TOPIC = "0x" + keccak(text="ApprovalForAll(address,address,bool)").hex()
# Permit2's: owner, token and spender as topics.
PERMIT2_APPROVAL_TOPIC = "0x" + keccak(text="Approval(address,address,address,uint160,uint48)").hex()
APPROVAL_TOPICS = (APPROVAL_TOPIC, APPROVAL_FOR_ALL_TOPIC, PERMIT2_APPROVAL_TOPIC)
# Uniswap's Permit2: the same address on every chain (CREATE2). Its approve's selector on any other
# contract is that contract's own function, whatever it does.
PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3"


@dataclass(frozen=True)
class Line:
    """A catalogue text: `key`, its {placeholders} from `params`; the params named in `keyed`
    hold catalogue keys themselves (e.g. the word 'unlimited')."""

    key: str
    params: dict[str, str] = field(default_factory=dict)
    keyed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Preview:
    lines: list[Line]
    warnings: list[Line]
    fee: str  # "0.00005 ETH"
    chain_name: str
    selector: str  # "0x12345678" of a call the summary cannot name, else ""
    # The simulated balance changes ("-12.5 tUSD", "+0.1 ETH") and the simulation's status.
    changes: list[str] = field(default_factory=list)
    simulation: str = "unavailable"
    l1_fee: int = 0  # wei: an OP-stack chain's L1 data fee, in `fee` (services.chain.l1_fee)


def call_name(tx: dict[str, str]) -> str | None:
    """services.chain.erc20_call_name of the link's data, but Permit2's approve only when it is called
    on Permit2: an ERC-20 call's contract is checked to be a token (token_of, token_info), and
    Permit2's names its token in its arguments, so nothing else checked what the called contract is."""
    name = erc20_call_name(tx["data"])
    if name == "permit2Approve" and tx["to"].lower() != PERMIT2.lower():
        return None
    return name


def decode_call(tx: dict[str, str]) -> tuple[str, tuple] | None:
    """services.chain.decode_erc20_call of the link's data when call_name names it, else None."""
    return decode_erc20_call(tx["data"]) if call_name(tx) is not None else None


def call_malformed(tx: dict[str, str]) -> bool:
    """services.chain.erc20_call_malformed of the link's data when call_name names it, else False."""
    return call_name(tx) is not None and erc20_call_malformed(tx["data"])


def _amount(units: int, token: TokenInfo) -> str:
    return format_balance(units, token.token_decimals, max_decimals=token.token_decimals)


def _expiration(seconds: int) -> tuple[str, tuple[str, ...]]:
    """Permit2's expiration as shown (the param, and ("expiration",) when it is a catalogue key):
    0 is the block the approval is mined in (Permit2 stores block.timestamp); a time after the
    year 9999 (2^48 - 1 for 'never') is none."""
    if seconds == 0:
        return "sign_expires_at_once", ("expiration",)
    if seconds >= MAX_SHOWN_TIME:
        return "sign_expires_never", ("expiration",)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC"), ()


def _token_lines(name: str, args: tuple, token: TokenInfo, to: str) -> tuple[list[Line], list[Line]]:
    """The lines of an ERC20_CALLS call on `token` (Permit2's approve: the token it names; `to`: the
    called contract) but setApprovalForAll (_approval_for_all_lines)."""
    symbol = token.token_symbol
    if name == "transfer":
        return [
            Line(
                "sign_line_transfer",
                {"amount": _amount(args[1], token), "symbol": symbol, "recipient": checksum(args[0])},
            )
        ], []
    if name == "transferFrom":
        return [
            Line(
                "sign_line_transfer_from",
                {
                    "amount": _amount(args[2], token),
                    "symbol": symbol,
                    "owner": checksum(args[0]),
                    "recipient": checksum(args[1]),
                },
            )
        ], []
    if name == "permit2Approve":  # (token, spender, amount, expiration): Permit2 lets the spender take the token
        expiration, keyed = _expiration(args[3])
        params = {"spender": checksum(args[1]), "symbol": symbol, "contract": checksum(to), "expiration": expiration}
        if args[2] >= UNLIMITED:
            unlimited = {**params, "amount": "sign_unlimited"}
            lines = [Line("sign_line_permit2_approve", unlimited, keyed=("amount", *keyed))]
            return lines, [Line("sign_warn_unlimited")]
        return [Line("sign_line_permit2_approve", {**params, "amount": _amount(args[2], token)}, keyed=keyed)], []
    spender, units = checksum(args[0]), args[1]
    if units >= UNLIMITED:  # approve, or an increase: either way the allowance is unlimited after it
        approve = Line(
            "sign_line_approve", {"spender": spender, "amount": "sign_unlimited", "symbol": symbol}, keyed=("amount",)
        )
        return [approve], [Line("sign_warn_unlimited")]
    # increaseAllowance (increaseApproval in older tokens) adds to what the spender may already spend:
    # not the same words as approve.
    key = "sign_line_increase_allowance" if name in ("increaseAllowance", "increaseApproval") else "sign_line_approve"
    return [Line(key, {"spender": spender, "amount": _amount(units, token), "symbol": symbol})], []


def _approval_for_all_lines(args: tuple, to: str) -> tuple[list[Line], list[Line]]:
    """setApprovalForAll(operator, approved) on `to` (an ERC-721 or ERC-1155 contract, whatever its
    decimals): approved, the operator may take all of the user's tokens there, warned as unlimited."""
    params = {"operator": checksum(args[0]), "contract": checksum(to)}
    if args[1]:
        return [Line("sign_line_approve_all", params)], [Line("sign_warn_unlimited")]
    return [Line("sign_line_revoke_all", params)], []


def describe(tx: dict[str, str], chain: ChainConfig, token: TokenInfo | None, l1_fee: int = 0) -> Preview:
    """`l1_fee`: the L1 data fee an OP-stack chain charges on top of gas x price (chain.l1_fee)."""
    data, value = tx["data"], int(tx["value"])
    native = chain.native_token()
    lines: list[Line] = []
    warnings: list[Line] = []
    selector = ""
    name = call_name(tx)
    call = decode_call(tx)
    if call is not None and call[0] == "setApprovalForAll":
        lines, warnings = _approval_for_all_lines(call[1], tx["to"])
    elif call is not None and token is not None:
        lines, warnings = _token_lines(call[0], call[1], token, tx["to"])
    elif name is not None and call is None:  # an ERC-20 selector with arguments that do not decode
        selector = data[:10]
        lines.append(Line("sign_line_malformed_call", {"function": name}))
    elif data not in ("", "0x"):
        selector = data[:10]
        lines.append(Line("sign_line_call", {"selector": selector}))
        warnings.append(Line("sign_warn_unknown"))
    if name is not None and erc20_call_malformed(data):  # why refusal() refuses it
        warnings.append(Line("sign_warn_malformed_call", {"function": name}))
    if value > 0 or data in ("", "0x"):
        lines.append(Line("sign_line_native", {"amount": _amount(value, native), "symbol": native.token_symbol}))
    fee = int(tx["gas_limit"]) * int(tx["gas_price"]) + l1_fee
    return Preview(
        lines,
        warnings,
        f"{format_fee(fee, native.token_decimals)} {native.token_symbol}",
        chain.chain_name,
        selector,
        l1_fee=l1_fee,
    )


def refusal(
    tx: dict[str, str],
    chain: ChainConfig,
    node_gas_price: int,
    native_balance: int,
    max_gas_price_multiple: float,
    base_fee: int | None = None,
    l1_fee: int = 0,
) -> AppError | None:
    """`base_fee`: the next block's (services.chain.next_base_fee; None: the chain has none);
    `l1_fee`: the L1 data fee paid on top of gas x price (services.chain.l1_fee)."""
    if is_zero(tx["to"]):
        return AppError("sign_no_recipient", "to is the zero address")
    if call_malformed(tx):  # sign_warn_malformed_call says which call
        return AppError("invalid_tx", "an ERC-20 call whose data is not exactly its arguments")
    gas_price = int(tx["gas_price"])
    if gas_price > node_gas_price * max_gas_price_multiple:
        return AppError("fee_too_high", f"gas price {gas_price} > {max_gas_price_multiple} x {node_gas_price}")
    outdated = fee_outdated(gas_price, base_fee)
    if outdated is not None:
        return outdated
    if int(tx["gas_limit"]) * gas_price + l1_fee + int(tx["value"]) > native_balance:
        return AppError("fee_unaffordable", "fee + value above the native balance", symbol=chain.native_symbol)
    return None


def fee_refusal(chain: ChainConfig, owner: str, tx: dict[str, str]) -> AppError | None:
    """What the fee of a transaction built here a moment ago refuses, read from the chain: the
    native balance short of gas x price + L1 fee + value (fee_unaffordable), or the price below
    the next base fee (fee_outdated). For a page that signs one without /sign's preview (/payment's
    approve), before its PIN dialog opens."""
    balance = chain_svc.balances(chain, owner, [ZERO_ADDRESS]).get(ZERO_ADDRESS, 0)
    base_fee, l1_fee = chain_svc.next_base_fee(chain), chain_svc.l1_fee(chain, tx)
    gas_price = int(tx["gas_price"])  # the node's own, just now: never 'unusually high'
    return refusal(tx, chain, gas_price, balance, 1, base_fee, l1_fee)


def fee_outdated(gas_price: int, base_fee: int | None) -> AppError | None:
    """A legacy gas price below the next block's base fee (None: a chain without one): the network
    fee rose since the transaction was built (the Send page's, or a Speed up's, at the node's price
    then), and it is not mined at that price: anvil refuses it, geth keeps it unmined in its pool."""
    if base_fee is not None and gas_price < base_fee:
        return AppError("fee_outdated", f"gas price {gas_price} < the next block's base fee {base_fee}")
    return None


def nonce_refusal(nonce: int, mined: int, pending_count: int) -> AppError | None:
    """A link's nonce against the account's (`mined`: its count in the latest block;
    `pending_count`: with its transactions waiting in the node's pool). Only the next one is
    signed here: a used one can never be mined; one a pending transaction holds would replace it
    unseen (speeding up and cancelling go through Activity's replace links); a later one would
    wait for transactions never sent."""
    if nonce < mined:
        return AppError("sign_nonce_used", f"nonce {nonce} < the account's {mined}")
    if nonce < pending_count:
        return AppError("sign_nonce_pending", f"nonce {nonce} is held by a pending transaction")
    if nonce > pending_count:
        return AppError("sign_nonce_ahead", f"nonce {nonce} > the account's next {pending_count}")
    return None


@dataclass(frozen=True)
class Simulation:
    status: str  # "ok" | "reverted" | "unavailable"
    changes: dict[str, int]  # lowercase token address (zero address: native coin) -> owner's change


UNAVAILABLE = Simulation("unavailable", {})
# Each changed token is looked up (the database, then the chain): a contract can emit Transfer logs
# "to" the user from thousands of made-up tokens, each a lookup on every load of its link.
MAX_CHANGED_TOKENS = 10


def _topic_address(topic: str) -> str:
    if not isinstance(topic, str) or len(topic) != 66:
        raise ValueError("not an address topic")
    return "0x" + topic[-40:].lower()


def parse_simulation(answer: Any, owner: str, shown: tuple[str, ...] | None = None) -> Simulation:
    """`shown`: the approval log the preview's lines show (shown_approval), the one the call may make."""
    try:
        call = answer["result"][0]["calls"][0]
        if call["status"] != "0x1":
            return Simulation("reverted", {})
        me = owner.lower()
        changes: dict[str, int] = {}
        logs = call["logs"]
        for i, log in enumerate(logs):
            topics = log["topics"]
            if not isinstance(topics, list):
                raise TypeError("topics must be a list")
            if _unshown_move(log, topics, me, shown) and not _allowance_spent(log, logs[i + 1 : i + 2], me):
                return UNAVAILABLE
            # ERC-20 Transfer: 3 topics and the amount as data (ERC-721's has 4 topics).
            if len(topics) != 3 or topics[0] != TRANSFER_TOPIC or len(log["data"]) != 66:
                continue
            source, target = _topic_address(topics[1]), _topic_address(topics[2])
            token = log["address"].lower()
            token = ZERO_ADDRESS if token == NATIVE_LOG_ADDRESS else token
            amount = int(log["data"], 16)
            delta = (amount if target == me else 0) - (amount if source == me else 0)
            changes[token] = changes.get(token, 0) + delta
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return UNAVAILABLE
    changed = {k: v for k, v in changes.items() if v}
    if len(changed) > MAX_CHANGED_TOKENS:
        return UNAVAILABLE
    return Simulation("ok", changed)


def _unshown_move(log: dict, topics: list, me: str, shown: tuple[str, ...] | None) -> bool:
    """An NFT of `me` moving (ERC-721 Transfer: the token id as a fourth topic), or any approval
    `me` gives (ERC-20's and ERC-721's Approval, ApprovalForAll, Permit2's Approval) but the one
    the preview's lines show (`shown`): nothing the balance list can show, so it must not say "No
    balance changes." (a contract call can set an allowance the lines cannot name)."""
    if len(topics) == 4 and topics[0] == TRANSFER_TOPIC:
        return me in (_topic_address(topics[1]), _topic_address(topics[2]))
    if len(topics) >= 2 and topics[0] in APPROVAL_TOPICS and _topic_address(topics[1]) == me:
        return (log["address"].lower(), *(t.lower() for t in topics)) != shown
    return False


def _allowance_spent(log: dict, after: list[dict], me: str) -> bool:
    """An ERC-20 Approval of `me`'s right before a Transfer of the same token from `me`: a
    transferFrom spending an allowance `me` gave before (OpenZeppelin 4's tokens announce the
    allowance left, every swap of such a token does), not an allowance given; the Transfer itself
    is the balance change shown."""
    topics = log["topics"]
    if len(topics) != 3 or topics[0] != APPROVAL_TOPIC or not after:
        return False
    spend = after[0]
    return (
        isinstance(spend["topics"], list)
        and len(spend["topics"]) == 3
        and spend["topics"][0] == TRANSFER_TOPIC
        and spend["address"].lower() == log["address"].lower()
        and _topic_address(spend["topics"][1]) == me
    )


def _topic_of(address: str) -> str:
    return "0x" + "00" * 12 + address.lower()[2:]


def shown_approval(tx: dict[str, str], owner: str) -> tuple[str, ...] | None:
    """The approval log a decoded approval call makes, as the preview's lines show it: the called
    contract's address, then the log's topics (lowercase); None for any other call."""
    call = decode_call(tx)
    if call is None:
        return None
    name, args = call
    to, me = tx["to"].lower(), _topic_of(owner)
    if name in ("approve", "increaseAllowance", "increaseApproval"):
        return to, APPROVAL_TOPIC, me, _topic_of(args[0])
    if name == "setApprovalForAll":
        return to, APPROVAL_FOR_ALL_TOPIC, me, _topic_of(args[0])
    if name == "permit2Approve":  # Permit2's Approval: owner, token, spender
        return to, PERMIT2_APPROVAL_TOPIC, me, _topic_of(args[0]), _topic_of(args[1])
    return None


def counterparty(tx: dict[str, str]) -> str | None:
    """Who the transaction gives to: a token call's recipient, spender or operator, else `to`; None for
    the zero `to`."""
    if is_zero(tx["to"]):
        return None
    call = decode_call(tx)
    if call is None:
        return tx["to"]
    name, args = call
    return checksum(args[1] if name in ("transferFrom", "permit2Approve") else args[0])


def token_of(tx: dict[str, str]) -> str | None:
    """The token a decoded ERC20_CALLS call is about: the called contract's, Permit2's approve's first
    argument; None for setApprovalForAll (its line names the contract, not a token) or another call."""
    call = decode_call(tx)
    if call is None or call[0] == "setApprovalForAll":
        return None
    if call[0] == "permit2Approve":
        return None if is_zero(call[1][0]) else checksum(call[1][0])
    return tx["to"]


def matches(signed: DecodedTx, tx: dict[str, str]) -> bool:
    """The signed transaction is exactly the one the page showed (every field of the link)."""
    return (
        signed.chain_id == int(tx["chain_id"])
        and (signed.to or "").lower() == tx["to"].lower()
        and signed.data.lower() == tx["data"].lower()
        and signed.value == int(tx["value"])
        and signed.nonce == int(tx["nonce"])
        and signed.gas_limit == int(tx["gas_limit"])
        and signed.gas_price == int(tx["gas_price"])
    )


def change_text(units: int, token: TokenInfo) -> str:
    return f"{'+' if units > 0 else '-'}{_amount(abs(units), token)} {token.token_symbol}"


def label_token(info: TokenInfo, listed: set[str]) -> tuple[TokenInfo, Line | None]:
    """The token as the preview names it: one of `listed` (lowercase addresses: the chain's configured
    tokens, its native coin, the user's list) by its symbol; any other by its shortened address, in
    place of the symbol and name it gives itself, with the 'unknown token' warning."""
    if info.token_address.lower() in listed:
        return info, None
    short = short_address(checksum(info.token_address))
    return replace(info, token_symbol=short, token_name=short), Line("sign_warn_unknown_token", {"token": short})


def balance_changes(
    changes: dict[str, int], infos: dict[str, TokenInfo | None], listed: set[str]
) -> tuple[list[str], list[Line]]:
    """The simulated changes as shown ("-12.5 tUSD"; an unlisted token: "+1,000 0xAbCd…1234") and one
    'unknown token' warning per unlisted token. `infos`: each changed address's TokenInfo (None: not
    an ERC-20, left out)."""
    texts: list[str] = []
    warnings: list[Line] = []
    for address, units in changes.items():
        info = infos.get(address)
        if info is None:  # a Transfer log of something that is not an ERC-20
            continue
        shown, warning = label_token(info, listed)
        texts.append(change_text(units, shown))
        if warning is not None and warning not in warnings:
            warnings.append(warning)
    return texts, warnings


# ---------------------------------------------------------------- reads


def next_block(latest: dict[str, Any], now: float) -> dict[str, str]:
    """eth_simulateV1's blockOverrides: the block after `latest` (eth_getBlockByNumber's answer), as
    near as can be told to the one the transaction will be mined in. Left to the node, geth
    simulates with prevrandao 0 (never so in a real block), anvil at the latest block's own number
    and prevrandao: a contract can tell the simulation by them and pay the user back only then.
    Its number is the next; its time now, or just after the latest's if that is later (a node
    refuses a time not after it); its prevrandao 32 random bytes (no contract can know the next
    block's); its fee recipient the latest block's (a chain with one sequencer has the same in
    every block, where a made-up one would tell)."""
    return {
        "number": hex(int(latest["number"], 16) + 1),
        "time": hex(max(int(now), int(latest["timestamp"], 16) + 1)),
        "prevRandao": "0x" + secrets.token_bytes(32).hex(),
        "feeRecipient": latest["miner"],
    }


def simulate(chain: ChainConfig, owner: str, tx: dict[str, str], as_sent: bool = True) -> Simulation:
    """eth_simulateV1 of `tx` from `owner` in the block after the latest (next_block), on the
    latest's state; unavailable when the node cannot.
    `as_sent`: at the link's gas price, validated as a real transaction. Unvalidated, the node
    simulates at a gas price and base fee of 0, and a contract that checks `tx.gasprice` can pay
    the user back only then, so the page showed a gain where the real transaction takes the value.
    (Not the nonce: it can be past the latest block's when the user has a send pending, and no
    contract can read it.) A refused link, which cannot be signed, is simulated unvalidated: what
    it would move is still shown (a drain of the whole balance fails validation for its fee)."""
    call = {
        "from": owner,
        "to": tx["to"],
        "data": tx["data"],
        "value": hex(int(tx["value"])),
        "gas": hex(int(tx["gas_limit"])),
    }
    options: dict[str, Any] = {"traceTransfers": True}
    if as_sent:
        call["gasPrice"] = hex(int(tx["gas_price"]))
        options["validation"] = True
    try:
        provider = chain_svc.web3_for(chain).provider
        latest = provider.make_request(RPCEndpoint("eth_getBlockByNumber"), ["latest", False])["result"]
        block = {"blockOverrides": next_block(latest, time.time()), "calls": [call]}
        # On the block read, by its number: the next block's number must follow it.
        params = [{"blockStateCalls": [block], **options}, latest["number"]]
        answer = provider.make_request(RPCEndpoint("eth_simulateV1"), params)
    except Exception:  # noqa: BLE001 - a node that cannot simulate: 'Preview unavailable.'
        return UNAVAILABLE
    return parse_simulation(answer, owner, shown_approval(tx, owner))


def listed_tokens(user: User, chain: ChainConfig) -> set[str]:
    """The tokens the preview names by their symbol (lowercase addresses): the chain's configured
    tokens, its native coin, and the user's list on this chain."""
    own = [x["token_address"] for x in tokens.user_tokens(user) if x["chain_id"] == chain.chain_id]
    return {a.lower() for a in (chain.native_token().token_address, *(t.token_address for t in chain.tokens), *own)}


def _reads(user: User, chain: ChainConfig, tx: dict[str, str], replacing: bool) -> tuple[Preview, AppError | None]:
    accounts.hit("sign_preview", user)  # the reads and the simulation below, per page load
    listed = listed_tokens(user, chain)
    token: TokenInfo | None = None
    unknown: Line | None = None
    address = token_of(tx)
    if address is not None and not is_zero(tx["to"]):
        info = tokens.token_info(user, chain, address)
        if info is not None:
            token, unknown = label_token(info, listed)
    l1_fee = chain_svc.l1_fee(chain, tx)
    preview = describe(tx, chain, token, l1_fee)
    if unknown is not None:
        preview.warnings.append(unknown)
    who = counterparty(tx)
    owner = user.address or ZERO_ADDRESS
    # To the user's own address (a cancel) is no first-time recipient.
    own = who is not None and who.lower() == owner.lower()
    risk = activity.recipient_risk(who, activity.known_counterparties(user)) if who and not own else None
    if risk:
        preview.warnings.append(Line(activity.RECIPIENT_NOTES[risk]))
    gas_price, base_fee = chain_svc.fee_prices(chain)
    balance = chain_svc.balances(chain, owner, [ZERO_ADDRESS]).get(ZERO_ADDRESS, 0)
    multiple = get_settings().sign_max_gas_price_multiple
    refused = refusal(tx, chain, gas_price, balance, multiple, base_fee, l1_fee)
    if refused is None and not replacing:  # a replace link's nonce is checked by services.pending
        mined, waiting = (chain_svc.transaction_count(chain, owner, block) for block in ("latest", "pending"))
        refused = nonce_refusal(int(tx["nonce"]), mined, waiting)
    sim = simulate(chain, owner, tx, as_sent=refused is None)
    infos = {address: tokens.token_info(user, chain, address) for address in sim.changes}
    changes, unknown_changed = balance_changes(sim.changes, infos, listed)
    for warning in unknown_changed:  # the called token's may be there already
        if warning not in preview.warnings:
            preview.warnings.append(warning)
    if any(units > 0 and infos.get(changed) is not None for changed, units in sim.changes.items()):
        preview.warnings.append(Line("sign_warn_gain"))  # what comes in is the simulation's word only
    return replace(preview, changes=changes, simulation=sim.status), refused


async def load(
    user: User, chain: ChainConfig, tx: dict[str, str], replacing: bool = False
) -> tuple[Preview, AppError | None]:
    """The preview (with the simulated balance changes) and the refusal (None: may be signed) of
    a decoded link on a configured chain; `replacing`: a speed-up or cancel link (its nonce is a
    pending transaction's). A node that does not answer refuses (rpc_unavailable): nothing
    unchecked is signed."""
    try:
        return await asyncio.to_thread(_reads, user, chain, tx, replacing)
    except AppError as e:
        return describe(tx, chain, None), e
