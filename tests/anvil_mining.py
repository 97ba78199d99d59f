"""Anvil's automining paused, for the tests of pending transactions (tests/api, tests/contracts,
tests/e2e): what is sent meanwhile waits in the node's pool until `mine`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from web3 import Web3


@contextlib.contextmanager
def mining_paused(w3: Web3) -> Iterator[None]:
    """The node keeps sent transactions pending until `mine`; automine comes back in any case."""
    w3.provider.make_request("evm_setAutomine", [False])  # type: ignore[arg-type]
    try:
        yield
    finally:
        w3.provider.make_request("evm_setAutomine", [True])  # type: ignore[arg-type]


def mine(w3: Web3) -> None:
    """One block of what the pool holds."""
    w3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
