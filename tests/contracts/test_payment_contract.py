"""NewblPayment2 against a real node: EIP-712 signatures made with eth-account."""

import os

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils import keccak
from web3.exceptions import ContractCustomError
from web3.logs import DISCARD

from contracts.artifacts import abi, artifact
from contracts.deploy import DEV_DEPLOYER_KEY, FAUCET_TOKEN_UNITS, _deploy_contract

PAY_TYPES = [
    {"name": "merchant", "type": "address"}, {"name": "token", "type": "address"},
    {"name": "from", "type": "address"}, {"name": "amount", "type": "uint256"},
    {"name": "paymentRef", "type": "bytes32"}, {"name": "deadline", "type": "uint48"},
]
DOMAIN_TYPES = [
    {"name": "name", "type": "string"}, {"name": "version", "type": "string"},
    {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"},
]


def typed_pay(contract_address, message):
    return {
        "types": {"EIP712Domain": DOMAIN_TYPES, "Pay": PAY_TYPES},
        "primaryType": "Pay",
        "domain": {"name": "NewblPayment2", "version": "1", "chainId": 31337, "verifyingContract": contract_address},
        "message": message,
    }


def sign_pay(key, contract_address, message) -> bytes:
    return Account.sign_message(encode_typed_data(full_message=typed_pay(contract_address, message)), key).signature


def as_struct(m):
    return (m["merchant"], m["token"], m["from"], m["amount"], bytes.fromhex(m["paymentRef"][2:]), m["deadline"])


def selector(sig: str) -> str:
    return "0x" + keccak(text=sig)[:4].hex()


@pytest.fixture
def setup(w3, deployed, funded, send_tx):
    payment = w3.eth.contract(address=deployed["payment"], abi=artifact("NewblPayment2")["abi"])
    token = w3.eth.contract(address=deployed["tokens"]["tUSD"], abi=abi("IERC20Full"))
    approve = w3.eth.contract(address=token.address, abi=artifact("TestToken")["abi"]).encode_abi(
        "approve", [payment.address, 2**256 - 1])
    assert send_tx(funded, token.address, approve)["status"] == 1
    now = w3.eth.get_block("latest")["timestamp"]
    message = {"merchant": Account.create().address, "token": token.address, "from": funded.address,
               "amount": 2_500_000, "paymentRef": "0x" + os.urandom(32).hex(), "deadline": now + 300}
    return payment, token, message


def expect_revert(fn, error: str):
    with pytest.raises(ContractCustomError) as exc:
        fn()
    data = exc.value.data if isinstance(exc.value.data, str) else str(exc.value.data)
    assert data.startswith(selector(error)), data


def test_good_payment_moves_funds_then_replay_reverts(setup, funded, deployer, send_tx):
    payment, token, message = setup
    sig = sign_pay(funded.key, payment.address, message)
    # The contract's digest equals eth-account's: domain and struct encodings agree.
    digest = encode_typed_data(full_message=typed_pay(payment.address, message))
    assert payment.functions.hashPay(as_struct(message)).call() == keccak(b"\x19\x01" + digest.header + digest.body)
    assert payment.functions.isUsed(funded.address, as_struct(message)[4]).call() is False

    # Anyone may relay: the deployer submits and pays the gas.
    receipt = send_tx(deployer, payment.address, payment.encode_abi("pay", [as_struct(message), sig]))
    assert receipt["status"] == 1
    assert token.functions.balanceOf(message["merchant"]).call() == 2_500_000
    assert token.functions.balanceOf(funded.address).call() == FAUCET_TOKEN_UNITS - 2_500_000
    assert payment.functions.isUsed(funded.address, as_struct(message)[4]).call() is True
    (event,) = payment.events.Paid().process_receipt(receipt, errors=DISCARD)  # skip the token's Transfer
    assert event["args"]["paymentRef"] == as_struct(message)[4]
    # Payer, ref and merchant are indexed: a merchant filters the log for exactly this payment.
    paid_abi = next(e for e in payment.abi if e.get("name") == "Paid")
    assert [i["name"] for i in paid_abi["inputs"] if i["indexed"]] == ["paymentRef", "merchant", "from"]
    assert (event["args"]["merchant"], event["args"]["from"], event["args"]["amount"]) == (
        message["merchant"], funded.address, 2_500_000)

    expect_revert(lambda: payment.functions.pay(as_struct(message), sig).call({"from": deployer.address}), "Replayed()")


def test_expired_payment_reverts(setup, funded, deployer, w3):
    payment, _, message = setup
    message["deadline"] = w3.eth.get_block("latest")["timestamp"] - 1
    sig = sign_pay(funded.key, payment.address, message)
    expect_revert(lambda: payment.functions.pay(as_struct(message), sig).call({"from": deployer.address}), "Expired()")


def test_wrong_signer_reverts(setup, funded, deployer):
    payment, token, message = setup
    for sig in [
        sign_pay(Account.create().key, payment.address, message),  # someone else signs for `from`
        sign_pay(funded.key, token.address, message),  # right key, wrong verifying contract
        b"\x00" * 65,  # not a signature at all
    ]:
        expect_revert(
            lambda: payment.functions.pay(as_struct(message), sig).call(  # noqa: B023 (called in this iteration)
                {"from": deployer.address}
            ),
            "BadSigner()",
        )
    # A tampered amount no longer matches the signature.
    sig = sign_pay(funded.key, payment.address, message)
    tampered = {**message, "amount": message["amount"] + 1}
    expect_revert(lambda: payment.functions.pay(as_struct(tampered), sig).call({"from": deployer.address}),
                  "BadSigner()")
    assert payment.functions.isUsed(funded.address, as_struct(message)[4]).call() is False


def test_a_ref_is_used_per_payer(setup, funded, deployer, send_tx, w3):
    """Someone else paying with the user's paymentRef (e.g. copied from the mempool) uses only
    their own (payer, ref): the user's payment still goes through."""
    payment, token, message = setup
    attacker = Account.create()
    send_tx(deployer, attacker.address, value=10**17)
    junk_address = _deploy_contract(w3, DEV_DEPLOYER_KEY, "TestToken", "Junk", "JUNK")
    junk = w3.eth.contract(address=junk_address, abi=artifact("TestToken")["abi"])
    assert send_tx(deployer, junk.address, junk.encode_abi("mint", [attacker.address, 1]))["status"] == 1
    assert send_tx(attacker, junk.address, junk.encode_abi("approve", [payment.address, 1]))["status"] == 1
    theirs = {**message, "token": junk.address, "from": attacker.address, "amount": 1}
    send_tx(attacker, payment.address, payment.encode_abi("pay", [as_struct(theirs), sign_pay(attacker.key,
                                                                                          payment.address, theirs)]))
    ref = as_struct(message)[4]
    assert payment.functions.isUsed(attacker.address, ref).call() is True
    assert payment.functions.isUsed(funded.address, ref).call() is False
    receipt = send_tx(deployer, payment.address, payment.encode_abi("pay", [as_struct(message),
                                                                            sign_pay(funded.key, payment.address,
                                                                                     message)]))
    assert receipt["status"] == 1 and payment.functions.isUsed(funded.address, ref).call() is True
    assert token.functions.balanceOf(message["merchant"]).call() == message["amount"]
    # The merchant's exact match: Paid logs for (ref, merchant, payer) find the user's payment only.
    topic = lambda addr: "0x" + "00" * 12 + addr[2:].lower()  # noqa: E731
    logs = w3.eth.get_logs({"address": payment.address, "fromBlock": 0, "topics": [
        payment.events.Paid().topic, "0x" + ref.hex(), topic(message["merchant"]), topic(funded.address)]})
    assert [log["transactionHash"] for log in logs] == [receipt["transactionHash"]]

