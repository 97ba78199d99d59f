"""A network fee that rose between the Send page's build and the signature, on a real anvil: a
legacy transaction priced below the next block's base fee is never mined at that price (anvil
refuses it, 'max fee per gas less than block base fee'; a geth node keeps it in its pool, unmined,
for as long as the base fee stays above it). The /sign preview refuses such a link before the PIN
dialog, and a signed one is refused before it is broadcast, both with the catalogue's fee_outdated
(it was the node's error after the PIN: 'The network rejected the transaction.')."""

from eth_account import Account

from tests.api.test_relayer_reprice import gas_price_raised
from tests.api.test_wallet_api import API, api_user, current_user, sign  # noqa: F401 - api_user is a fixture
from tests.conftest import run_async
from wallet_app.services import txpreview


def built_send(client, chain) -> dict:
    resp = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": chain.tokens[0].token_address,
                                                "to": Account.create().address, "amount": "1500000"})
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_a_link_priced_below_the_next_base_fee_is_refused_before_the_pin(api_user, client, chain, w3):  # noqa: F811
    tx = built_send(client, chain)
    user = current_user(client)
    _, refused = run_async(txpreview.load(user, chain, tx))
    assert refused is None
    with gas_price_raised(w3, 3):
        _, refused = run_async(txpreview.load(user, chain, tx))
        assert refused is not None and refused.code == "fee_outdated"
        # Built again, at the node's price now: signable.
        fresh = built_send(client, chain)
        assert int(fresh["gas_price"]) > int(tx["gas_price"])
        _, refused = run_async(txpreview.load(user, chain, fresh))
        assert refused is None


def test_a_signed_send_priced_below_the_next_base_fee_is_refused_and_not_recorded(api_user, client, chain,  # noqa: F811
                                                                                 w3):
    tx = built_send(client, chain)
    with gas_price_raised(w3, 3):
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)})
        assert (resp.status_code, resp.json()) == (400, {"detail": "fee_outdated"})
        assert client.get(f"{API}/activities").json() == []
        assert w3.eth.get_transaction_count(api_user.address, "pending") == int(tx["nonce"])
    # Once the fee is back down, the very same signed transaction goes through.
    resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)})
    assert resp.status_code == 200, resp.text


def test_a_send_the_native_balance_no_longer_pays_for_says_so(api_user, client, chain, w3):  # noqa: F811
    """The preview checked the fee against the balance; another tab's send took the native coin before
    the PIN. The node's refusal was 'The network rejected the transaction.'"""
    tx = built_send(client, chain)
    fee = int(tx["gas_limit"]) * int(tx["gas_price"])
    w3.provider.make_request("anvil_setBalance", [api_user.address, hex(fee - 1)])
    resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)})
    assert (resp.status_code, resp.json()) == (400, {"detail": "fee_unaffordable"})
    assert client.get(f"{API}/activities").json() == []


def test_a_send_whose_nonce_another_app_took_meanwhile_says_so(api_user, client, chain, w3, send_tx):  # noqa: F811
    """The same wallet in another app sent a transaction after this one was built (and previewed):
    the node's 'nonce too low' was 'The network rejected the transaction.'"""
    tx = built_send(client, chain)
    send_tx(api_user, Account.create().address, value=1)
    resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)})
    assert (resp.status_code, resp.json()) == (400, {"detail": "sign_nonce_used"})
    assert client.get(f"{API}/activities").json() == []


def test_a_send_to_a_recipient_that_emptied_its_balance_meanwhile_still_has_the_gas_it_needs(
        api_user, client, chain, w3, funded, send_tx):  # noqa: F811
    """Built (and estimated) while the recipient held tUSD, its balance slot a cheap update; the
    recipient sent all of it away before the PIN, and the transfer now sets a zero slot (17,100 gas
    more than estimated: 51,555 used, 34,455 estimated). At exactly the estimate it ran out of gas,
    was mined and reverted: the fee paid for nothing."""
    from tests.api.test_wallet_api import balance_of

    tusd = chain.tokens[0].token_address
    recipient = funded  # holds the faucet's tUSD
    resp = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": tusd, "to": recipient.address,
                                                "amount": "1500000"})
    tx = resp.json()
    held = balance_of(w3, tusd, recipient.address)
    data = "0xa9059cbb" + "00" * 12 + Account.create().address[2:].lower() + format(held, "064x")
    send_tx(recipient, tusd, data)
    assert balance_of(w3, tusd, recipient.address) == 0
    resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)})
    assert resp.status_code == 200, resp.text
    receipt = w3.eth.wait_for_transaction_receipt(resp.json()["tx_hash"], timeout=30)
    assert receipt["status"] == 1
    assert balance_of(w3, tusd, recipient.address) == 1_500_000
