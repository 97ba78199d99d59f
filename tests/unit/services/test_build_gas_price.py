"""services.chain.gas_price, the price a transaction built here is given (a Send's transfer, a
payment's approve, a speed-up), against a node that answers as geth does: eth_gasPrice is the
latest block's base fee plus a tip, and the next block's base fee (its pending block's) is up to
12.5% above the latest's while blocks are fuller than their target."""

from types import SimpleNamespace

import pytest

from wallet_app.services import chain as chain_svc
from wallet_app.services import pending, txpreview
from wallet_app.services.chain import ChainConfig

CHAIN = ChainConfig(11155111, "Sepolia", "http://127.0.0.1:1", "0x" + "00" * 20, None, "ETH", "Ether", 18, None, ())
SENDER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
GWEI = 10**9
TIP = GWEI // 10


def _geth(latest: int, upcoming: int | None) -> SimpleNamespace:
    blocks = {"latest": latest, "pending": upcoming}

    def make_request(method, params):
        assert method == "eth_getBlockByNumber"
        fee = blocks[params[0]]
        return {"result": None if fee is None else {"number": "0x10", "baseFeePerGas": hex(fee)}}

    eth = SimpleNamespace(gas_price=latest + TIP, get_transaction_count=lambda *a: 3, estimate_gas=lambda *a: 34_455)
    return SimpleNamespace(eth=eth, provider=SimpleNamespace(make_request=make_request))


@pytest.mark.parametrize("latest, upcoming, price", [
    (40 * GWEI, 45 * GWEI, 45 * GWEI + TIP),  # blocks full: the next base fee 12.5% up, the tip kept on top
    (40 * GWEI, 36 * GWEI, 40 * GWEI + TIP),  # blocks emptier: the node's own price
    (40 * GWEI, None, 40 * GWEI + TIP),  # no pending block: the latest's base fee is the next one's
])
def test_a_transaction_built_a_moment_ago_is_not_priced_below_the_next_base_fee(monkeypatch, latest, upcoming,
                                                                                 price):
    monkeypatch.setattr(chain_svc, "web3_for", lambda chain: _geth(latest, upcoming))
    tx = chain_svc.build_erc20_transfer(CHAIN, SENDER, TOKEN, RECIPIENT, 1)
    assert int(tx["gas_price"]) == price
    # what /sign and /tx/submit check it against: it was refused at once, 'The network fee has gone up'
    assert txpreview.fee_outdated(int(tx["gas_price"]), chain_svc.next_base_fee(CHAIN)) is None
    # a speed-up's price: at least the node's, as the send's
    assert pending.replacement_gas_price([GWEI], chain_svc.gas_price(CHAIN)) == price
