import pytest

from wallet_app.errors import AppError
from wallet_app.services.amounts import format_balance, format_fee, parse_units


@pytest.mark.parametrize(("text", "decimals", "units"), [
    ("1", 6, 1_000_000),
    ("1.5", 6, 1_500_000),
    ("  0.000001 ", 6, 1),
    ("123456.123456", 6, 123_456_123_456),
    ("007.10", 6, 7_100_000),
    ("0", 18, 0),
    ("1.000000000000000001", 18, 10**18 + 1),
    ("42", 0, 42),
    ("\t2.5\n", 1, 25),
])
def test_parse_units_ok(text, decimals, units):
    assert parse_units(text, decimals) == units


@pytest.mark.parametrize(("text", "decimals", "code", "params", "message"), [
    ("", 6, "amount_empty", {}, "amount empty"),
    ("   ", 6, "amount_empty", {}, "amount empty"),
    (None, 6, "amount_empty", {}, "amount empty"),
    ("1.2.3", 6, "invalid_amount", {}, "invalid amount"),
    ("1.", 6, "invalid_amount", {}, "invalid amount"),
    (".5", 6, "invalid_amount", {}, "invalid amount"),
    ("-1", 6, "invalid_amount", {}, "invalid amount"),
    ("+1", 6, "invalid_amount", {}, "invalid amount"),
    ("1,000", 6, "invalid_amount", {}, "invalid amount"),
    ("1e6", 6, "invalid_amount", {}, "invalid amount"),
    ("1 000", 6, "invalid_amount", {}, "invalid amount"),
    ("abc", 6, "invalid_amount", {}, "invalid amount"),
    ("١٢", 6, "invalid_amount", {}, "invalid amount"),  # non-ASCII digits
    ("9" * 101, 0, "invalid_amount", {}, "invalid amount"),
    (str(2**256), 0, "invalid_amount", {}, "invalid amount"),
    ("0.1234567", 6, "max_decimals", {"decimals": 6}, "max 6 decimal places"),
    ("1.10", 1, "max_decimals", {"decimals": 1}, "max 1 decimal places"),
    ("1.0", 0, "max_decimals", {"decimals": 0}, "max 0 decimal places"),
])
def test_parse_units_errors(text, decimals, code, params, message):
    with pytest.raises(AppError) as exc:
        parse_units(text, decimals)
    assert (exc.value.code, exc.value.params, exc.value.message) == (code, params, message)


@pytest.mark.parametrize(("units", "decimals", "text"), [
    (0, 6, "0"),
    (1, 6, "0"),  # below 0.00001: truncated away
    (10, 6, "0.00001"),
    (1_500_000, 6, "1.5"),
    (1_000_000, 6, "1"),
    (999_999, 6, "0.99999"),  # truncated, not rounded up to 1
    (1_234_567_891, 6, "1,234.56789"),
    (1_234_567_000_000, 6, "1,234,567"),
    (10**18, 18, "1"),
    (123_456_789 * 10**18 + 10**17, 18, "123,456,789.1"),
    (1234567, 0, "1,234,567"),
    ("2500000", 6, "2.5"),
    (-1_500_000, 6, "-1.5"),
    (12345, 2, "123.45"),
])
def test_format_balance(units, decimals, text):
    assert format_balance(units, decimals) == text


@pytest.mark.parametrize("units, decimals, text", [
    (0, 18, "0"),
    (100_000 * 10**9, 18, "0.0001"),
    (102_468 * 10**9, 18, "0.00011"),  # rounded up at 5 decimals (format_balance: "0.0001")
    (21_000 * 10**9, 18, "0.000021"),  # below 0.0001: two significant digits (format_balance: "0.00002")
    (21_000 * 10**7 + 1, 18, "0.00000022"),
    (1, 18, "0.000000000000000001"),  # format_balance: "0"
    (99_999, 6, "0.1"),
    (1_234_567_891, 6, "1,234.5679"),
    (10**21, 18, "1,000"),
    (12_345, 2, "123.45"),  # no more decimals than the coin's
    (7, 0, "7"),
])
def test_format_fee_never_shows_less_than_the_cost(units, decimals, text):
    assert format_fee(units, decimals) == text
