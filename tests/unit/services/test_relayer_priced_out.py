"""relayer._priced_out (a refused re-send of a transaction the node no longer knows: replaced at a
higher price, or only re-sent again), relayer._holds_up (whether a transaction that has waited
relayer_stuck_seconds is worth re-pricing) and what a node's refusal means (_refusal_outcome,
_send_batch). The re-pricing itself: tests/api/test_relayer_reprice.py."""

from types import SimpleNamespace

import pytest

from wallet_app.services import relayer

SENT, REJECTED, UNKNOWN, TAKEN = (relayer.SendOutcome.SENT, relayer.SendOutcome.REJECTED, relayer.SendOutcome.UNKNOWN,
                                  relayer.SendOutcome.NONCE_TAKEN)
NOW, STUCK = 1_000, 30


@pytest.mark.parametrize(
    ("outcome", "msg", "sent_at", "priced_out"),
    [
        # The node names the price: at once, even a filler never sent (sent_at None).
        (REJECTED, "transaction underpriced", NOW, True),
        (REJECTED, "{'code': -32003, 'message': 'max fee per gas less than block base fee'}", None, True),
        (REJECTED, "FeeTooLow", NOW, True),
        (REJECTED, "fee too low", NOW, True),
        (REJECTED, "gas price below minimum", NOW, True),
        # Another refusal: only once it has waited as long as a stuck one that the node knows.
        (REJECTED, "txpool is full", NOW - STUCK + 1, False),
        (REJECTED, "txpool is full", NOW - STUCK, True),
        (REJECTED, "txpool is full", None, False),
        # Another of our transactions holds the nonce in the pool: nothing is lost.
        (REJECTED, "replacement transaction underpriced", NOW - STUCK, False),
        # Not refused: sent, not known to be, or the nonce is used (it ends as 'dropped').
        (SENT, "", NOW - STUCK, False),
        (UNKNOWN, "ConnectionError", NOW - STUCK, False),
        (TAKEN, "nonce too low", NOW - STUCK, False),
    ],
)
def test_priced_out(outcome, msg, sent_at, priced_out):
    assert relayer._priced_out(outcome, msg, sent_at, NOW, STUCK) is priced_out


def row(nonce: int, gas_price: int) -> SimpleNamespace:
    return SimpleNamespace(payment_id="0x01", nonce=nonce, raw_tx="0x", gas_price=str(gas_price))


@pytest.mark.parametrize(
    ("nonce", "gas_price", "holds_up"),
    [
        (7, 100, True),  # the nonce the chain waits for, whatever its price
        (7, 500, True),
        (8, 100, False),  # behind it, priced at the node's price or above: it goes in its turn
        (9, 120, False),
        (8, 99, True),  # behind it, but below the node's price: stuck in its turn too
    ],
)
def test_holds_up(nonce, gas_price, holds_up):
    assert relayer._holds_up(row(nonce, gas_price), mined_nonce=7, gas_price_now=100) is holds_up


@pytest.mark.parametrize(
    ("msg", "outcome"),
    [
        # The node has it already (geth/reth/anvil, Besu, Nethermind, Erigon): a send.
        ("already known", SENT),
        ("Known transaction: 0x1234", SENT),
        ("AlreadyKnown", SENT),
        ("transaction already exists", SENT),
        # The provider's own trouble: whether it reached a pool is unknown (kept, re-sent as it was).
        ("rate limit exceeded", UNKNOWN),
        ("429 Too Many Requests", UNKNOWN),
        ("request timed out", UNKNOWN),
        ("Internal error", UNKNOWN),
        # The transaction's own: refused, never pooled.
        ("insufficient funds for gas * price + value", REJECTED),
        ("intrinsic gas too low", REJECTED),
        ("transaction underpriced", REJECTED),
        ("exceeds block gas limit", REJECTED),
        ("txpool is full", REJECTED),
    ],
)
def test_refusal_outcome(msg, outcome):
    assert relayer._refusal_outcome(SimpleNamespace(), "0x00", msg) == (outcome, msg)


def test_a_whole_batch_refused_says_nothing_of_each_transaction(monkeypatch):
    """A provider refusing the batch itself (its size, a rate limit): every send unknown, each row
    keeps its nonce and reconcile re-sends the same raw transaction, never a filler burning it."""

    def refused(w3, calls):
        raise relayer.Web3RPCError("batch limit exceeded")

    monkeypatch.setattr(relayer, "web3_for", lambda chain: None)
    monkeypatch.setattr(relayer, "_batch", refused)
    assert relayer._send_batch(SimpleNamespace(), ["0x01", "0x02"]) == [(UNKNOWN, "batch limit exceeded")] * 2
