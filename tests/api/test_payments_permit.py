"""Gasless merchant payments (issue 14 item 3) through /api/v1/payment on anvil: the quote offers
the token's EIP-2612 Permit, execute checks the signed permit, the relayer sends payWithPermit."""

import time

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data

import tests.api.test_payments as tp
from contracts.artifacts import artifact
from contracts.deploy import FAUCET_TOKEN_UNITS
from wallet_app.dev import faucet
from wallet_app.services import chain as chain_svc
from wallet_app.services import payments, relayer

API = tp.API
TOKEN_ABI = artifact("TestToken")["abi"]


@pytest.fixture
def app(chain_env, app):
    yield app
    relayer.forget_process_state()


def drain_native(w3, acct) -> None:
    """Sends the account's whole native balance away (a legacy transfer costs exactly 21,000 x its price)."""
    price = w3.eth.gas_price
    value = w3.eth.get_balance(acct.address) - 21_000 * price
    tx = {"to": Account.create().address, "value": value, "gas": 21_000, "gasPrice": price, "chainId": 31337,
          "nonce": w3.eth.get_transaction_count(acct.address)}
    sent = w3.eth.send_raw_transaction(acct.sign_transaction(tx).raw_transaction)
    assert w3.eth.wait_for_transaction_receipt(sent, timeout=30)["status"] == 1
    assert w3.eth.get_balance(acct.address) == 0


@pytest.fixture
def gasless_payer(client, login, w3):
    """A signed-in user holding 1,000 of each test token (the dev faucet's) whose native coin was all sent away."""
    acct = Account.create()
    login(f"{acct.address.lower()}@example.com")
    assert client.post(f"{API}/me/address", json={"address": acct.address}).status_code == 200
    assert faucet.wait_idle()
    drain_native(w3, acct)
    return acct


def signed_permit(acct, quote, key=None, **changes) -> dict:
    """The quote's Permit, signed (with `changes` applied to the message before signing)."""
    typed = quote["permit"]
    message = {**typed["message"], **changes}
    signable = encode_typed_data(full_message={**typed, "message": {
        **message, "value": int(message["value"]), "nonce": int(message["nonce"])}})
    sig = Account.sign_message(signable, key or acct.key).signature
    return {**message, "signature": "0x" + bytes(sig).hex()}


def execute(client, acct, quote, merchant, token, amount, permit):
    body = tp.pay_body(acct, quote, merchant, token, amount, quote["permit"]["message"]["deadline"])
    return client.post(f"{API}/payment/execute", json={**body, "permit": permit})


def test_a_payer_without_native_coin_pays_through_a_permit(client, gasless_payer, deployed, w3):
    token, amount, merchant = tp.token_of(deployed), 2_500_000, Account.create().address
    before = time.time()
    q = tp.get_quote(client, token, amount)
    assert (q["available"], q["transaction"], q["reason"]) == (False, None, "allowance_short")
    permit = q["permit"]
    assert permit["primaryType"] == "Permit"
    assert permit["domain"] == {"name": "Newbl Test USD", "version": "1", "chainId": 31337,
                                "verifyingContract": token}
    assert {k: v for k, v in permit["message"].items() if k != "deadline"} == {
        "owner": gasless_payer.address, "spender": deployed["payment"], "value": str(amount), "nonce": "0"}
    assert before + 290 <= permit["message"]["deadline"] <= time.time() + 310  # short: the payment's 5 minutes

    r = execute(client, gasless_payer, q, merchant, token, amount, signed_permit(gasless_payer, q))
    assert r.status_code == 200, r.text
    assert r.json() == {"id": q["payment_id"]}
    assert tp.wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert tp.balance(w3, token, merchant) == amount
    assert tp.balance(w3, token, gasless_payer.address) == FAUCET_TOKEN_UNITS - amount
    assert w3.eth.get_balance(gasless_payer.address) == 0
    (row,) = tp.rows()
    assert row.permit is not None
    sent = w3.eth.get_transaction(row.tx_hash)
    assert (sent["from"], sent["to"]) == (tp.RELAYER.address, deployed["payment"])
    assert "0x" + bytes(sent["input"][:4]).hex() == pay_with_permit_selector()
    # A repeat of the execute is the same payment: nothing is sent again.
    relayer_nonce = w3.eth.get_transaction_count(tp.RELAYER.address)
    again = execute(client, gasless_payer, q, merchant, token, amount, signed_permit(gasless_payer, q))
    assert again.json() == {"id": q["payment_id"]}
    assert w3.eth.get_transaction_count(tp.RELAYER.address, "pending") == relayer_nonce
    assert tp.balance(w3, token, merchant) == amount
    # The next quote reads the token's next nonce.
    assert tp.get_quote(client, token, amount)["permit"]["message"]["nonce"] == "1"


def pay_with_permit_selector() -> str:
    return chain_svc.contract("NewblPayment2").encode_abi(
        "payWithPermit", [(Account.create().address,) * 3 + (0, b"\0" * 32, 0), b"", 0, 0, 27, b"\0" * 32,
                          b"\0" * 32])[:10]


def test_bad_permits_are_refused_before_anything_is_queued(client, gasless_payer, deployed, w3):
    token, amount, merchant = tp.token_of(deployed), 1_000_000, Account.create().address
    q = tp.get_quote(client, token, amount)
    relayer_nonce = w3.eth.get_transaction_count(tp.RELAYER.address, "pending")
    now = int(time.time())
    good = signed_permit(gasless_payer, q)
    other = Account.create()
    cases = [
        ({**good, "owner": other.address}, 400, "invalid_permit"),  # not the payer's
        (signed_permit(gasless_payer, q, spender=other.address), 400, "invalid_permit"),  # another spender
        (signed_permit(gasless_payer, q, value=str(amount - 1)), 400, "invalid_permit"),  # less than the amount
        (signed_permit(gasless_payer, q, deadline=now + 10), 400, "invalid_permit"),  # too near for the relayer
        (signed_permit(gasless_payer, q, deadline=now + 10**6), 400, "invalid_permit"),  # too far ahead
        (signed_permit(gasless_payer, q, key=other.key), 400, "invalid_permit"),  # someone else signed it
        ({**good, "value": str(amount + 1)}, 400, "invalid_permit"),  # the signature is for another value
        ({**good, "signature": "0x12"}, 400, "invalid_permit"),
        ({k: v for k, v in good.items() if k != "nonce"}, 422, "invalid_request"),
        (signed_permit(gasless_payer, q, nonce="1"), 409, "permit_nonce_stale"),  # not the token's nonce
    ]
    for permit, status, code in cases:
        tp.refused_with(execute(client, gasless_payer, q, merchant, token, amount, permit), status, code)
    # Without a permit there is no allowance: the dry run refuses.
    body = tp.pay_body(gasless_payer, q, merchant, token, amount, now + 300)
    tp.refused_with(client.post(f"{API}/payment/execute", json=body), 400, "insufficient_allowance")
    assert tp.rows() == []  # nothing claimed, nothing queued
    assert w3.eth.get_transaction_count(tp.RELAYER.address, "pending") == relayer_nonce
    # The good permit still pays afterwards.
    assert execute(client, gasless_payer, q, merchant, token, amount, good).status_code == 200
    assert tp.wait_status(client, q["payment_id"]) == {"status": "ok"}
    assert tp.balance(w3, token, merchant) == amount


def test_a_permit_for_a_token_without_permit_is_refused(client, gasless_payer, deployed):
    """tEUR has no EIP-2612: its quote offers the approve, and a permit sent anyway is refused."""
    token, amount, merchant = tp.plain_token_of(deployed), 1_000, Account.create().address
    q = tp.get_quote(client, token, amount)
    assert (q["permit"], q["transaction"]["to"]) == (None, token)
    payer = gasless_payer
    fake = {"owner": payer.address, "spender": deployed["payment"], "value": str(amount), "nonce": "0",
            "deadline": int(time.time()) + 300, "signature": "0x" + "11" * 65}
    body = tp.pay_body(payer, q, merchant, token, amount, int(time.time()) + 300)
    tp.refused_with(client.post(f"{API}/payment/execute", json={**body, "permit": fake}), 400, "permit_unsupported")


def test_a_front_run_permit_still_pays_once(client, gasless_payer, deployed, w3, send_tx, deployer):
    """Someone submits the user's permit to the token first (copied from the mempool): the nonce
    moved on but the allowance is there, so execute relays a plain pay() and the merchant is paid once."""
    token, amount, merchant = tp.token_of(deployed), 700_000, Account.create().address
    q = tp.get_quote(client, token, amount)
    permit = signed_permit(gasless_payer, q)
    sig = bytes.fromhex(permit["signature"][2:])
    token_c = w3.eth.contract(address=token, abi=TOKEN_ABI)
    front = token_c.encode_abi("permit", [gasless_payer.address, deployed["payment"], amount,
                                          permit["deadline"], sig[64], sig[:32], sig[32:64]])
    assert send_tx(deployer, token, front)["status"] == 1
    r = execute(client, gasless_payer, q, merchant, token, amount, permit)
    assert r.status_code == 200, r.text
    assert tp.wait_status(client, q["payment_id"]) == {"status": "ok"}
    (row,) = tp.rows()
    assert row.permit is None  # the allowance was there: plain pay()
    assert tp.balance(w3, token, merchant) == amount
    assert tp.balance(w3, token, gasless_payer.address) == FAUCET_TOKEN_UNITS - amount


def test_permit_typed_data_is_what_eth_account_recovers(deployed):
    """payments.permit_typed_data + recover_typed_signer agree with a signature made from the same dict."""
    acct = Account.create()
    domain = chain_svc.PermitDomain("Newbl Test USD", "1", 31337, deployed["tokens"]["tUSD"])
    message = {"owner": acct.address, "spender": deployed["payment"], "value": 5, "nonce": 0, "deadline": 10**9}
    typed = payments.permit_typed_data(domain, message)
    sig = Account.sign_message(encode_typed_data(full_message=typed), acct.key).signature
    assert payments.recover_typed_signer(typed, sig) == acct.address
    assert payments.recover_typed_signer(typed, b"\0" * 65) is None
