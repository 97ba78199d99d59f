"""The /sign?tx= link and the Send form check (pure functions, table-tested).

encode_tx(tx) -> base64url (no padding) of the compact JSON of a built transaction
    {chain_id, to, data, value, nonce, gas_limit, gas_price} (design.md section 4).
decode_tx(text) -> the same dict with normalised values, or TxLinkError. Accepts base64url
    or standard base64, with or without padding (design.md section 7); a '+' that a query
    string turned into a space is put back. chain_id, to, nonce, gas_limit, gas_price must
    be present and non-empty (specification section 5); numbers are decimal strings (ints
    are accepted and turned into strings), `to` is 0x + 40 hex, `data` 0x hex ("0x" when
    absent), `value` "0" when absent.

check_send_form(...) -> (chain_id, token_address, units) or SendFormError carrying the
    catalogue keys of specification section 5 (input needed, native token blocked, token
    info missing, amount format error + the parser message).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from wallet_app.services.amounts import AmountError, parse_units

FIELDS = ("chain_id", "to", "data", "value", "nonce", "gas_limit", "gas_price")
REQUIRED = ("chain_id", "to", "nonce", "gas_limit", "gas_price")
MAX_LINK_CHARS = 64_000  # a transfer is ~400 characters; refuse absurd inputs before decoding
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,77}")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_HEX = re.compile(r"0x(?:[0-9a-fA-F]{2})*")
_B64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
ZERO_ADDRESS = "0x" + "0" * 40


class TxLinkError(ValueError):
    """The tx parameter is not a valid built transaction."""


def _number(value: Any, name: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        value = str(value)
    if not isinstance(value, str) or not _DECIMAL.fullmatch(value):
        raise TxLinkError(f"{name} must be a decimal string")
    return value


def normalize_tx(tx: Any) -> dict[str, str]:
    """A built transaction with every field checked, as decimal/hex strings."""
    if not isinstance(tx, dict):
        raise TxLinkError("transaction must be a JSON object")
    for name in REQUIRED:
        if tx.get(name) in (None, ""):
            raise TxLinkError(f"{name} is missing")
    to = tx["to"]
    if not isinstance(to, str) or not _ADDRESS.fullmatch(to):
        raise TxLinkError("to must be 0x followed by 40 hex digits")
    data = tx.get("data") or "0x"
    if not isinstance(data, str) or not _HEX.fullmatch(data):
        raise TxLinkError("data must be 0x hex")
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
        raise TxLinkError("chain_id and gas_limit must be positive")
    if int(out["nonce"]) > 2**53 - 1:  # what the browser's signer can take
        raise TxLinkError("nonce out of range")
    return out


def encode_tx(tx: dict) -> str:
    body = json.dumps(normalize_tx(tx), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(body).decode().rstrip("=")


def decode_tx(text: Any) -> dict[str, str]:
    if not isinstance(text, str):
        raise TxLinkError("tx must be text")
    text = text.strip().replace(" ", "+")
    if not text or len(text) > MAX_LINK_CHARS or not _B64.fullmatch(text):
        raise TxLinkError("tx is not base64")
    text = text.rstrip("=").replace("+", "-").replace("/", "_")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        tx = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise TxLinkError(f"tx is not base64 JSON: {e}") from e
    return normalize_tx(tx)


# ---------------------------------------------------------------- the Send form (section 5)

class SendFormError(ValueError):
    """title/message are catalogue keys; `amount_error` is the parser's AmountError, if any."""

    def __init__(self, title: str, message: str, amount_error: AmountError | None = None):
        super().__init__(f"{title}: {message}")
        self.title = title
        self.message = message
        self.amount_error = amount_error


def check_send_form(chain_id: str, token: dict | None, recipient: str, amount: str) -> tuple[int, str, int]:
    """(chain_id, token_address, amount in smallest units). `token` is an entry of the user's
    token list ({token_address, token_decimals, ...}). The recipient's format is checked by
    wallet.parse_recipient afterwards (its own messages)."""
    if not re.fullmatch(r"[1-9][0-9]{0,15}", (chain_id or "").strip()):
        raise SendFormError("send_input_needed", "send_need_chain")
    if token is None:
        raise SendFormError("send_input_needed", "send_need_token")
    if not (recipient or "").strip():
        raise SendFormError("send_input_needed", "send_need_recipient")
    if not (amount or "").strip():
        raise SendFormError("send_input_needed", "send_need_amount")
    address = (token.get("token_address") or "").strip()
    if not address or address.lower() == ZERO_ADDRESS:
        raise SendFormError("error", "send_native_blocked")
    decimals = token.get("token_decimals")
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise SendFormError("error", "send_token_info_missing")
    try:
        units = parse_units(amount, decimals)
    except AmountError as e:
        raise SendFormError("error", "send_amount_format_error", e) from e
    return int(chain_id.strip()), address, units
