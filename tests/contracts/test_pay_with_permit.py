"""NewblPayment2.payWithPermit against a real node: the payer (no native coin at all) signs an
EIP-2612 Permit and the Pay message; the deployer relays both in one transaction."""

import os

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data

from contracts.artifacts import artifact
from contracts.deploy import FAUCET_TOKEN_UNITS
from tests.contracts.test_payment_contract import DOMAIN_TYPES, as_struct, expect_revert, sign_pay

PERMIT_TYPES = [
    {"name": "owner", "type": "address"}, {"name": "spender", "type": "address"},
    {"name": "value", "type": "uint256"}, {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]
AMOUNT = 2_500_000


def sign_permit(key, token, message) -> bytes:
    typed = {
        "types": {"EIP712Domain": DOMAIN_TYPES, "Permit": PERMIT_TYPES},
        "primaryType": "Permit",
        "domain": {"name": token.functions.name().call(), "version": "1", "chainId": 31337,
                   "verifyingContract": token.address},
        "message": message,
    }
    return Account.sign_message(encode_typed_data(full_message=typed), key).signature


def permit_args(sig: bytes, value: int, deadline: int) -> list:
    return [value, deadline, sig[64], sig[:32], sig[32:64]]


@pytest.fixture
def gasless(w3, deployed, deployer, send_tx):
    """A payer holding tUSD and not one wei of ETH, no allowance; a Pay message and a Permit for it."""
    payment = w3.eth.contract(address=deployed["payment"], abi=artifact("NewblPayment2")["abi"])
    token = w3.eth.contract(address=deployed["tokens"]["tUSD"], abi=artifact("TestToken")["abi"])
    payer = Account.create()
    assert send_tx(deployer, token.address, token.encode_abi("mint", [payer.address, FAUCET_TOKEN_UNITS]))["status"]
    assert w3.eth.get_balance(payer.address) == 0
    now = w3.eth.get_block("latest")["timestamp"]
    pay = {"merchant": Account.create().address, "token": token.address, "from": payer.address,
           "amount": AMOUNT, "paymentRef": "0x" + os.urandom(32).hex(), "deadline": now + 300}
    permit = {"owner": payer.address, "spender": payment.address, "value": AMOUNT,
              "nonce": token.functions.nonces(payer.address).call(), "deadline": now + 300}
    return payment, token, payer, pay, permit


def call_data(payment, payer, pay, permit, permit_key=None):
    return payment.encode_abi("payWithPermit", [
        as_struct(pay), sign_pay(payer.key, payment.address, pay),
        *permit_args(sign_permit(permit_key or payer.key, token_of(payment, pay), permit), permit["value"],
                     permit["deadline"])])


def token_of(payment, pay):
    return payment.w3.eth.contract(address=pay["token"], abi=artifact("TestToken")["abi"])


def test_permit_and_pay_in_one_transaction_then_replay_reverts(gasless, deployer, send_tx, w3):
    payment, token, payer, pay, permit = gasless
    data = call_data(payment, payer, pay, permit)
    receipt = send_tx(deployer, payment.address, data)
    assert receipt["status"] == 1 and receipt["from"] == deployer.address
    assert token.functions.balanceOf(pay["merchant"]).call() == AMOUNT
    assert token.functions.balanceOf(payer.address).call() == FAUCET_TOKEN_UNITS - AMOUNT
    assert token.functions.nonces(payer.address).call() == permit["nonce"] + 1
    assert token.functions.allowance(payer.address, payment.address).call() == 0  # exactly the amount was allowed
    assert w3.eth.get_balance(payer.address) == 0  # the payer paid no gas
    # The same transaction again: the permit's nonce is spent and no allowance is left.
    expect_revert(lambda: w3.eth.call({"from": deployer.address, "to": payment.address, "data": data}),
                  "PermitFailed()")


def test_replay_with_allowance_left_is_refused_by_the_ref(gasless, deployer, send_tx, w3):
    """A permit for more than the amount leaves allowance: replaying the call passes the permit's
    catch and is stopped by the used (payer, ref)."""
    payment, token, payer, pay, permit = gasless
    permit["value"] = 2 * AMOUNT
    data = call_data(payment, payer, pay, permit)
    assert send_tx(deployer, payment.address, data)["status"] == 1
    expect_revert(lambda: w3.eth.call({"from": deployer.address, "to": payment.address, "data": data}), "Replayed()")
    assert token.functions.balanceOf(pay["merchant"]).call() == AMOUNT


def test_expired_permit_reverts(gasless, deployer, w3):
    payment, token, payer, pay, permit = gasless
    permit["deadline"] = w3.eth.get_block("latest")["timestamp"] - 1
    data = call_data(payment, payer, pay, permit)
    expect_revert(lambda: w3.eth.call({"from": deployer.address, "to": payment.address, "data": data}),
                  "PermitFailed()")
    assert token.functions.nonces(payer.address).call() == permit["nonce"]


def test_wrong_signer_permit_reverts(gasless, deployer, w3):
    payment, token, payer, pay, permit = gasless
    for key, changed in [(Account.create().key, {}), (payer.key, {"spender": deployer.address}),
                         (payer.key, {"nonce": permit["nonce"] + 1})]:
        # Signed by someone else, or by the payer for another spender or nonce than the token checks.
        signed = sign_permit(key, token, {**permit, **changed})
        data = payment.encode_abi("payWithPermit", [as_struct(pay), sign_pay(payer.key, payment.address, pay),
                                                    *permit_args(signed, permit["value"], permit["deadline"])])
        expect_revert(lambda d=data: w3.eth.call({"from": deployer.address, "to": payment.address, "data": d}),
                      "PermitFailed()")
    assert token.functions.balanceOf(pay["merchant"]).call() == 0


def test_a_valid_permit_does_not_carry_a_bad_pay(gasless, deployer, w3):
    """The permit alone moves nothing: a Pay signed by someone else reverts the whole transaction."""
    payment, token, payer, pay, permit = gasless
    data = payment.encode_abi("payWithPermit", [
        as_struct(pay), sign_pay(Account.create().key, payment.address, pay),
        *permit_args(sign_permit(payer.key, token, permit), permit["value"], permit["deadline"])])
    expect_revert(lambda: w3.eth.call({"from": deployer.address, "to": payment.address, "data": data}),
                  "BadSigner()")


def test_front_run_permit_does_not_fail_the_payment(gasless, deployer, send_tx, w3):
    """Someone copies the permit from the mempool and submits it to the token first: the allowance
    is there, so payWithPermit passes over the spent permit and pays."""
    payment, token, payer, pay, permit = gasless
    sig = sign_permit(payer.key, token, permit)
    front = token.encode_abi("permit", [payer.address, payment.address, permit["value"], permit["deadline"],
                                        sig[64], sig[:32], sig[32:64]])
    assert send_tx(deployer, token.address, front)["status"] == 1
    assert token.functions.allowance(payer.address, payment.address).call() == AMOUNT
    data = payment.encode_abi("payWithPermit", [as_struct(pay), sign_pay(payer.key, payment.address, pay),
                                                *permit_args(sig, permit["value"], permit["deadline"])])
    assert send_tx(deployer, payment.address, data)["status"] == 1
    assert token.functions.balanceOf(pay["merchant"]).call() == AMOUNT
