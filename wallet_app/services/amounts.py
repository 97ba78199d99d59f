"""Decimal amounts <-> integer smallest units (pure functions; specification section 5).

parse_units("1.5", 6) == 1_500_000
    Input is trimmed; it must be digits with at most one '.', and when there is a '.'
    both sides need at least one digit ("1." and ".5" are refused: "both parts digits
    only"). ASCII digits only, no sign, no grouping commas, no exponent; values that
    do not fit in uint256 are invalid.
    Errors are AmountError (a ValueError) with a machine `code` and `params` for the
    ko/en catalogues: amount_empty, invalid_amount, max_decimals {"decimals": N}.

format_balance(1234567891, 6) == "1,234.56789"
    At most 5 decimals, TRUNCATED not rounded, so a balance is never shown larger than
    it is (rounding 0.999999 up to "1" would invite sending more than is held);
    trailing zeros trimmed; thousands grouped with commas. A balance below 0.00001
    shows as "0".
"""

from __future__ import annotations

import re

DISPLAY_DECIMALS = 5
_AMOUNT = re.compile(r"[0-9]+(\.[0-9]+)?")
_MESSAGES = {
    "amount_empty": "amount empty",
    "invalid_amount": "invalid amount",
    "max_decimals": "max {decimals} decimal places",
}


class AmountError(ValueError):
    def __init__(self, code: str, **params: int | str):
        self.code = code
        self.params = params
        super().__init__(_MESSAGES[code].format(**params))


def parse_units(text: str, decimals: int) -> int:
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise TypeError("decimals must be a non-negative int")
    value = (text or "").strip()
    if not value:
        raise AmountError("amount_empty")
    if len(value) > 100 or not _AMOUNT.fullmatch(value):
        raise AmountError("invalid_amount")
    whole, _, frac = value.partition(".")
    if len(frac) > decimals:
        raise AmountError("max_decimals", decimals=decimals)
    units = int(whole) * 10**decimals + int(frac.ljust(decimals, "0") or "0")
    if units >= 2**256:  # cannot be a token amount on chain
        raise AmountError("invalid_amount")
    return units


def format_balance(units: int | str, decimals: int, max_decimals: int = DISPLAY_DECIMALS) -> str:
    """Balances are integer strings in the API; both int and str are accepted."""
    units = int(units)
    sign = "-" if units < 0 else ""
    whole, rest = divmod(abs(units), 10**decimals)
    frac = str(rest).rjust(decimals, "0")[:max_decimals].rstrip("0") if decimals else ""
    return f"{sign}{whole:,}" + (f".{frac}" if frac else "")
