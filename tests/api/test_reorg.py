"""Chain reorganisations on a real anvil of the module's own (anvil_reorg replaces the newest
blocks; the transactions of the blocks it drops are gone, as on an L2 whose sequencer reorgs or a
provider's node that had them on a losing branch): the relayer's payments and the users' sends."""

import json
import time

import pytest
from eth_account import Account
from sqlmodel import col, select
from web3 import Web3

from contracts.deploy import deploy
from tests.api.test_payments import (  # noqa: F401 - app and payer are fixtures
    ANVIL_KEY_2,
    API,
    TOKEN_ABI,
    app,
    approve_directly,
    balance,
    get_quote,
    pay_body,
    payer,
    plain_token_of,
    send_queued,
    token_of,
    use_chain,
    wait_status,
)
from tests.api.test_wallet_api import sign
from tests.waits import wait_until
from wallet_app import relayer as relayer_loop
from wallet_app.core.config import REPO_ROOT
from wallet_app.core.db import get_session
from wallet_app.dev import faucet
from wallet_app.dev.anvil import Anvil
from wallet_app.models import Activity, Payment
from wallet_app.services import chain as chain_svc
from wallet_app.services import indexer, relayer

CONFIRMATIONS = 2


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """A node of its own (a reorg of the shared one would drop other tests' blocks), contracts deployed."""
    path = tmp_path_factory.mktemp("reorg")
    with Anvil(port=0, start_timeout=20) as anvil:
        deployed = deploy(anvil.url, path)
        yield anvil, deployed, path
        chain_svc._clients.pop((31337, anvil.url), None)


@pytest.fixture
def reorg_chain(node, settings_env, monkeypatch, tmp_path):
    """chains.dev.json pointed at the node, with CONFIRMATIONS blocks before a block is taken as final."""
    anvil, deployed, path = node
    entries = json.loads((REPO_ROOT / "chains.dev.json").read_text())
    for e in entries:
        e.update(rpc_url=anvil.url, index_confirmations=CONFIRMATIONS)
    (tmp_path / "chains.json").write_text(json.dumps(entries))
    use_chain(monkeypatch, tmp_path / "chains.json", path)
    return Web3(Web3.HTTPProvider(anvil.url)), deployed, path


def reorg(w3: Web3, depth: int) -> None:
    """The newest `depth` blocks replaced by empty ones: their transactions are gone."""
    w3.provider.make_request("anvil_reorg", [depth, []])  # type: ignore[arg-type]


def mine(w3: Web3, blocks: int = 1) -> None:
    w3.provider.make_request("anvil_mine", [hex(blocks)])  # type: ignore[arg-type]


def payments() -> list[Payment]:
    with get_session() as s:
        return list(s.exec(select(Payment).where(Payment.status != "quoted").order_by(col(Payment.id))))


def paying_user(client, login, w3_, deployed):
    """A signed-in user, funded by the dev faucet (done before the test's blocks: a reorg of them
    takes nothing else with it), with tEUR approved to the payment contract."""
    acct = Account.create()
    login(f"{acct.address.lower()}@example.com")
    assert client.post(f"{API}/me/address", json={"address": acct.address}).status_code == 200
    assert faucet.wait_idle()
    token = plain_token_of(deployed)
    data = Web3().eth.contract(abi=TOKEN_ABI).encode_abi("approve", [deployed["payment"], 2**256 - 1])
    tx = acct.sign_transaction({"chainId": 31337, "to": token, "data": data, "value": 0, "gas": 100_000,
                                "gasPrice": w3_.eth.gas_price * 2, "nonce": 0})
    assert w3_.eth.wait_for_transaction_receipt(w3_.eth.send_raw_transaction(tx.raw_transaction))["status"] == 1
    return acct, token


def pay(client, acct, token, merchant, amount) -> str:
    q = get_quote(client, token, amount)
    r = client.post(f"{API}/payment/execute", json=pay_body(acct, q, merchant, token, amount, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    return q["payment_id"]


def test_a_payment_whose_block_is_reorganised_away_is_sent_again_and_the_next_one_is_mined(
    client, login, reorg_chain
):
    """The relayer settled a payment from its receipt and never looked again: when its block was
    replaced, the payment stayed 'ok' though the merchant had nothing, and its nonce stayed taken
    in the relayer's books, so the next payment was sent with the nonce after it and waited for
    ever behind the hole (every later payment with it)."""
    w3_, deployed, _ = reorg_chain
    acct, token = paying_user(client, login, w3_, deployed)
    merchant = Account.create().address
    first = pay(client, acct, token, merchant, 700)
    assert wait_status(client, first) == {"status": "ok"}
    assert balance(w3_, token, merchant) == 700

    reorg(w3_, 1)  # the block with the pay() is replaced: the payment is gone from the chain
    assert balance(w3_, token, merchant) == 0
    # The relayer finds its receipt gone: the payment is on its way again (its activity too),
    # with the same transaction (the same nonce and hash: never paid twice).
    relayer_loop.run_once()
    (row,) = payments()
    assert row.status == "pending"
    with get_session() as s:
        assert s.get(Activity, row.activity_id).status == "submitted"
    assert wait_status(client, first) == {"status": "ok"}
    assert balance(w3_, token, merchant) == 700

    second = pay(client, acct, token, merchant, 300)
    assert wait_status(client, second, timeout=20) == {"status": "ok"}
    assert balance(w3_, token, merchant) == 1000
    rows = payments()
    assert [r.nonce for r in rows] == [rows[0].nonce, rows[0].nonce + 1]
    # Final once CONFIRMATIONS blocks are on top of it: no longer followed.
    mine(w3_, CONFIRMATIONS)
    wait_until(lambda: relayer_loop.run_once() is not None and all(r.settled for r in payments()), 10.0,
               "not settled once final")


def sent(client, acct, token, recipient, amount) -> tuple[str, str]:
    """The user's own send through /tx/build and /tx/submit: (its hash, its signed raw tx)."""
    built = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": token, "to": recipient,
                                                 "amount": str(amount)})
    assert built.status_code == 200, built.text
    raw = sign(acct, built.json())
    resp = client.post(f"{API}/tx/submit", json={"raw_tx": raw})
    assert resp.status_code == 200, resp.text
    return resp.json()["tx_hash"], raw


def send_status(client, tx_hash: str) -> str:
    """The entry's status as /activity reads it, after a pass of the indexer's status refresh."""
    indexer.refresh_outgoing(chain_svc.get_chain(31337))
    (entry,) = [e for e in client.get(f"{API}/activities").json() if e["tx_hash"] == tx_hash]
    return entry["status"]


def test_a_send_is_ok_once_its_block_is_final_and_not_while_a_reorg_can_take_it(client, login, reorg_chain):
    """A send was marked ok from its first receipt, for good: its block replaced, the entry still
    said ok (the user told the recipient was paid) while the transaction was on no chain at all."""
    w3_, deployed, _ = reorg_chain
    acct, _ = paying_user(client, login, w3_, deployed)
    token, recipient = deployed["tokens"]["tUSD"], Account.create().address
    tx_hash, raw = sent(client, acct, token, recipient, 1_500_000)
    wait_until(lambda: w3_.eth.get_transaction_count(acct.address) == 2, 10.0, "the send is not mined")
    assert send_status(client, tx_hash) == "submitted"  # mined, not final

    reorg(w3_, 1)  # its block replaced: the send is gone
    assert balance(w3_, token, recipient) == 0
    assert send_status(client, tx_hash) == "submitted"

    w3_.eth.send_raw_transaction(raw)  # mined again (a node puts a lost branch's transactions back)
    assert send_status(client, tx_hash) == "submitted"
    mine(w3_, CONFIRMATIONS)
    assert send_status(client, tx_hash) == "ok"
    assert balance(w3_, token, recipient) == 1_500_000


def received() -> list[tuple[str, str]]:
    """(tx hash, amount) of the transfers the indexer recorded as received."""
    with get_session() as s:
        rows = s.exec(select(Activity).where(Activity.type == "receive").order_by(col(Activity.id))).all()
    return [(r.tx_hash, r.amount) for r in rows]


def test_a_transfer_received_on_a_replaced_branch_is_removed_and_the_new_branchs_is_found(client, login, reorg_chain):
    """The indexer's cursor only went forward: after a reorganisation deeper than the chain's
    index_confirmations, the entry of a transfer no longer on the chain stayed in the user's
    activity, and the new branch's transfers below the cursor were never seen."""
    w3_, deployed, _ = reorg_chain
    acct, _ = paying_user(client, login, w3_, deployed)
    chain, owner = chain_svc.get_chain(31337), indexer.new_owner()
    indexer.index_chain(chain, owner)  # the chain's cursor starts at its safe head
    sender = Account.from_key(ANVIL_KEY_2)
    nonce = w3_.eth.get_transaction_count(sender.address)

    def transfer(value: int) -> str:
        return "0x" + bytes(sender.sign_transaction({
            "chainId": 31337, "to": acct.address, "value": value, "gas": 21_000,
            "gasPrice": w3_.eth.gas_price * 2, "nonce": nonce}).raw_transaction).hex()

    first = w3_.eth.send_raw_transaction(transfer(10**15)).to_0x_hex()
    block = w3_.eth.get_transaction_receipt(first)["blockNumber"]
    mine(w3_, CONFIRMATIONS)
    indexer.index_chain(chain, owner)
    assert received() == [(first, str(10**15))]

    # A reorganisation deeper than the confirmations: the block with the transfer and those on
    # top of it replaced, the new branch carrying another transfer (same sender, same nonce).
    other = transfer(2 * 10**15)
    w3_.provider.make_request("anvil_reorg", [w3_.eth.block_number - block + 1, [[other, 0]]])
    second = Web3.keccak(hexstr=other).to_0x_hex()
    assert w3_.eth.get_transaction_receipt(second)["blockNumber"] == block
    mine(w3_, CONFIRMATIONS)
    indexer.index_chain(chain, owner)
    assert received() == [(second, str(2 * 10**15))]


def paid_by_a_copy(w3_, deployed, row: Payment):
    """Someone else (anvil's account 2) submits the queued payment's signed Pay first, mined: the
    signed copy."""
    other = Account.from_key(ANVIL_KEY_2)
    copy = other.sign_transaction({"chainId": 31337, "to": deployed["payment"], "data": relayer._queued_call(row),
                                   "value": 0, "gas": 300_000, "gasPrice": w3_.eth.gas_price * 2,
                                   "nonce": w3_.eth.get_transaction_count(other.address)})
    assert w3_.eth.wait_for_transaction_receipt(w3_.eth.send_raw_transaction(copy.raw_transaction))["status"] == 1
    return copy


def test_a_payment_found_paid_by_another_transaction_waits_for_its_block_to_be_final(client, login, reorg_chain):
    """A queued payment whose check reverts Replayed is looked for among the Paid events: found, it
    was settled 'ok' at once with that transaction, for good. Its block replaced, the payment said
    ok and the merchant had nothing, though the relayer still held the signed Pay it could send."""
    w3_, deployed, _ = reorg_chain
    acct, token = paying_user(client, login, w3_, deployed)
    merchant = Account.create().address
    pid = pay(client, acct, token, merchant, 400)  # queued, not sent yet
    (row,) = payments()
    # Someone else submits the same signed Pay first (a copy of it, or the payer themself).
    copy = paid_by_a_copy(w3_, deployed, row)
    assert balance(w3_, token, merchant) == 400

    relayer.send_queued(chain_svc.get_chain(31337))
    (row,) = payments()
    assert (row.status, row.settled, row.nonce) == ("pending", False, None)  # its block is not final yet

    reorg(w3_, 1)  # the copy's block replaced: nobody has paid
    assert balance(w3_, token, merchant) == 0
    assert wait_status(client, pid) == {"status": "ok"}  # the relayer sends its own
    assert balance(w3_, token, merchant) == 400
    (row,) = payments()
    assert row.nonce is not None and row.tx_hash != copy.hash.to_0x_hex()


def test_on_a_chain_without_confirmations_a_payment_is_settled_with_its_receipt(client, payer, deployed, w3,  # noqa: F811
                                                                               send_tx, chain, monkeypatch):
    """The follow pass reads the node's head before the receipts: a payment mined in between is in a
    block past that head, and is final all the same on a chain that takes its head as final (the
    development chain). It was left unsettled until the next pass (the payments bench saw it)."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    q = get_quote(client, token, 33)
    client.post(f"{API}/payment/execute", json=pay_body(payer, q, merchant, token, 33, int(time.time()) + 300))
    send_queued(chain)
    wait_until(lambda: balance(w3, token, merchant) == 33, 30.0, "not mined")
    real = relayer._node_now
    monkeypatch.setattr(relayer, "_node_now", lambda w3_, address: real(w3_, address)._replace(head=0))
    assert relayer.reconcile(chain)["ok"] == 1
    (row,) = payments()
    assert (row.status, row.settled) == ("ok", True)


def test_a_rescan_after_a_reorganisation_keeps_the_entries_still_on_the_chain(client, login, reorg_chain,
                                                                             monkeypatch):
    """The range scanned again keeps a user's newest RECEIVE_KEEP transfers (a flood's cap): the
    older ones, recorded before in ranges of their own and still on the chain, are not removed."""
    monkeypatch.setattr(indexer, "RECEIVE_KEEP", 1)
    w3_, deployed, _ = reorg_chain
    acct, _ = paying_user(client, login, w3_, deployed)
    chain, owner = chain_svc.get_chain(31337), indexer.new_owner()
    indexer.index_chain(chain, owner)
    sender = Account.from_key(ANVIL_KEY_2)
    start = w3_.eth.get_transaction_count(sender.address)

    def transfer(nonce: int) -> str:
        return "0x" + bytes(sender.sign_transaction({
            "chainId": 31337, "to": acct.address, "value": 10**15, "gas": 21_000,
            "gasPrice": w3_.eth.gas_price * 2, "nonce": nonce}).raw_transaction).hex()

    hashes = []
    for nonce in (start, start + 1):  # each in a range of its own
        hashes.append(w3_.eth.send_raw_transaction(raw := transfer(nonce)).to_0x_hex())
        mine(w3_, CONFIRMATIONS)
        indexer.index_chain(chain, owner)
    assert [h for h, _ in received()] == hashes
    # The newest block scanned replaced (the second transfer mined again in its place).
    w3_.provider.make_request("anvil_reorg", [CONFIRMATIONS + 1, [[raw, 0]]])
    mine(w3_, CONFIRMATIONS)
    indexer.index_chain(chain, owner)
    assert [h for h, _ in received()] == hashes


def test_a_send_mined_in_a_block_not_final_yet_is_not_offered_a_replacement(client, login, reorg_chain):
    """Pending until its block is final, a mined send must not be built a speed-up or cancel: the
    user would sign one the node can only refuse (its nonce is used)."""
    w3_, deployed, _ = reorg_chain
    acct, _ = paying_user(client, login, w3_, deployed)
    tx_hash, _ = sent(client, acct, deployed["tokens"]["tUSD"], Account.create().address, 1)
    wait_until(lambda: w3_.eth.get_transaction_count(acct.address) == 2, 10.0, "the send is not mined")
    assert send_status(client, tx_hash) == "submitted"
    (entry,) = [e for e in client.get(f"{API}/activities").json() if e["tx_hash"] == tx_hash]
    for kind in ("speedup", "cancel"):
        resp = client.post(f"{API}/tx/replace", json={"activity_id": entry["id"], "kind": kind})
        assert (resp.status_code, resp.json()) == (409, {"detail": "already_mined"})


def test_a_payment_found_paid_in_a_block_not_final_is_ok_though_its_deadline_passed_meanwhile(client, login,
                                                                                              reorg_chain):
    """Held while the copy's block is not final, the payment's deadline passes: its check then
    reverts Expired (checked before Replayed), and it was failed 'expired' for good (settled, its
    ref freed) while the merchant had the money."""
    w3_, deployed, _ = reorg_chain
    acct, token = paying_user(client, login, w3_, deployed)
    merchant = Account.create().address
    pid = pay(client, acct, token, merchant, 400)  # queued, not sent yet; deadline in 300 s
    (row,) = payments()
    paid_by_a_copy(w3_, deployed, row)
    chain = chain_svc.get_chain(31337)
    relayer.send_queued(chain)
    (row,) = payments()
    assert (row.status, row.settled) == ("pending", False)  # held: the copy's block is not final yet

    w3_.provider.make_request("evm_increaseTime", [600])  # type: ignore[arg-type]
    mine(w3_)  # past the deadline, the copy's block still not final (1 block on top of it)
    relayer.send_queued(chain)
    mine(w3_, CONFIRMATIONS)  # now final
    relayer.send_queued(chain)
    assert balance(w3_, token, merchant) == 400
    assert wait_status(client, pid) == {"status": "ok"}
