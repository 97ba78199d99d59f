"""EIP-681 payment URIs (issue 14 item 5): pure functions, table-tested (tests/unit/services/test_payment_uri.py).

build_transfer_uri(token, chain_id, to, units)
    "ethereum:<token>@<chain_id>/transfer?address=<to>&uint256=<units>": the Receive dialog's
    QR for a token and an amount (EIP-55 addresses, units as plain decimal digits; no amount:
    no uint256).

parse_transfer_uri(text) -> TransferRequest
    What the Send scanner and a pasted URI fill in. The EIP-681 grammar this reads:
        "ethereum:" ["pay-"] <0x address> ["@" <chain id>] ["/" <function>] ["?" key=value ("&" key=value)*]
    - the scheme, "pay-", the target's "0x", the function name, the parameter keys and the
      `address` parameter's "0x" in any case (QR codes in alphanumeric mode are upper case:
      "ETHEREUM:0X5AAEB6…/TRANSFER?ADDRESS=0XFB69…&UINT256=1E6" is read as its lower case form,
      so "?VALUE=1" is refused as "?value=1" is); other values are read as they are;
    - no function and no value (or value=0): the address alone, as many wallets' Receive QR codes
      write it ("ethereum:0x..."): the recipient, token None (the sender picks the token);
    - no function with a value: a native coin send: refused with native_blocked, as the Send form does;
    - "/transfer": the target is the ERC-20 token, `address` the recipient (required), `uint256`
      the amount in the token's smallest unit (optional: the user types it); `value`, if given,
      must be 0 (a transfer that also moves native coin is not a plain token request);
    - any other function (approve, ...): uri_unsupported;
    - numbers as EIP-681 writes them: digits with an optional fraction and exponent
      ("1e6", "2.014e18"); the result must be a whole number in 1 .. 2**256-1, so a negative,
      fractional ("1.5"), zero or overflowing amount is refused (uri_invalid), never rounded;
    - a key given twice (in any case: "value" and "VALUE") is refused (wallets disagree on which
      one wins); other keys (gas, label, ...) are ignored; ENS names are refused (nothing here
      resolves them).
    Errors: AppError uri_invalid, uri_unsupported, native_blocked, bad_checksum.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from wallet_app.errors import AppError
from wallet_app.services.eth import UINT256_MAX, checksum, parse_address, parse_chain_id

SCHEME = "ethereum:"
MAX_URI = 1000  # a transfer URI is ~220 characters; anything far longer is junk
_URI = re.compile(
    r"ethereum:(?:pay-)?(?P<target>0x[0-9a-fA-F]{40})(?:@(?P<chain>[0-9]+))?"
    r"(?:/(?P<function>[A-Za-z0-9_]*))?(?:\?(?P<query>.*))?",
    re.IGNORECASE | re.DOTALL,
)
# EIP-681 `number`: [sign] digits [. digits] [e digits]; the sign is matched to refuse "-" clearly.
_NUMBER = re.compile(r"(?P<sign>[+-]?)(?P<whole>[0-9]*)(?:\.(?P<frac>[0-9]+))?(?:[eE](?P<exp>[0-9]{1,4}))?")
_UINT256_DIGITS = len(str(UINT256_MAX))  # 78


@dataclass(frozen=True)
class TransferRequest:
    token: str | None  # EIP-55 ERC-20 address; None: an address alone, no token named
    recipient: str  # EIP-55
    chain_id: int | None  # None: the URI names no chain (EIP-681: the current network)
    units: int | None  # None: the URI names no amount


def is_payment_uri(text: Any) -> bool:
    return isinstance(text, str) and text.strip()[: len(SCHEME)].lower() == SCHEME


def _invalid(why: str) -> AppError:
    return AppError("uri_invalid", why)


def parse_number(text: str, *, allow_zero: bool = False) -> int:
    """An EIP-681 number that must be a whole uint256 above 0 (or 0 with `allow_zero`):
    "1000", "1e6", "2.014e18"."""
    m = _NUMBER.fullmatch(text)
    if m is None or not (m["whole"] or m["frac"]):
        raise _invalid("not a number")
    if m["sign"] == "-":
        raise _invalid("negative amount")
    frac = m["frac"] or ""
    digits = (m["whole"] + frac).lstrip("0")
    if not digits:
        if allow_zero:
            return 0
        raise _invalid("zero amount")
    shift = int(m["exp"] or 0) - len(frac)  # value = int(digits) * 10**shift
    if shift < 0:
        if digits[shift:].strip("0"):
            raise _invalid("fractional amount")
        digits, shift = digits[:shift], 0
    if len(digits) + shift > _UINT256_DIGITS:  # checked before 10**shift is computed
        raise _invalid("amount above uint256")
    value = int(digits) * 10**shift
    if value > UINT256_MAX:
        raise _invalid("amount above uint256")
    return value


def _hex_prefix(text: str) -> str:
    """A "0X…" of an upper case QR code as "0x…": the address rule wants a lower case "0x"."""
    return "0x" + text[2:] if text[:2] == "0X" else text


def _params(query: str | None) -> dict[str, str]:
    """The parameters by their lower case key: an upper case QR code writes "VALUE=", "ADDRESS=",
    read as "value=", "address=" (an unread "VALUE=1" would let a native coin send through)."""
    found: dict[str, str] = {}
    for part in (query or "").split("&") if query else []:
        key, eq, value = part.partition("=")
        if not key or not eq:
            raise _invalid("a parameter without key=value")
        key = key.lower()
        if key in found:
            raise _invalid(f"parameter {key!r} given twice")
        found[key] = unquote(value)
    return found


def parse_transfer_uri(text: Any) -> TransferRequest:
    if not isinstance(text, str) or len(text) > MAX_URI:
        raise _invalid("not a payment URI")
    m = _URI.fullmatch(text.strip())
    if m is None:
        raise _invalid("not an EIP-681 URI with a 0x address")
    target = parse_address(_hex_prefix(m["target"]), code="uri_invalid", allow_zero=True)  # "0X" too
    chain_id = parse_chain_id(m["chain"], code="uri_invalid") if m["chain"] is not None else None
    params = _params(m["query"])
    function = (m["function"] or "").lower()  # "/TRANSFER" of an upper case QR code too
    if not function:  # ethereum:<address>[@chain][?value=...]
        if "value" in params and parse_number(params["value"], allow_zero=True) != 0:
            raise AppError("native_blocked", "the URI requests a native coin transfer")
        return TransferRequest(
            token=None, recipient=parse_address(target, code="uri_invalid"), chain_id=chain_id, units=None
        )
    if function != "transfer":
        raise AppError("uri_unsupported", f"function {function!r}")
    if "value" in params and parse_number(params["value"], allow_zero=True) != 0:
        raise AppError("native_blocked", "a token transfer that also sends native coin")
    if "address" not in params:
        raise _invalid("transfer without an address")
    recipient = parse_address(_hex_prefix(params["address"].strip()), code="uri_invalid")
    token = parse_address(target, code="uri_invalid")  # the zero address is no token
    units = parse_number(params["uint256"]) if "uint256" in params else None
    return TransferRequest(token=token, recipient=recipient, chain_id=chain_id, units=units)


def build_transfer_uri(token: str, chain_id: int, to: str, units: int | None) -> str:
    """`units` None: a request without an amount (the payer enters it)."""
    uri = f"{SCHEME}{checksum(token)}@{int(chain_id)}/transfer?address={checksum(to)}"
    if units is None:
        return uri
    if not 0 < units <= UINT256_MAX:
        raise ValueError("units must be in 1 .. 2**256-1")
    return f"{uri}&uint256={units}"
