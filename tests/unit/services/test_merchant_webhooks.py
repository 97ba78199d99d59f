"""The pure parts of the merchant webhooks and look-ups: signature, backoff, body, bounded ranges."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from wallet_app.services import chain as chains
from wallet_app.services import merchant_payments, merchant_webhooks
from wallet_app.services.merchant_payments import fallback_ranges
from wallet_app.services.merchant_webhooks import backoff_seconds, event_body, signature, verify

SECRET = "s3cret-s3cret-s3cret"


def test_signature_is_hmac_sha256_of_the_raw_body():
    body = b'{"id":"evt_1"}'
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert signature(SECRET, body) == expected
    assert verify(SECRET, body, expected)


@pytest.mark.parametrize("secret, body, header", [
    (SECRET, b'{"id":"evt_1"} ', None),
    (SECRET, b'{"id":"evt_2"}', signature(SECRET, b'{"id":"evt_1"}')),  # another body
    ("another-secret-value", b'{"id":"evt_1"}', signature(SECRET, b'{"id":"evt_1"}')),
    (SECRET, b'{"id":"evt_1"}', signature(SECRET, b'{"id":"evt_1"}').removeprefix("sha256=")),
])
def test_verify_refuses(secret, body, header):
    assert not verify(secret, body, header)


@pytest.mark.parametrize("attempts, base, cap, wait", [
    (1, 10, 3600, 10),
    (2, 10, 3600, 20),
    (3, 10, 3600, 40),
    (9, 10, 3600, 2560),
    (10, 10, 3600, 3600),
    (60, 10, 3600, 3600),
    (0, 5, 3600, 5),
    (4, 1, 5, 5),
])
def test_backoff_doubles_up_to_its_cap(attempts, base, cap, wait):
    assert backoff_seconds(attempts, base, cap) == wait


def test_event_body_signs_its_timestamp_and_keeps_the_payment():
    payment = {"ref": "0x" + "ab" * 32, "amount": "1500000"}
    one, two = event_body("evt_x", json.dumps(payment), 100), event_body("evt_x", json.dumps(payment), 160)
    assert json.loads(one) == {"id": "evt_x", "type": "payment.paid", "timestamp": 100, "payment": payment}
    assert json.loads(two)["timestamp"] == 160 and signature(SECRET, one) != signature(SECRET, two)


@pytest.mark.parametrize("head, hint, window, windows, ranges", [
    (100, [], 10, 3, [(91, 100), (81, 90), (71, 80)]),
    (100, [42], 10, 2, [(42, 42), (91, 100), (81, 90)]),
    (100, [42, 7, 42], 10, 1, [(42, 42), (7, 7), (91, 100)]),  # one per payer of the ref, each once
    (15, [], 10, 5, [(6, 15), (0, 5)]),  # stops at block 0
    (0, [0], 10, 2, [(0, 0), (0, 0)]),
    (100, [101, -1], 10, 1, [(91, 100)]),  # a hint past the head is not read
    (100, [], 10, 0, []),
])
def test_fallback_ranges(head, hint, window, windows, ranges):
    assert fallback_ranges(head, hint, window, windows) == ranges


PAYMENT = {"ref": "0x" + "ab" * 32, "chain_id": 8453, "payer": "0x" + "11" * 20, "merchant": "0x" + "22" * 20,
           "token": "0x" + "33" * 20, "amount": "1500000", "tx_hash": "0x" + "44" * 32, "block_number": 100}


@pytest.mark.parametrize("confirmations_needed, confirmations, sent", [
    (1, 1, False),  # the event in the head block: the one a 1-block reorganisation replaces (was sent)
    (1, 2, True),  # one block on top of it: final for the indexer and the relayer too
    (5, 5, False),
    (5, 6, True),
    (5, 40, True),
    (0, 1, True),  # no confirmations: at once, without a chain read
])
def test_a_webhook_waits_for_its_block_to_be_final(monkeypatch, confirmations_needed, confirmations, sent):
    chain = type("Chain", (), {"index_confirmations": confirmations_needed})()
    monkeypatch.setattr(chains, "get_chain", lambda chain_id: chain)
    event = {**PAYMENT, "confirmations": confirmations}
    monkeypatch.setattr(merchant_payments, "chain_payments", lambda chain_, ref: [event])
    payload = merchant_webhooks.confirmed_payload(json.dumps(PAYMENT))
    assert (payload is not None) is sent
