"""services.txpreview.simulate on anvil: the /sign page's balance changes are simulated as the
transaction will run, so a contract cannot tell the simulation from the real thing by its gas price."""

from eth_account import Account

from wallet_app.services import txpreview
from wallet_app.services.eth import ZERO_ADDRESS

# Runtime code: when tx.gasprice is 0 (an unvalidated simulation), send the whole balance back to
# the caller; otherwise keep what it was sent.
#   GASPRICE PUSH1 0x12 JUMPI  PUSH1 0 x4 SELFBALANCE CALLER GAS CALL POP STOP  JUMPDEST STOP
REFUNDS_ONLY_IN_SIMULATION = "0x3a6012576000600060006000473" + "35af150005b00"
BAIT = 5 * 10**16


def test_the_preview_runs_at_the_links_gas_price(chain, w3, funded):
    bait = Account.create().address
    w3.provider.make_request("anvil_setCode", [bait, REFUNDS_ONLY_IN_SIMULATION])
    w3.provider.make_request("anvil_setBalance", [bait, hex(BAIT)])
    tx = {"chain_id": "31337", "to": bait, "data": "0x", "value": str(10**17), "nonce": "0",
          "gas_limit": "100000", "gas_price": str(w3.eth.gas_price)}

    sim = txpreview.simulate(chain, funded.address, tx)

    # At gas price 0 it read "+0.05 ETH": the 0.1 ETH sent, then 0.15 ETH back.
    assert (sim.status, sim.changes) == ("ok", {ZERO_ADDRESS: -(10**17)})


def test_a_queued_send_after_a_pending_one_is_still_previewed(chain, w3, funded):
    """The link's nonce is not simulated: after a pending send it is past the latest block's."""
    w3.provider.make_request("evm_setAutomine", [False])
    try:
        w3.eth.send_transaction({"from": w3.eth.accounts[0], "to": funded.address, "value": 1})  # keeps the pool busy
        tx = {"chain_id": "31337", "to": Account.create().address, "data": "0x", "value": "7",
              "nonce": str(w3.eth.get_transaction_count(funded.address) + 1), "gas_limit": "21000",
              "gas_price": str(w3.eth.gas_price)}
        sim = txpreview.simulate(chain, funded.address, tx)
    finally:
        w3.provider.make_request("evm_setAutomine", [True])
        w3.provider.make_request("evm_mine", [])
    assert (sim.status, sim.changes) == ("ok", {ZERO_ADDRESS: -7})
