"""services.transfers.node_words: a node's refusal of a send in words the user can act on."""

import pytest

from wallet_app.errors import AppError
from wallet_app.services.transfers import node_words


@pytest.mark.parametrize("code, message, worded, params", [
    # anvil 1.x, and geth's execution-time words
    ("rejected", "node rejected the transaction: {'code': -32003, 'message': 'max fee per gas less than block "
     "base fee'}", "fee_outdated", {}),
    ("rejected", "node rejected the transaction: {'code': -32003, 'message': 'Insufficient funds for gas * price + "
     "value'}", "fee_unaffordable", {"symbol": "ETH"}),
    # geth's txpool
    ("rejected", "node rejected the transaction: insufficient funds for gas * price + value: address 0xAb have 1 "
     "want 2", "fee_unaffordable", {"symbol": "ETH"}),
    ("rejected", "node rejected the transaction: nonce too low", "sign_nonce_used", {}),
    ("rejected", "node rejected the transaction: {'code': -32003, 'message': 'nonce too low'}", "sign_nonce_used", {}),
    ("rejected", "node rejected the transaction: replacement transaction underpriced", "rejected", {}),
    # not the node's refusal: left as it is
    ("rpc_unavailable", "node could not take the transaction now: insufficient funds", "rpc_unavailable", {}),
])
def test_node_words(code, message, worded, params):
    error = AppError(code, message)
    out = node_words(error, "ETH")
    assert (out.code, out.params) == (worded, params)
    assert (out is error) == (worded == code)
