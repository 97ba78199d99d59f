"""The incoming-transfer indexer and the background statuses (services.indexer) against a real
anvil and the test database (SQLite, or PostgreSQL with TEST_DATABASE=pg): what arrives, what is
left out, idempotence across restarts, the confirmations, the lease between two indexers."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest
from eth_account import Account
from sqlmodel import col, select, update
from web3 import Web3

from contracts.artifacts import artifact
from contracts.deploy import DEV_DEPLOYER_KEY, _deploy_contract, fund
from wallet_app import relayer as relayer_loop
from wallet_app.core.db import get_session
from wallet_app.models import Activity, ChainCursor
from wallet_app.services import accounts, activity, indexer
from wallet_app.services.eth import ZERO_ADDRESS

# anvil's account #3 of the dev mnemonic: another wallet, outside the app, that sends to users.
ANVIL_KEY_3 = "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6"
ERC20 = Web3().eth.contract(abi=artifact("TestToken")["abi"])
OWNER, OTHER = "indexer-a", "indexer-b"


@pytest.fixture
def users(db, chain_env):
    """Two users with wallet addresses (their keys here) and one without."""
    made = {}
    for name in ("alice", "bob", "carol"):
        u = accounts.login_user(f"sub-{name}", f"{name}@example.com", "en")
        acct = Account.create()
        if name != "carol":
            accounts.set_address(u.id, acct.address)
        made[name] = (u.id, acct)
    return made


def receive_rows(user_id: int | None = None) -> list[Activity]:
    with get_session() as db:
        q = select(Activity).where(Activity.type == "receive").order_by(col(Activity.id))
        if user_id is not None:
            q = q.where(Activity.user_id == user_id)
        return list(db.exec(q))


def mine(w3, blocks: int) -> None:
    w3.provider.make_request("anvil_mine", [blocks])


def test_incoming_tokens_and_coin_appear_once(users, chain, w3, deployed, deployments_dir, send_tx):
    (alice_id, alice), (bob_id, bob), (carol_id, carol) = users["alice"], users["bob"], users["carol"]
    assert indexer.index_chain(chain, OWNER)["blocks"] == 1  # the first pass starts at the head
    tusd = deployed["tokens"]["tUSD"]
    outsider = Account.from_key(ANVIL_KEY_3)

    fund(chain.rpc_url, alice.address, deployments_dir)  # 1 ETH from the deployer, tUSD and tKRW minted
    fund(chain.rpc_url, outsider.address, deployments_dir, eth_wei=0)  # tokens to send
    send_tx(outsider, tusd, ERC20.encode_abi("transfer", [bob.address, 2_500_000]))
    send_tx(outsider, bob.address, value=3 * 10**15)
    # Left out: a token in nobody's list, a zero-value transfer, someone who is not a user, carol.
    junk = _deploy_contract(w3, ANVIL_KEY_3, "TestToken", "Junk", "JUNK")
    send_tx(outsider, junk, ERC20.encode_abi("mint", [bob.address, 10**6]))
    send_tx(outsider, tusd, ERC20.encode_abi("transfer", [bob.address, 0]))
    send_tx(outsider, carol.address, value=10**15)
    send_tx(outsider, tusd, ERC20.encode_abi("transfer", [carol.address, 1]))

    counts = indexer.index_chain(chain, OWNER)
    assert counts["received"] == 5 and counts["skipped"] == 0
    got = {(r.user_id, r.token_symbol, r.amount, r.counterparty, r.status, r.log_index >= 0) for r in receive_rows()}
    assert got == {
        (alice_id, "ETH", str(10**18), fund_sender(), "ok", False),
        (alice_id, "tUSD", str(1000 * 10**6), ZERO_ADDRESS, "ok", True),  # a mint comes from the zero address
        (alice_id, "tKRW", str(1000 * 10**6), ZERO_ADDRESS, "ok", True),
        (bob_id, "tUSD", "2500000", outsider.address.lower(), "ok", True),
        (bob_id, "ETH", str(3 * 10**15), outsider.address.lower(), "ok", False),
    }
    assert not receive_rows(carol_id)
    # The entries carry the block's time and read like the rest of the activity.
    summaries = [e["summary"] for e in activity.activities(bob_id, refresh=False)]
    who = f"{outsider.address.lower()[:6]}…{outsider.address.lower()[-4:]}"
    assert sorted(summaries) == sorted([f"Received 2.5 tUSD from {who}", f"Received 0.003 ETH from {who}"])
    # A sender of an incoming transfer is no recipient the user chose (address poisoning).
    assert activity.known_counterparties(bob_id) == []

    # Nothing twice: another pass, and the same blocks again (a crash before the cursor moved).
    assert indexer.index_chain(chain, OWNER)["received"] == 0
    with get_session() as db:
        db.exec(update(ChainCursor).values(next_block=ChainCursor.next_block - 12))  # type: ignore[call-overload]
        db.commit()
    assert indexer.index_chain(chain, OWNER) == {"blocks": 12, "received": 0, "skipped": 0}
    assert len(receive_rows()) == 5


def fund_sender() -> str:
    return Account.from_key(DEV_DEPLOYER_KEY).address.lower()


def test_confirmations_keep_the_indexer_behind_the_head(users, chain, w3, send_tx):
    (alice_id, alice) = users["alice"]
    behind = dataclasses.replace(chain, index_confirmations=3)
    indexer.index_chain(behind, OWNER)
    send_tx(Account.from_key(ANVIL_KEY_3), alice.address, value=10**15)
    assert indexer.index_chain(behind, OWNER)["received"] == 0  # its block is the head
    mine(w3, 2)
    assert indexer.index_chain(behind, OWNER)["received"] == 0  # 2 blocks deep
    mine(w3, 1)
    assert indexer.index_chain(behind, OWNER)["received"] == 1
    assert [r.user_id for r in receive_rows()] == [alice_id]


def test_one_indexer_holds_a_chain_until_its_lease_ends(users, chain, w3, send_tx):
    (alice_id, alice) = users["alice"]
    assert indexer.index_chain(chain, OWNER)["skipped"] == 0
    send_tx(Account.from_key(ANVIL_KEY_3), alice.address, value=10**15)
    assert indexer.index_chain(chain, OTHER) == {"blocks": 0, "received": 0, "skipped": 1}
    assert receive_rows() == []
    # The holder stops without a word: the other takes over once the lease has run out.
    with get_session() as db:
        db.exec(update(ChainCursor).values(lease_until=1))  # type: ignore[call-overload]
        db.commit()
    assert indexer.index_chain(chain, OTHER)["received"] == 1
    assert indexer.index_chain(chain, OWNER)["skipped"] == 1
    # A clean stop hands it over at once.
    indexer.release_lease(chain.chain_id, OTHER)
    assert indexer.index_chain(chain, OWNER)["skipped"] == 0


def test_two_indexers_at_once_record_each_transfer_once(users, chain, w3, send_tx):
    (alice_id, alice) = users["alice"]
    indexer.index_chain(chain, OWNER)
    indexer.release_lease(chain.chain_id, OWNER)
    outsider = Account.from_key(ANVIL_KEY_3)
    for _ in range(5):
        send_tx(outsider, alice.address, value=10**15)
    barrier = threading.Barrier(4)
    results = []

    def run(owner):
        barrier.wait()
        results.append(indexer.index_chain(chain, owner))

    threads = [threading.Thread(target=run, args=(f"racer-{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(r["skipped"] for r in results) == [0, 1, 1, 1]
    assert sum(r["received"] for r in results) == 5
    assert len(receive_rows(alice_id)) == 5


def test_outgoing_entries_get_their_status_in_the_background(users, chain, w3, deployed, deployments_dir, send_tx):
    (alice_id, alice) = users["alice"]
    fund(chain.rpc_url, alice.address, deployments_dir)
    tusd = deployed["tokens"]["tUSD"]
    ok = send_tx(alice, tusd, ERC20.encode_abi("transfer", [Account.create().address, 1]))
    # A transfer of more than alice has, with a gas limit of its own: mined, and reverted.
    tx = {"to": tusd, "data": ERC20.encode_abi("transfer", [Account.create().address, 10**30]), "value": 0,
          "gas": 100_000, "gasPrice": w3.eth.gas_price, "chainId": chain.chain_id,
          "nonce": w3.eth.get_transaction_count(alice.address)}
    reverted = w3.eth.wait_for_transaction_receipt(w3.eth.send_raw_transaction(
        alice.sign_transaction(tx).raw_transaction))
    assert reverted["status"] == 0
    hashes = {"ok": "0x" + bytes(ok["transactionHash"]).hex(),
              "failed": "0x" + bytes(reverted["transactionHash"]).hex(), "unknown": "0x" + "42" * 32}
    ids = {k: activity.record_activity(alice_id, "transfer", chain_id=chain.chain_id, tx_hash=h)
           for k, h in hashes.items()}
    ids["payment"] = activity.record_activity(alice_id, "payment", chain_id=chain.chain_id, tx_hash=hashes["failed"])

    # The relayer process's indexer thread, for one pass.
    stop = threading.Event()
    thread = threading.Thread(target=relayer_loop.run_indexer, args=(stop, 0.05))
    thread.start()
    try:
        with get_session() as db:
            def statuses():
                db.expire_all()
                return {k: db.get(Activity, i).status for k, i in ids.items()}

            # Payments are the relayer's; an unknown transaction stays pending. The pass may settle
            # the two mined ones in different turns: waited for until both are.
            expected = {"ok": "ok", "failed": "failed", "unknown": "submitted", "payment": "submitted"}
            deadline = time.monotonic() + 30
            while statuses() != expected and time.monotonic() < deadline:
                stop.wait(0.05)
            assert statuses() == expected
    finally:
        stop.set()
        thread.join(30)
    # Its lease was handed back at the stop.
    with get_session() as db:
        assert db.get(ChainCursor, chain.chain_id).lease_until == 0


def test_one_users_never_mined_sends_do_not_hold_the_others_statuses(users, chain, w3, deployed, deployments_dir,
                                                                      send_tx):
    """Newest first, `limit` a pass: the newest hundred entries that never mine (one user's sends
    with a nonce gap) held every pass, and another user's older send stayed pending until its owner
    opened Activity (found by an audit). The passes go through all of them in turn."""
    (alice_id, alice), (bob_id, _) = users["alice"], users["bob"]
    fund(chain.rpc_url, alice.address, deployments_dir)
    mined = send_tx(alice, deployed["tokens"]["tUSD"], ERC20.encode_abi("transfer", [Account.create().address, 1]))
    alices = activity.record_activity(alice_id, "transfer", chain_id=chain.chain_id,
                                      tx_hash="0x" + bytes(mined["transactionHash"]).hex())
    for i in range(5):  # newer, never mined
        activity.record_activity(bob_id, "transfer", chain_id=chain.chain_id, tx_hash="0x" + f"{i + 1:064x}")
    indexer._status_below.clear()

    def status() -> str:
        with get_session() as db:
            return db.get(Activity, alices).status

    assert indexer.refresh_outgoing(chain, limit=2) == {} and status() == "submitted"  # bob's newest two
    assert indexer.refresh_outgoing(chain, limit=2) == {} and status() == "submitted"  # the next two
    assert indexer.refresh_outgoing(chain, limit=2) == {"ok": 1} and status() == "ok"  # bob's oldest, then alice's
    assert indexer.refresh_outgoing(chain, limit=2) == {}  # none older
    assert indexer._status_below[chain.chain_id] is None  # from the newest again


def test_a_hidden_sender_is_not_shown(users, chain, deployments_dir, send_tx, settings_env):
    # Development hides the dev faucet's funding of a new wallet (anvil #0, the deployer's key).
    from wallet_app.core import extensions
    from wallet_app.dev import hidden_senders

    assert hidden_senders() == {fund_sender()}  # settings_env is development
    (alice_id, alice) = users["alice"]
    indexer.index_chain(chain, OWNER)
    extensions.set_hidden_senders(hidden_senders)
    fund(chain.rpc_url, alice.address, deployments_dir)  # a value transfer and two mints it sent
    send_tx(Account.from_key(ANVIL_KEY_3), alice.address, value=10**15)
    assert indexer.index_chain(chain, OWNER)["received"] == 1
    assert [(r.counterparty, r.amount) for r in receive_rows(alice_id)] == [
        (Account.from_key(ANVIL_KEY_3).address.lower(), str(10**15))]


def test_a_chain_started_afresh_is_indexed_from_its_head(users, chain, w3, send_tx):
    (alice_id, alice) = users["alice"]
    indexer.index_chain(chain, OWNER)
    with get_session() as db:  # as if the database had seen a longer chain (a dev chain restarted fresh)
        db.exec(update(ChainCursor).values(next_block=10**9))  # type: ignore[call-overload]
        db.commit()
    assert indexer.index_chain(chain, OWNER)["blocks"] == 1
    send_tx(Account.from_key(ANVIL_KEY_3), alice.address, value=10**15)
    assert indexer.index_chain(chain, OWNER)["received"] == 1


def test_a_flood_of_dust_leaves_the_users_own_entries_in_the_list(users, chain, send_tx):
    """Anyone can send a user 1 wei, a hundred times (found by an audit): the activity list, its newest
    100 entries, then held only those, and the user's own sends (a pending one's Speed up with them)
    were gone. The list reads the user's own entries and the transfers received apart."""
    alice_id, alice = users["alice"]
    indexer.index_chain(chain, OWNER)
    friend = Account.create().address.lower()
    tusd = chain.tokens[0].token_address
    pending_id = activity.record_activity(
        alice_id, "transfer", chain_id=chain.chain_id, tx_hash="0x" + "cd" * 32, token_address=tusd,
        token_symbol="tUSD", token_decimals=6, amount=7, counterparty=friend, nonce=0,
        data={"from": alice.address.lower(), "to": tusd, "data": "0x", "value": "0", "gas_limit": "60000",
              "gas_price": "1000000000"})
    sent_id = activity.record_activity(
        alice_id, "transfer", chain_id=chain.chain_id, tx_hash="0x" + "ab" * 32, token_address=tusd,
        token_symbol="tUSD", token_decimals=6, amount=5_000_000, counterparty=friend, status="ok")
    outsider = Account.from_key(ANVIL_KEY_3)
    for _ in range(activity.ACTIVITY_LIMIT + 1):
        send_tx(outsider, alice.address, value=1)
    indexer.index_chain(chain, OWNER)
    shown = activity.activities(alice_id, refresh=False)
    assert [e["id"] for e in shown if e["type"] != "receive"] == [sent_id, pending_id]
    assert sum(e["type"] == "receive" for e in shown) == activity.ACTIVITY_LIMIT
    assert next(e for e in shown if e["id"] == pending_id)["replaceable"] is True
    assert [(e["created_at"], e["id"]) for e in shown] == sorted(((e["created_at"], e["id"]) for e in shown),
                                                                 reverse=True)
