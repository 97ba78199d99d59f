"""Addresses, uint256 amounts and chain ids: parsed in one place (pure functions, table-tested).

Every function takes anything (Reflex handlers and REST bodies can carry any JSON) and either
returns the normalised value or raises AppError with the caller's code.

Address rule (EIP-55): 0x + 40 hex digits; all-lowercase or all-uppercase hex carries no
checksum and is accepted, mixed case must pass the checksum ('bad_checksum' otherwise).
Results are checksummed; callers lowercase them for storage keys.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from eth_utils import to_checksum_address

from wallet_app.errors import AppError

ZERO_ADDRESS = "0x" + "0" * 40
UINT256_MAX = 2**256 - 1
MAX_CHAIN_ID = 2**53 - 1  # EIP-2294 bound; fits every database integer

_HEX_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_DECIMAL = re.compile(r"[0-9]{1,78}")
_CHAIN_ID = re.compile(r"[0-9]{1,16}")


@lru_cache(maxsize=4096)
def checksum(address: str) -> str:
    """EIP-55 form of a well-formed address (a keccak each: cached, lists repeat addresses)."""
    return to_checksum_address(address)


def is_zero(address: str | None) -> bool:
    return isinstance(address, str) and address.lower() == ZERO_ADDRESS


def is_hex_address(value: Any) -> bool:
    """Whether `value` is 0x + 40 hex digits, in any case: the shape alone (parse_address also
    checks a mixed-case checksum)."""
    return isinstance(value, str) and _HEX_ADDRESS.fullmatch(value) is not None


def parse_address(
    value: Any, *, code: str = "invalid_address", allow_zero: bool = False, empty_is_zero: bool = False
) -> str:
    """A checksummed address. `empty_is_zero`: blank or None means the zero address (the
    native coin's token address); the zero address itself needs `allow_zero`."""
    if empty_is_zero and (value is None or (isinstance(value, str) and not value.strip())):
        return ZERO_ADDRESS
    text = value.strip() if isinstance(value, str) else None
    if not text or not _HEX_ADDRESS.fullmatch(text):
        raise AppError(code, "must be 0x followed by 40 hex digits")
    digits = text[2:]
    if digits != digits.lower() and digits != digits.upper() and checksum(text) != text:
        raise AppError("bad_checksum", "mixed-case address fails the EIP-55 checksum")
    if not allow_zero and not empty_is_zero and is_zero(text):
        raise AppError(code, "the zero address is not allowed here")
    return checksum(text)


def parse_uint256(value: Any, *, code: str = "invalid_amount", allow_zero: bool = False) -> int:
    """An int or a decimal string (smallest units) in 1 .. 2**256-1 (0 too with `allow_zero`)."""
    if isinstance(value, bool):
        raise AppError(code)
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int) or not (0 if allow_zero else 1) <= value <= UINT256_MAX:
        raise AppError(code, "must be an integer string in the smallest unit, below 2**256")
    return value


def parse_chain_id(value: Any, *, code: str = "invalid_chain_id") -> int:
    """An int or a decimal string -> a chain id in 1 .. 2**53-1."""
    if isinstance(value, bool):
        raise AppError(code)
    if isinstance(value, str) and _CHAIN_ID.fullmatch(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int) or not 0 < value <= MAX_CHAIN_ID:
        raise AppError(code, "chain id must be a positive integer")
    return value


def short_address(address: str | None) -> str:
    """0x + 4 leading and 4 trailing hex characters (specification section 9)."""
    if not address or len(address) < 12:
        return address or ""
    return f"{address[:6]}…{address[-4:]}"
