"""services.payment_uri: EIP-681 transfer URIs built by Receive and read by Send (issue 14 item 5)."""

import pytest

from wallet_app.errors import AppError
from wallet_app.services.amounts import format_units, parse_units
from wallet_app.services.payment_uri import (
    TransferRequest,
    build_transfer_uri,
    is_payment_uri,
    parse_number,
    parse_transfer_uri,
)

TOKEN = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"  # EIP-55 mixed case
TO = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
BAD_SUM = TOKEN[:-1] + TOKEN[-1].swapcase()  # mixed case, checksum broken
U256 = 2**256 - 1


@pytest.mark.parametrize(("text", "units"), [
    ("1", 1),
    ("1000000", 10**6),
    ("+5", 5),
    ("1e6", 10**6),
    ("1E6", 10**6),
    ("2.014e18", 2_014_000_000_000_000_000),
    ("0.5e1", 5),
    ("1.50e1", 15),  # trailing zeros of the fraction are whole
    ("007", 7),
    (".5e1", 5),
    (str(U256), U256),
    ("1e77", 10**77),
])
def test_parse_number(text, units):
    assert parse_number(text) == units


@pytest.mark.parametrize("text", [
    "", "-1", "-0", "1.5", "1.5e0", "2.0145e3", "1e-6", "0", "0.0", "0e5", "abc", "1e", "e5", "1 000", "1,000",
    "0x10", str(2**256), "1e78", "9e77", "1e9999", "1e99999", "١٢", "1.", ".",
])
def test_parse_number_refuses(text):
    with pytest.raises(AppError) as e:
        parse_number(text)
    assert e.value.code == "uri_invalid"


def test_parse_number_zero_only_when_allowed():
    assert parse_number("0", allow_zero=True) == parse_number("0.0e3", allow_zero=True) == 0


TRANSFER = f"ethereum:{TOKEN}@31337/transfer?address={TO}&uint256=1500000"


@pytest.mark.parametrize(("text", "expected"), [
    (TRANSFER, TransferRequest(TOKEN, TO, 31337, 1_500_000)),
    (f"  {TRANSFER}\n", TransferRequest(TOKEN, TO, 31337, 1_500_000)),
    (f"ethereum:pay-{TOKEN}@1/transfer?address={TO}&uint256=1e6", TransferRequest(TOKEN, TO, 1, 10**6)),
    (f"ETHEREUM:PAY-{TOKEN}@1/transfer?address={TO}&uint256=1", TransferRequest(TOKEN, TO, 1, 1)),
    (f"ETHEREUM:{TOKEN.upper()}@1/transfer?address={TO}&uint256=1", TransferRequest(TOKEN, TO, 1, 1)),
    # the function name and the keys in any case: an all upper case QR code, and mixed case
    (f"ETHEREUM:{TOKEN.upper()}@1/TRANSFER?ADDRESS={TO.upper()}&UINT256=1E6", TransferRequest(TOKEN, TO, 1, 10**6)),
    (f"ethereum:{TOKEN}@1/Transfer?Address={TO}&uInt256=2&Value=0", TransferRequest(TOKEN, TO, 1, 2)),
    (f"ETHEREUM:{TOKEN.upper()}/TRANSFER?UINT256=7&ADDRESS={TO.upper()}&VALUE=0&LABEL=SHOP",
     TransferRequest(TOKEN, TO, None, 7)),
    # lowercase (no checksum) addresses are accepted and checksummed
    (f"ethereum:{TOKEN.lower()}@8453/transfer?address={TO.lower()}&uint256=2.014e18",
     TransferRequest(TOKEN, TO, 8453, 2_014_000_000_000_000_000)),
    # parameters in any order; no chain id; no amount; ignored keys; value=0; percent-encoding
    (f"ethereum:{TOKEN}/transfer?uint256=7&address={TO}", TransferRequest(TOKEN, TO, None, 7)),
    (f"ethereum:{TOKEN}@10/transfer?address={TO}", TransferRequest(TOKEN, TO, 10, None)),
    (f"ethereum:{TOKEN}@10/transfer?address={TO}&uint256=3&gas=60000&label=Coffee%20shop&value=0",
     TransferRequest(TOKEN, TO, 10, 3)),
    (f"ethereum:{TOKEN}@10/transfer?address=%30x{TO[2:]}&uint256=%31", TransferRequest(TOKEN, TO, 10, 1)),
    (f"ethereum:{TOKEN}@10/transfer?address={TO}&uint256={U256}", TransferRequest(TOKEN, TO, 10, U256)),
])
def test_parse_transfer_uri(text, expected):
    assert parse_transfer_uri(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # an address alone, as wallets' Receive QR codes write it: the recipient, no token
    (f"ethereum:{TO}", TransferRequest(None, TO, None, None)),
    (f"ethereum:{TO.lower()}@31337", TransferRequest(None, TO, 31337, None)),
    (f"ethereum:pay-{TO}@1?value=0&label=Alice", TransferRequest(None, TO, 1, None)),
    (f"ethereum:{TO}/", TransferRequest(None, TO, None, None)),
    # a QR code in alphanumeric mode: all upper case, "0X" too
    (f"ETHEREUM:{TO.upper()}", TransferRequest(None, TO, None, None)),
    (f"ETHEREUM:PAY-{TO.upper()}@31337", TransferRequest(None, TO, 31337, None)),
    (f"ETHEREUM:{TO.upper()}?VALUE=0&LABEL=ALICE", TransferRequest(None, TO, None, None)),
])
def test_an_address_alone_names_the_recipient_only(text, expected):
    assert parse_transfer_uri(text) == expected


@pytest.mark.parametrize(("text", "code"), [
    # an address URI without a function but with a value is a native coin send: Send refuses it as it
    # refuses the native coin
    (f"ethereum:pay-{TO}@1?value=2.014e18", "native_blocked"),
    (f"ethereum:{TO}?value=1", "native_blocked"),
    (f"ethereum:{TO}@1/?value=1", "native_blocked"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=1&value=1", "native_blocked"),
    # ... whatever the case of the key: an all upper case QR code writes "VALUE="
    (f"ETHEREUM:{TO.upper()}?VALUE=1000", "native_blocked"),
    (f"ETHEREUM:PAY-{TO.upper()}@1/?VALUE=2.014E18", "native_blocked"),
    (f"ethereum:{TO}?Value=1", "native_blocked"),
    (f"ETHEREUM:{TOKEN.upper()}@1/TRANSFER?ADDRESS={TO.upper()}&UINT256=1&VALUE=1", "native_blocked"),
    # other functions
    (f"ethereum:{TOKEN}@1/approve?address={TO}&uint256=1", "uri_unsupported"),
    (f"ETHEREUM:{TOKEN.upper()}@1/APPROVE?ADDRESS={TO.upper()}&UINT256=1", "uri_unsupported"),
    # amounts EIP-681 writes but that are no whole uint256 above 0
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=-1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=1.5", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=0", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256={2**256}", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=1e78", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=ten", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=1&value=-1", "uri_invalid"),
    # the recipient
    (f"ethereum:{TOKEN}@1/transfer?uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address=0x1234&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={'0x' + '0' * 40}&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address=alice.eth&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={BAD_SUM}&uint256=1", "bad_checksum"),
    # ambiguous or malformed parameters
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&address={TOKEN}&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=1&uint256=2", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=1&UINT256=2", "uri_invalid"),
    (f"ethereum:{TO}?value=0&VALUE=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?", "uri_invalid"),
    # the target and the chain
    (f"ethereum:{'0x' + '0' * 40}@1/transfer?address={TO}&uint256=1", "uri_invalid"),
    (f"ethereum:{BAD_SUM}@1/transfer?address={TO}&uint256=1", "bad_checksum"),
    (f"ethereum:usdc.eth@1/transfer?address={TO}&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN[:-1]}@1/transfer?address={TO}&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@0/transfer?address={TO}&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@-1/transfer?address={TO}&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@{2**53}/transfer?address={TO}&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@0x1/transfer?address={TO}&uint256=1", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/trans fer?address={TO}&uint256=1", "uri_invalid"),
    # not an EIP-681 URI at all
    (f"bitcoin:{TO}", "uri_invalid"),
    (f"ethereum:{TOKEN}@1/transfer?address={TO}&uint256=1&label=" + "x" * 1000, "uri_invalid"),
    ("ethereum:", "uri_invalid"),
    ("", "uri_invalid"),
    (None, "uri_invalid"),
    (42, "uri_invalid"),
])
def test_parse_transfer_uri_refuses(text, code):
    with pytest.raises(AppError) as e:
        parse_transfer_uri(text)
    assert e.value.code == code


@pytest.mark.parametrize(("text", "expected"), [
    ("ethereum:0x1", True), ("  Ethereum:x", True), ("ETHEREUM:", True),
    ("0xethereum:", False), ("ethereum", False), ("", False), (None, False), (7, False),
])
def test_is_payment_uri(text, expected):
    assert is_payment_uri(text) is expected


def test_build_is_what_parse_reads():
    uri = build_transfer_uri(TOKEN.lower(), 31337, TO.lower(), 1_500_000)
    assert uri == TRANSFER
    assert parse_transfer_uri(uri) == TransferRequest(TOKEN, TO, 31337, 1_500_000)
    no_amount = build_transfer_uri(TOKEN, 1, TO, None)
    assert no_amount == f"ethereum:{TOKEN}@1/transfer?address={TO}"
    assert parse_transfer_uri(no_amount) == TransferRequest(TOKEN, TO, 1, None)
    for bad in (0, -1, 2**256):
        with pytest.raises(ValueError):
            build_transfer_uri(TOKEN, 1, TO, bad)


@pytest.mark.parametrize(("units", "decimals", "text"), [
    (1_500_000, 6, "1.5"), (1, 6, "0.000001"), (10**6, 6, "1"), (123_456_789_000, 6, "123456.789"),
    (42, 0, "42"), (U256, 18, "115792089237316195423570985008687907853269984665640564039457.584007913129639935"),
])
def test_format_units_is_exact_and_read_back(units, decimals, text):
    assert format_units(units, decimals) == text
    assert parse_units(text, decimals) == units
