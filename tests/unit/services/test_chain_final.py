"""services.chain.is_final: a payment's block is final (the row settled, no longer followed for
a reorganisation; a user's send marked ok or failed) once the chain's index_confirmations blocks
are counted under the head, as the indexer counts them."""

from __future__ import annotations

import pytest

from wallet_app.services.chain import is_final


@pytest.mark.parametrize(
    "block, head, confirmations, final",
    [
        (10, 10, 0, True),  # no confirmations (the development chain): the head itself
        (10, 9, 0, False),  # a receipt from a block the head read before does not know yet
        (10, 10, 1, False),
        (10, 11, 1, True),
        (10, 14, 5, False),
        (10, 15, 5, True),
        (10, 1000, 5, True),
        (0, 5, 5, True),
    ],
)
def test_final_once_deep_enough(block, head, confirmations, final):
    assert is_final(block, head, confirmations) is final
