"""services.chain.l1_fee on anvil: an OP-stack chain's GasPriceOracle (here a stand-in at its address)
prices the unsigned legacy transaction, and a chain without l1_fee_oracle costs no read."""

import dataclasses

import pytest
import rlp
from eth_account import Account
from eth_account._utils.legacy_transactions import serializable_unsigned_transaction_from_dict

from wallet_app.errors import AppError
from wallet_app.services import chain as chain_svc

ORACLE = "0x420000000000000000000000000000000000000F"
# Runtime code: returns the length of getL1Fee's bytes argument (the word at 0x24) times 10^12.
#   PUSH1 0x24 CALLDATALOAD PUSH5 10^12 MUL PUSH1 0 MSTORE PUSH1 0x20 PUSH1 0 RETURN
PER_BYTE = 10**12
LENGTH_TIMES_PER_BYTE = "0x602435" + "64e8d4a51000" + "02600052" + "60206000f3"


@pytest.mark.parametrize("fields", [
    {"nonce": "3", "gas_price": "1000000000", "gas_limit": "50000", "to": "0x5FbDB2315678afecb367f032d93F642f64180aa3",
     "value": "0", "data": "0xa9059cbb" + "00" * 64},
    {"nonce": "0", "gas_price": "1", "gas_limit": "21000", "to": "0x" + "00" * 20, "value": str(10**18), "data": "0x"},
])
def test_the_unsigned_rlp_is_eth_accounts(fields):
    expected = rlp.encode(serializable_unsigned_transaction_from_dict({
        "nonce": int(fields["nonce"]), "gasPrice": int(fields["gas_price"]), "gas": int(fields["gas_limit"]),
        "to": fields["to"], "value": int(fields["value"]), "data": fields["data"]}))
    assert chain_svc.unsigned_legacy_rlp(fields) == expected


def test_the_oracle_prices_the_unsigned_transaction(chain, w3, funded):
    tusd = chain.tokens[0].token_address
    tx = chain_svc.build_erc20_transfer(chain, funded.address, tusd, Account.create().address, 1)
    assert chain_svc.l1_fee(chain, tx) == 0  # no oracle configured: nothing read
    w3.provider.make_request("anvil_setCode", [ORACLE, LENGTH_TIMES_PER_BYTE])
    op_chain = dataclasses.replace(chain, l1_fee_oracle=ORACLE)
    assert chain_svc.l1_fee(op_chain, tx) == len(chain_svc.unsigned_legacy_rlp(tx)) * PER_BYTE
    # An oracle that is not one (no code: an empty answer) refuses the preview, not a fee of 0.
    with pytest.raises(AppError) as e:
        chain_svc.l1_fee(dataclasses.replace(chain, l1_fee_oracle=Account.create().address), tx)
    assert e.value.code == "rpc_unavailable"
