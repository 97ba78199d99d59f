"""What a relayed payment cost, from its receipt: gas used x its price, and on an OP-stack chain
(Base, Optimism) the L1 data fee on top, which the relayer's hourly budget must count (an audit:
it was dropped, and the budget undercounted such chains' spend by as much again)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from wallet_app.models import Payment
from wallet_app.services import relayer
from wallet_app.services.chain import receipts

HASH = "0x" + "ab" * 32
RECEIPT = {"status": "0x1", "blockNumber": "0x10", "transactionHash": HASH, "to": "0x" + "11" * 20,
           "gasUsed": "0x12c4a", "effectiveGasPrice": "0x3b9aca00"}  # 76874 gas at 1 gwei


def node(receipt: dict) -> SimpleNamespace:
    return SimpleNamespace(provider=SimpleNamespace(make_batch_request=lambda calls: [{"result": receipt}]))


@pytest.mark.parametrize("extra, l1_fee", [({}, 0), ({"l1Fee": "0x5af3107a4000"}, 10**14)])
def test_a_receipt_keeps_its_l1_fee(extra, l1_fee):
    (read,) = receipts(node({**RECEIPT, **extra}), [HASH]).values()  # type: ignore[arg-type]
    assert (read["gasUsed"], read["effectiveGasPrice"], read["l1Fee"]) == (76874, 10**9, l1_fee)


@pytest.mark.parametrize("l1_fee", [0, 10**14])
def test_a_mined_payment_costs_its_gas_and_its_l1_fee(monkeypatch, l1_fee):
    monkeypatch.setattr(relayer, "_set_activity", lambda db, row: None)
    row = Payment(payment_id="0x" + "01" * 32, user_id=1, chain_id=8453, token_address="0x" + "22" * 20,
                  amount="1", from_address="0x" + "33" * 20, status="pending", gas_cost_wei=300_000 * 10**9)
    (receipt,) = receipts(node({**RECEIPT, "l1Fee": hex(l1_fee)}), [HASH]).values()  # type: ignore[arg-type]
    relayer._apply_receipt(SimpleNamespace(add=lambda row: None), row, None, HASH, receipt)
    assert (row.status, row.gas_cost_wei) == ("ok", 76874 * 10**9 + l1_fee)
