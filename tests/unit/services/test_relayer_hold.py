"""relayer._held_back: which of a pass's payments wait for the payer's earlier ones (the allowance
and balance read stood in for)."""

from types import SimpleNamespace

import pytest

from wallet_app.services import relayer

A, B, T, U = "0xa", "0xb", "0xt", "0xu"  # payers and tokens, lowercase as stored


def job(row_id: int, failure: str | None = None) -> relayer._Job:
    return relayer._Job(row_id, "0x", 100_000, failure)


@pytest.mark.parametrize(
    ("spends", "failures", "in_flight", "cover", "held"),
    [
        # Alone, with nothing on its way: its own check covers it, nothing is read.
        ({1: (A, T, 50, False)}, {}, [], None, set()),
        ({1: (A, T, 50, True)}, {}, [], None, set()),
        # Two of one payer and token: while the allowance and balance cover both, both go.
        ({1: (A, T, 30, False), 2: (A, T, 30, False)}, {}, [], 60, set()),
        ({1: (A, T, 30, False), 2: (A, T, 31, False)}, {}, [], 60, {2}),
        # A later smaller one still fits.
        ({1: (A, T, 30, False), 2: (A, T, 31, False), 3: (A, T, 20, False)}, {}, [], 60, {2}),
        # Other payers and other tokens are apart.
        ({1: (A, T, 50, False), 2: (B, T, 50, False), 3: (A, U, 50, False)}, {}, [], None, set()),
        # A failed one takes nothing.
        ({1: (A, T, 50, False), 2: (A, T, 50, False)}, {1: "expired"}, [], None, set()),
        # On its way: the first of the pass goes only if the cover takes both.
        ({1: (A, T, 30, False)}, {}, [(A, T, "30")], 60, set()),
        ({1: (A, T, 31, False)}, {}, [(A, T, "30")], 60, {1}),
        ({1: (A, T, 30, False)}, {}, [(B, T, "30"), (A, U, "30")], None, set()),
        # A permit payment goes only alone, and what follows it waits.
        ({1: (A, T, 10, False), 2: (A, T, 10, True)}, {}, [], 100, {2}),
        ({1: (A, T, 10, True), 2: (A, T, 10, False)}, {}, [], 100, {2}),
        ({1: (A, T, 10, True)}, {}, [(A, T, "10")], 100, {1}),
        # Cover unknown (0): only what its own check proved goes.
        ({1: (A, T, 10, False), 2: (A, T, 10, False)}, {}, [], 0, {2}),
    ],
)
def test_held_back(monkeypatch, spends, failures, in_flight, cover, held):
    read: list[tuple[str, str]] = []

    def cover_of(chain, payer, token):
        read.append((payer, token))
        assert cover is not None, "read although the payment's own check covers it"
        return cover

    monkeypatch.setattr(relayer, "_cover", cover_of)
    jobs = [job(row_id, failures.get(row_id)) for row_id in spends]
    chain = SimpleNamespace(chain_id=31337)  # handed to _cover only
    spend_of = {k: relayer._Spend(*v) for k, v in spends.items()}
    groups = relayer._groups(jobs, spend_of)
    assert relayer._held_back(chain, groups, spend_of, relayer._owed(in_flight)) == held
