"""services.chain.padded_gas: a built call's gas limit from its estimate."""

import pytest

from wallet_app.services.chain import padded_gas


@pytest.mark.parametrize("estimate, limit", [
    (34_455, 59_455),  # a tUSD transfer to a holder; to one that emptied its balance meanwhile it uses 51,555
    (51_555, 77_332),  # half as much again once that is more than 25,000
    (50_000, 75_000),
    (21_000, 46_000),
    (1, 25_001),
])
def test_padded_gas(estimate, limit):
    assert padded_gas(estimate) == limit
