"""services.eth: the one parser of addresses, uint256 amounts and chain ids (table tests)."""

import pytest

from wallet_app.errors import AppError
from wallet_app.services.eth import (
    MAX_CHAIN_ID,
    UINT256_MAX,
    ZERO_ADDRESS,
    checksum,
    is_hex_address,
    is_zero,
    parse_address,
    parse_chain_id,
    parse_uint256,
    short_address,
)

CHECKSUMMED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55 test vector


def _code(fn, *args, **kwargs) -> str:
    with pytest.raises(AppError) as exc:
        fn(*args, **kwargs)
    return exc.value.code


@pytest.mark.parametrize("value,expected", [
    (CHECKSUMMED, CHECKSUMMED),
    (CHECKSUMMED.lower(), CHECKSUMMED),  # no checksum in all-lowercase
    ("0x" + CHECKSUMMED[2:].upper(), CHECKSUMMED),  # nor in all-uppercase
    ("  " + CHECKSUMMED + "\n", CHECKSUMMED),
])
def test_address_accepted(value, expected):
    assert parse_address(value) == expected


@pytest.mark.parametrize("value,code", [
    ("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "bad_checksum"),  # last letter's case flipped
    ("0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "bad_checksum"),
    ("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae", "invalid_recipient"),  # 39 hex
    ("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaedd", "invalid_recipient"),  # 41 hex
    ("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "invalid_recipient"),  # no 0x
    ("0X5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "invalid_recipient"),  # 0X
    ("0xg" + "0" * 39, "invalid_recipient"),
    ("", "invalid_recipient"),
    ("   ", "invalid_recipient"),
    (None, "invalid_recipient"),
    (123, "invalid_recipient"),
    (ZERO_ADDRESS, "invalid_recipient"),  # zero only when allowed
])
def test_address_refused_with_the_callers_code(value, code):
    assert _code(parse_address, value, code="invalid_recipient") == code


@pytest.mark.parametrize("value,expected", [
    (CHECKSUMMED, True),
    (CHECKSUMMED.lower(), True),
    ("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", True),  # a bad checksum has the shape still
    (CHECKSUMMED[:-1], False),  # 39 hex
    (CHECKSUMMED + "0", False),  # 41 hex
    (" " + CHECKSUMMED, False),  # as typed: no trimming
    ("0X" + CHECKSUMMED[2:], False),
    ("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", False),
    ("", False),
    (None, False),
    (12, False),
])
def test_hex_address_shape(value, expected):
    assert is_hex_address(value) is expected


def test_zero_address_rules():
    assert parse_address(ZERO_ADDRESS, allow_zero=True) == ZERO_ADDRESS
    assert parse_address("0x" + "0" * 40, allow_zero=True) == ZERO_ADDRESS
    assert _code(parse_address, None, allow_zero=True) == "invalid_address"  # empty is not zero by default
    for empty in ("", None, "  "):
        assert parse_address(empty, empty_is_zero=True) == ZERO_ADDRESS
    assert parse_address(ZERO_ADDRESS, empty_is_zero=True) == ZERO_ADDRESS  # the native coin
    assert parse_address(CHECKSUMMED.lower(), empty_is_zero=True) == CHECKSUMMED
    assert is_zero(ZERO_ADDRESS) and is_zero("0x" + "0" * 40) and not is_zero(CHECKSUMMED) and not is_zero(None)
    assert checksum(CHECKSUMMED.lower()) == CHECKSUMMED


@pytest.mark.parametrize("value,expected", [
    ("1", 1), ("1500000", 1_500_000), (" 42 ", 42), (7, 7), (str(UINT256_MAX), UINT256_MAX), (UINT256_MAX, UINT256_MAX),
])
def test_uint256_accepted(value, expected):
    assert parse_uint256(value) == expected


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "", " ", "1e6", "0x10", "1,000", str(2**256), 2**256, 0, -5,
                                   True, None, 1.5, "١٢"])
def test_uint256_refused(value):
    assert _code(parse_uint256, value) == "invalid_amount"
    assert _code(parse_uint256, value, code="invalid_deadline") == "invalid_deadline"


def test_uint256_zero_only_when_allowed():
    assert parse_uint256("0", allow_zero=True) == parse_uint256(0, allow_zero=True) == 0
    assert _code(parse_uint256, -1, allow_zero=True) == "invalid_amount"


@pytest.mark.parametrize("value,expected", [(31337, 31337), ("31337", 31337), (" 1 ", 1), (MAX_CHAIN_ID, MAX_CHAIN_ID)])
def test_chain_id(value, expected):
    assert parse_chain_id(value) == expected


@pytest.mark.parametrize("value", [0, -1, "x", "", None, True, "1.0", MAX_CHAIN_ID + 1, 10**30, "0x1"])
def test_chain_id_refused(value):
    assert _code(parse_chain_id, value) == "invalid_chain_id"
    assert _code(parse_chain_id, value, code="unsupported_chain") == "unsupported_chain"


@pytest.mark.parametrize("value,expected", [
    ("0xabcd" + "0" * 32 + "1234", "0xabcd…1234"), (CHECKSUMMED, "0x5aAe…eAed"),
    (None, ""), ("", ""), ("0x12", "0x12"),
])
def test_short_address(value, expected):
    assert short_address(value) == expected
