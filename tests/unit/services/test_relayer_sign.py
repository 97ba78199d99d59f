"""services.relayer._sign builds and signs the relayer's transactions itself: byte for byte what
eth-account's sign_transaction makes of the same fields, which nodes accept."""

from __future__ import annotations

import pytest
from eth_account import Account
from eth_utils import to_checksum_address

from wallet_app.services.chain import ChainConfig
from wallet_app.services.relayer import _sign

ACCOUNT = Account.from_key("0x" + "5a" * 32)
OTHER = Account.from_key("0x" + "01" * 32)
CONTRACT = "0x5FbDB2315678afecb367f032d93F642f64180aa3"


def chain(chain_id: int) -> ChainConfig:
    return ChainConfig(chain_id, "c", "http://127.0.0.1:1", "0x" + "11" * 20, CONTRACT, "ETH", "Ether", 18, None, ())


@pytest.mark.parametrize(
    ("acct", "chain_id", "to", "data", "gas", "gas_price", "nonce"),
    [
        (ACCOUNT, 31337, CONTRACT, "0x" + "ab" * 356, 300_000, 2_000_000_000, 0),  # a pay call
        (ACCOUNT, 1, CONTRACT, "0x12345678", 21_000, 1, 1),
        (ACCOUNT, 31337, ACCOUNT.address, "0x", 21_000, 3_000_000_000, 127),  # a nonce filler: to itself
        (ACCOUNT, 2**53 - 1, CONTRACT.lower(), "0x00", 10**7, 10**12, 2**40),  # the largest chain id
        (ACCOUNT, 137, CONTRACT, "0x" + "ff" * 10_000, 30_000_000, 0, 128),
        (OTHER, 11155111, CONTRACT, "0x" + "00" * 68, 120_000, 12_345_678_901, 55_555),
    ],
)
def test_sign_is_what_eth_account_signs(acct, chain_id, to, data, gas, gas_price, nonce):
    raw, tx_hash = _sign(acct, chain(chain_id), to, data, gas, gas_price, nonce)
    expected = acct.sign_transaction(
        {
            "chainId": chain_id,
            "nonce": nonce,
            "to": to_checksum_address(to),  # eth-account takes no other form; _sign takes any case
            "data": data,
            "value": 0,
            "gas": gas,
            "gasPrice": gas_price,
        }
    )
    assert raw == "0x" + bytes(expected.raw_transaction).hex()
    assert tx_hash == "0x" + bytes(expected.hash).hex()
    assert Account.recover_transaction(raw) == acct.address


@pytest.mark.parametrize("to", ["0x", "0x" + "11" * 19, "0x" + "11" * 21])
def test_sign_refuses_a_recipient_that_is_no_address(to):
    with pytest.raises(ValueError, match="not an address"):
        _sign(ACCOUNT, chain(1), to, "0x", 21_000, 1, 0)
