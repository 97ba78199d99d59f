"""The pure rules of services.pending (speed up and cancel a pending send): table tests."""

import json

import pytest
from web3 import Web3

from wallet_app.models import Activity
from wallet_app.services.chain import DecodedTx
from wallet_app.services.pending import (
    Member,
    bump,
    bump_fees,
    is_cancel,
    parse_activity_id,
    receipt_status,
    replacement_gas_price,
    replacement_tx,
    resolve_group,
    stored_fields,
)

ME = "0x" + "ab" * 20
TOKEN = "0x" + "cd" * 20


@pytest.mark.parametrize("value, parsed", [
    ("7", 7), (7, 7), ("123456789012345678", 123456789012345678), (2**59, 2**59),
    # Unicode digits pass str.isdigit() but not int() ("²") or are not what a link means ("١").
    ("²", None), ("١", None), ("７", None),
    ("0", None), ("07", None), ("-1", None), (-1, None), ("1" * 19, None), ("9" * 30, None), (10**30, None),
    ("", None), (" 7", None), ("7\n", None), ("1e3", None), (True, None), (7.0, None), (None, None), (["7"], None),
])
def test_parse_activity_id(value, parsed):
    assert parse_activity_id(value) == parsed


@pytest.mark.parametrize("price, bumped", [
    (0, 0), (1, 2), (9, 10), (10, 11), (100, 110), (1_000_000_001, 1_100_000_002), (2_000_000_000, 2_200_000_000),
])
def test_bump_is_ten_percent_rounded_up(price, bumped):
    assert bump(price) == bumped
    assert bump(price) * 100 >= price * 110  # what geth's txpool requires


@pytest.mark.parametrize("fees, bumped", [
    ({"gas_price": 1_000}, {"gas_price": 1_100}),
    ({"max_fee_per_gas": 30, "max_priority_fee_per_gas": 2}, {"max_fee_per_gas": 33, "max_priority_fee_per_gas": 3}),
    # a tip equal to the cap stays under the (bumped) cap
    ({"max_fee_per_gas": 10, "max_priority_fee_per_gas": 10}, {"max_fee_per_gas": 11, "max_priority_fee_per_gas": 11}),
])
def test_bump_fees_legacy_and_eip1559(fees, bumped):
    assert bump_fees(fees) == bumped


@pytest.mark.parametrize("group, node, price", [
    ([1_000], 500, 1_100),        # +10% over the pending one
    ([1_000, 1_100], 500, 1_210),  # over the highest sent with this nonce
    ([1_000], 5_000, 5_000),       # the node's price moved above: use it
])
def test_replacement_gas_price(group, node, price):
    assert replacement_gas_price(group, node) == price


@pytest.mark.parametrize("receipt, status", [({"status": 1}, "ok"), ({"status": 0}, "failed")])
def test_receipt_status(receipt, status):
    assert receipt_status(receipt) == status


A, B, C = Member(1, "transfer", "submitted"), Member(2, "transfer", "submitted"), Member(3, "cancel", "submitted")


@pytest.mark.parametrize("members, mined, used, out", [
    ([A, B], {}, False, {}),                                  # nothing mined: unchanged
    ([A, B], {2: "ok"}, True, {1: "replaced", 2: "ok"}),      # the speed-up won
    ([A, B], {1: "ok"}, True, {1: "ok", 2: "replaced"}),      # the original won after all
    ([A, C], {3: "ok"}, True, {1: "cancelled", 3: "ok"}),     # the cancel won
    ([A, C], {1: "failed"}, True, {1: "failed", 3: "replaced"}),  # a reverted winner still took the nonce
    ([A, B], {}, True, {1: "replaced", 2: "replaced"}),       # another device's tx took the nonce
    ([A], {1: "ok"}, True, {1: "ok"}),                        # a plain send
    ([Member(1, "transfer", "replaced"), Member(2, "transfer", "ok")], {2: "ok"}, True, {}),  # already resolved
])
def test_resolve_group(members, mined, used, out):
    assert resolve_group(members, mined, used) == out


def decoded(to, value=0, data="0x", sender=ME):
    return DecodedTx(sender, 31337, 5, 1, 21000, to, value, data, "0x")


@pytest.mark.parametrize("tx, cancel", [
    (decoded(ME), True),
    (decoded(ME.upper().replace("0X", "0x")), True),
    (decoded(ME, value=1), False),
    (decoded(ME, data="0xa9059cbb"), False),
    (decoded(TOKEN), False),
    (decoded(None), False),
])
def test_is_cancel(tx, cancel):
    assert is_cancel(tx) is cancel


FIELDS = {"chain_id": 31337, "to": TOKEN, "data": "0xa9059cbb00", "value": "0", "nonce": 7, "gas_limit": "51234",
          "gas_price": "1000"}


@pytest.mark.parametrize("kind, expected", [
    ("speedup", {"to": Web3.to_checksum_address(TOKEN), "data": "0xa9059cbb00", "value": "0",
                 "gas_limit": "51234"}),
    ("cancel", {"to": Web3.to_checksum_address(ME), "data": "0x", "value": "0", "gas_limit": "21000"}),
])
def test_replacement_tx(kind, expected):
    tx = replacement_tx(kind, FIELDS, ME, 1100)
    assert tx == {"chain_id": "31337", "nonce": "7", "gas_price": "1100", **expected}


def row(data, nonce=7, chain_id=31337):
    return Activity(user_id=1, type="transfer", chain_id=chain_id, nonce=nonce,
                    data=json.dumps(data) if isinstance(data, dict) else data)


STORED = {"from": ME, "to": TOKEN, "data": "0x", "value": "0", "gas_limit": "21000", "gas_price": "5"}


@pytest.mark.parametrize("activity, fields", [
    (row(STORED), {**STORED, "chain_id": 31337, "nonce": 7}),
    (row({"to": TOKEN, "value": "0", "selector": "0x"}), None),  # an entry from before (no fields kept)
    (row(STORED, nonce=None), None),
    (row(STORED, chain_id=None), None),
    (row("not json"), None),
    (row(None), None),
])
def test_stored_fields(activity, fields):
    assert stored_fields(activity) == fields
