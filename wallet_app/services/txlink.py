"""The /sign?tx= link and the Send form check (pure functions, table-tested).

encode_tx(tx) -> base64url (no padding) of the compact JSON of a built transaction
    {chain_id, to, data, value, nonce, gas_limit, gas_price} (design.md section 4).
decode_tx(text) -> the same dict with normalised values, or AppError("invalid_tx"). Accepts base64url
    or standard base64, with or without padding (design.md section 7); a '+' that a query
    string turned into a space is put back. chain_id, to, nonce, gas_limit, gas_price must
    be present and non-empty (specification section 5); numbers are decimal strings (ints
    are accepted and turned into strings), `to` is 0x + 40 hex, `data` 0x hex ("0x" when
    absent), `value` "0" when absent.

check_send_form(...) -> (chain_id, token_address, units) or AppError with the codes of
    specification section 5's checks: need_chain, need_token, need_recipient, need_amount,
    native_blocked, token_info_missing, and the amount parser's (amount_empty, invalid_amount,
    max_decimals {decimals}).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from wallet_app.errors import AppError
from wallet_app.services.amounts import parse_units
from wallet_app.services.eth import is_zero, parse_address

FIELDS = ("chain_id", "to", "data", "value", "nonce", "gas_limit", "gas_price")
REQUIRED = ("chain_id", "to", "nonce", "gas_limit", "gas_price")
MAX_LINK_CHARS = 64_000  # a transfer is ~400 characters; refuse absurd inputs before decoding
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,77}")
_HEX = re.compile(r"0x(?:[0-9a-fA-F]{2})*")
_B64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


def _invalid(message: str) -> AppError:
    return AppError("invalid_tx", message)


def _number(value: Any, name: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    if not isinstance(value, str) or not _DECIMAL.fullmatch(value):
        raise _invalid(f"{name} must be a decimal string")
    return value


def normalize_tx(tx: Any) -> dict[str, str]:
    """A built transaction with every field checked, as decimal/hex strings."""
    if not isinstance(tx, dict):
        raise _invalid("transaction must be a JSON object")
    for name in REQUIRED:
        if tx.get(name) in (None, ""):
            raise _invalid(f"{name} is missing")
    try:
        to = parse_address(tx["to"], allow_zero=True)
    except AppError as e:
        raise _invalid(f"to: {e.message}") from e
    data = tx.get("data") or "0x"
    if not isinstance(data, str) or not _HEX.fullmatch(data):
        raise _invalid("data must be 0x hex")
    value = tx.get("value")
    out = {
        "chain_id": _number(tx["chain_id"], "chain_id"),
        "to": to,
        "data": data.lower(),
        "value": "0" if value in (None, "") else _number(value, "value"),
        "nonce": _number(tx["nonce"], "nonce"),
        "gas_limit": _number(tx["gas_limit"], "gas_limit"),
        "gas_price": _number(tx["gas_price"], "gas_price"),
    }
    if out["chain_id"] == "0" or out["gas_limit"] == "0":
        raise _invalid("chain_id and gas_limit must be positive")
    if int(out["nonce"]) > 2**53 - 1:  # what the browser's signer can take
        raise _invalid("nonce out of range")
    return out


def encode_tx(tx: dict) -> str:
    body = json.dumps(normalize_tx(tx), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(body).decode().rstrip("=")


def decode_tx(text: Any) -> dict[str, str]:
    if not isinstance(text, str):
        raise _invalid("tx must be text")
    text = text.strip().replace(" ", "+")
    if not text or len(text) > MAX_LINK_CHARS or not _B64.fullmatch(text):
        raise _invalid("tx is not base64")
    text = text.rstrip("=").replace("+", "-").replace("/", "_")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        tx = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise _invalid(f"tx is not base64 JSON: {e}") from e
    return normalize_tx(tx)


# ---------------------------------------------------------------- the Send form (section 5)


def check_send_form(chain_id: str, token: dict | None, recipient: str, amount: str) -> tuple[int, str, int]:
    """(chain_id, token_address, amount in smallest units). `token` is an entry of the user's
    token list ({token_address, token_decimals, ...}). The recipient's format is checked by
    eth.parse_address(code="invalid_recipient") afterwards (its own messages)."""
    if not re.fullmatch(r"[1-9][0-9]{0,15}", (chain_id or "").strip()):
        raise AppError("need_chain")
    if token is None:
        raise AppError("need_token")
    if not (recipient or "").strip():
        raise AppError("need_recipient")
    if not (amount or "").strip():
        raise AppError("need_amount")
    address = (token.get("token_address") or "").strip()
    if not address or is_zero(address):
        raise AppError("native_blocked")
    decimals = token.get("token_decimals")
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise AppError("token_info_missing")
    return int(chain_id.strip()), address, parse_units(amount, decimals)
