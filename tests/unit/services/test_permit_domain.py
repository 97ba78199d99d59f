"""chain.read_permit_domain (pure): which answers show an EIP-2612 token, and its domain."""

import pytest
from eth_abi import encode

from wallet_app.services.chain import PermitDomain, domain_separator, read_permit_domain

TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
NO = (False, b"")


def word(n: int) -> tuple[bool, bytes]:
    return True, n.to_bytes(32, "big")


def string(text: str) -> tuple[bool, bytes]:
    return True, encode(["string"], [text])


def eip5267(name: str, version: str) -> tuple[bool, bytes]:
    return True, encode(["bytes1", "string", "string", "uint256", "address", "bytes32", "uint256[]"],
                        [b"\x0f", name, version, 31337, TOKEN, b"\0" * 32, []])


def sep(name: str, version: str, chain_id: int = 31337) -> tuple[bool, bytes]:
    return True, domain_separator(name, version, chain_id, TOKEN)


@pytest.mark.parametrize("answers, expected", [
    # OpenZeppelin 5 (EIP-5267): name and version from eip712Domain().
    ([sep("Newbl Test USD", "1"), eip5267("Newbl Test USD", "1"), string("Newbl Test USD"), NO, word(0)],
     ("Newbl Test USD", "1")),
    # USDC-like: no eip712Domain, version() says "2".
    ([sep("USD Coin", "2"), NO, string("USD Coin"), string("2"), word(5)], ("USD Coin", "2")),
    # Older OpenZeppelin: no eip712Domain, no version(): "1".
    ([sep("Old", "1"), NO, string("Old"), NO, word(0)], ("Old", "1")),
    # A separator that matches no candidate (another domain shape, e.g. with a salt): not usable.
    ([sep("Other", "1"), NO, string("Old"), NO, word(0)], None),
    # A separator for another chain (a token deployed elsewhere by a copied code): not usable.
    ([sep("Old", "1", chain_id=1), NO, string("Old"), NO, word(0)], None),
    # No DOMAIN_SEPARATOR, or no nonces(): no permit.
    ([NO, eip5267("A", "1"), string("A"), NO, word(0)], None),
    ([sep("A", "1"), eip5267("A", "1"), string("A"), NO, NO], None),
    # Garbage eip712Domain is ignored, name() still decides.
    ([sep("A", "1"), (True, b"\x01\x02"), string("A"), NO, word(0)], ("A", "1")),
])
def test_read_permit_domain(answers, expected):
    domain = read_permit_domain(31337, TOKEN, answers)
    assert domain == (PermitDomain(expected[0], expected[1], 31337, TOKEN) if expected else None)
