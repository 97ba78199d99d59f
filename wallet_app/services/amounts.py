"""Decimal amounts <-> integer smallest units (pure functions; specification section 5).

parse_units("1.5", 6) == 1_500_000
    Input is trimmed; it must be digits with at most one '.', and when there is a '.'
    both sides need at least one digit ("1." and ".5" are refused: "both parts digits
    only"). ASCII digits only, no sign, no grouping commas, no exponent; values that
    do not fit in uint256 are invalid.
    Errors are AppError with the codes amount_empty, invalid_amount and max_decimals
    (params {"decimals": N} for the ko/en catalogues).

format_balance(1234567891, 6) == "1,234.56789"
    At most 5 decimals, TRUNCATED not rounded, so a balance is never shown larger than
    it is (rounding 0.999999 up to "1" would invite sending more than is held);
    trailing zeros trimmed; thousands grouped with commas. A balance below 0.00001
    shows as "0".

format_fee(102_468 * 10**9, 18) == "0.00011"
    A cost (a network fee) ROUNDED UP, so it is never shown smaller than it is: 5 decimals, or
    as many as its first two significant digits need when it is smaller than that (21000 x 1 gwei
    is "0.000021", not "0.00002"; 0.0000002 is not "0"); trailing zeros trimmed, thousands grouped.

format_units(1234500000, 6) == "1234.5"
    Exact (every decimal kept, trailing zeros trimmed), no grouping: what parse_units reads
    back to the same units (an amount put into a form field, e.g. from a payment URI).
"""

from __future__ import annotations

import re

from wallet_app.errors import AppError
from wallet_app.services.eth import UINT256_MAX

DISPLAY_DECIMALS = 5
_AMOUNT = re.compile(r"[0-9]+(\.[0-9]+)?")


def parse_units(text: str, decimals: int) -> int:
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise TypeError("decimals must be a non-negative int")
    value = (text or "").strip()
    if not value:
        raise AppError("amount_empty", "amount empty")
    if len(value) > 100 or not _AMOUNT.fullmatch(value):
        raise AppError("invalid_amount", "invalid amount")
    whole, _, frac = value.partition(".")
    if len(frac) > decimals:
        raise AppError("max_decimals", f"max {decimals} decimal places", decimals=decimals)
    units = int(whole) * 10**decimals + int(frac.ljust(decimals, "0") or "0")
    if units > UINT256_MAX:  # cannot be a token amount on chain
        raise AppError("invalid_amount", "invalid amount")
    return units


def format_balance(units: int | str, decimals: int, max_decimals: int = DISPLAY_DECIMALS) -> str:
    """Balances are integer strings in the API; both int and str are accepted."""
    units = int(units)
    sign = "-" if units < 0 else ""
    whole, rest = divmod(abs(units), 10**decimals)
    frac = str(rest).rjust(decimals, "0")[:max_decimals].rstrip("0") if decimals else ""
    return f"{sign}{whole:,}" + (f".{frac}" if frac else "")


def format_fee(units: int, decimals: int) -> str:
    units = int(units)
    if units <= 0 or decimals <= DISPLAY_DECIMALS:
        return format_balance(units, decimals, max_decimals=decimals)
    # The decimal places of the first significant digit (1 for 0.1...), plus one more.
    places = max(DISPLAY_DECIMALS, decimals - len(str(units)) + 2)
    if places >= decimals:
        return format_balance(units, decimals, max_decimals=decimals)
    step = 10 ** (decimals - places)
    return format_balance(-(-units // step) * step, decimals, max_decimals=places)


def format_units(units: int, decimals: int) -> str:
    whole, rest = divmod(int(units), 10**decimals)
    frac = str(rest).rjust(decimals, "0").rstrip("0") if decimals else ""
    return f"{whole}" + (f".{frac}" if frac else "")
