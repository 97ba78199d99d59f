"""services.txpreview.simulate on anvil: the /sign page's balance changes are simulated as the
transaction will run, so a contract cannot tell the simulation from the real thing by its gas price,
or by its block's number or prevrandao (test contracts: contracts/test/SimulationTell.sol); and an
approval the user gives shows as 'No balance changes.' only when the preview's lines name it
(contracts/test/OldApprovalToken.sol)."""

from eth_abi import encode
from eth_account import Account

from contracts import artifacts
from contracts.deploy import DEV_DEPLOYER_KEY, _deploy_contract
from tests.anvil_mining import mine, mining_paused
from wallet_app.services import txpreview
from wallet_app.services.chain import token_metadata
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
    try:
        with mining_paused(w3):
            # keeps the pool busy
            w3.eth.send_transaction({"from": w3.eth.accounts[0], "to": funded.address, "value": 1})
            tx = {"chain_id": "31337", "to": Account.create().address, "data": "0x", "value": "7",
                  "nonce": str(w3.eth.get_transaction_count(funded.address) + 1), "gas_limit": "21000",
                  "gas_price": str(w3.eth.gas_price)}
            sim = txpreview.simulate(chain, funded.address, tx)
    finally:
        mine(w3)
    assert (sim.status, sim.changes) == ("ok", {ZERO_ADDRESS: -7})


# ---------------------------------------------------------------- the simulated block (txpreview.next_block)


def _tell(w3, send_tx):
    """A SimulationTell with 1 ETH to pay back from: (address, contract)."""
    address = _deploy_contract(w3, DEV_DEPLOYER_KEY, "SimulationTell")
    send_tx(Account.from_key(DEV_DEPLOYER_KEY), address, "0x", 10**18)
    return address, w3.eth.contract(address=address, abi=artifacts.abi("SimulationTell"))


def _preview_then_send(chain, w3, funded, send_tx, to, data):
    """The simulated changes of sending BAIT with `data`, then the real change (the fee left out)."""
    tx = {"chain_id": "31337", "to": to, "data": data, "value": str(BAIT), "nonce": "0", "gas_limit": "100000",
          "gas_price": str(w3.eth.gas_price)}
    sim = txpreview.simulate(chain, funded.address, tx)
    before = w3.eth.get_balance(funded.address)
    receipt = send_tx(funded, to, data, BAIT)
    real = w3.eth.get_balance(funded.address) - before + receipt["gasUsed"] * receipt["effectiveGasPrice"]
    return (sim.status, sim.changes), real


def test_the_preview_runs_in_the_next_blocks_number(chain, w3, funded, send_tx):
    """anvil simulated at the latest block's number: a contract paying back only there showed +BAIT
    for a transaction that takes BAIT (found by an audit)."""
    address, tell = _tell(w3, send_tx)
    data = tell.encode_abi("claimByNumber", [w3.eth.block_number])

    assert _preview_then_send(chain, w3, funded, send_tx, address, data) == (("ok", {ZERO_ADDRESS: -BAIT}), -BAIT)


def test_the_preview_runs_with_a_prevrandao_of_its_own(chain, w3, funded, send_tx):
    """Left to the node, the simulated block's prevrandao is the latest block's (anvil) or 0 (geth):
    a contract paying back only then showed +BAIT for a transaction that takes BAIT (found by an audit)."""
    address, tell = _tell(w3, send_tx)
    send_tx(funded, address, tell.encode_abi("mark", []))  # the latest block's prevrandao, kept
    data = tell.encode_abi("claimByRandao", [])

    assert _preview_then_send(chain, w3, funded, send_tx, address, data) == (("ok", {ZERO_ADDRESS: -BAIT}), -BAIT)


# ---------------------------------------------------------------- approvals (found by an audit)


def _link(w3, to, data):
    return {"chain_id": "31337", "to": to, "data": data, "value": "0", "nonce": "0", "gas_limit": "100000",
            "gas_price": str(w3.eth.gas_price)}


def test_an_old_tokens_increase_approval_is_decoded_and_its_approval_shown(chain, w3, funded):
    """increaseApproval (OpenZeppelin 1.x) read 'Contract call', 'Unknown function', and the recipient
    check looked at the token."""
    address = _deploy_contract(w3, DEV_DEPLOYER_KEY, "OldApprovalToken")
    old = w3.eth.contract(address=address, abi=artifacts.abi("OldApprovalToken"))
    attacker = Account.create().address
    tx = _link(w3, address, old.encode_abi("increaseApproval", [attacker, 2**256 - 1]).lower())

    preview = txpreview.describe(tx, chain, token_metadata(chain, address))
    assert preview.lines == [txpreview.Line("sign_line_approve", {"spender": attacker, "amount": "sign_unlimited",
                                                                  "symbol": "OLD"}, keyed=("amount",))]
    assert preview.warnings == [txpreview.Line("sign_warn_unlimited")]
    assert txpreview.counterparty(tx) == attacker
    assert txpreview.simulate(chain, funded.address, tx) == txpreview.Simulation("ok", {})  # the line says it


def test_an_allowance_set_by_a_call_of_no_known_name_is_no_balance_change(chain, w3, funded):
    """It said "No balance changes." for a call that lets another take all of the user's token."""
    address = _deploy_contract(w3, DEV_DEPLOYER_KEY, "OldApprovalToken")
    old = w3.eth.contract(address=address, abi=artifacts.abi("OldApprovalToken"))
    tx = _link(w3, address, old.encode_abi("claimReward", [Account.create().address]))

    assert txpreview.simulate(chain, funded.address, tx) == txpreview.UNAVAILABLE


def test_an_approve_of_a_configured_token_still_has_no_balance_change(chain, w3, funded):
    token = chain.tokens[0].token_address
    data = "0x095ea7b3" + encode(["address", "uint256"], [Account.create().address, 2**256 - 1]).hex()

    assert txpreview.simulate(chain, funded.address, _link(w3, token, data)) == txpreview.Simulation("ok", {})
