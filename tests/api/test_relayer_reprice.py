"""The relayer's re-pricing on a real anvil, under a gas price rise: a relayed pay() the node has
forgotten (evicted from its pool) and no longer takes at its price is replaced with the same nonce
at a higher price, a 0-value filler too; a pay() whose hash a filler took over is still found when
it is the one mined; and a transaction that only waits behind an earlier nonce is not re-priced
for waiting. The gas price rise is anvil's next block base fee (anvil_setMinGasPrice is refused
while EIP-1559 is active): a legacy transaction priced below it is refused ('max fee per gas less
than block base fee'), as a mainnet node answers 'transaction underpriced'."""

import contextlib
import time

from eth_account import Account
from web3 import Web3

from tests.anvil_mining import mining_paused
from tests.api.test_payments import (  # noqa: F401 - app and payer are fixtures
    API,
    RELAYER,
    app,
    approve_directly,
    balance,
    get_quote,
    pay_body,
    payer,
    rows,
    send_queued,
    token_of,
    wait_status,
    wait_until,
)
from tests.conftest import use_env
from wallet_app import crud
from wallet_app.core.db import exclusive_turn, get_session
from wallet_app.dev import faucet
from wallet_app.models import Activity, Payment
from wallet_app.services import relayer


def rpc(w3, method: str, *params):
    answer = w3.provider.make_request(method, list(params))
    assert "error" not in answer, answer
    return answer.get("result")


@contextlib.contextmanager
def base_fee_restored(w3):
    """The shared node's base fee as it was again at the end (one block mined at it). The dev
    faucet's sends go first (registering the payer's address funds it again, in a thread): priced
    before a rise, they would be evicted and the faucet wait for their receipts."""
    assert faucet.wait_idle()
    before = w3.eth.get_block("latest")["baseFeePerGas"]
    try:
        yield
    finally:
        rpc(w3, "anvil_setNextBlockBaseFeePerGas", hex(before))
        rpc(w3, "evm_mine")


def raise_gas_price(w3, multiple: int) -> None:
    """The node's next base fee at `multiple` times its gas price now (eth_gasPrice follows it):
    a transaction priced before is refused, and one in the pool is not mined."""
    rpc(w3, "anvil_setNextBlockBaseFeePerGas", hex(w3.eth.gas_price * multiple))


@contextlib.contextmanager
def gas_price_raised(w3, multiple: int):
    with base_fee_restored(w3):
        raise_gas_price(w3, multiple)
        yield


@contextlib.contextmanager
def automine_off(w3):
    assert faucet.wait_idle()  # its sends mined before (see base_fee_restored)
    with mining_paused(w3):
        yield


def known(w3, tx_hash: str) -> bool:
    return rpc(w3, "eth_getTransactionByHash", tx_hash) is not None


def execute(client, payer_, merchant, token, amount) -> str:
    q = get_quote(client, token, amount)
    r = client.post(f"{API}/payment/execute",
                    json=pay_body(payer_, q, merchant, token, amount, int(time.time()) + 300))
    assert r.status_code == 200, r.text
    return q["payment_id"]


def status(client, pid) -> dict:
    r = client.get(f"{API}/payment/status", params={"id": pid})
    assert r.status_code == 200, r.text
    return r.json()


def tx_hash_of(raw: str) -> str:
    return "0x" + Web3.keccak(hexstr=raw).hex().removeprefix("0x")


def test_a_pay_evicted_under_a_gas_price_rise_is_re_priced_with_its_nonce(client, payer, deployed, w3, send_tx,  # noqa: F811
                                                                         chain, caplog):
    """It was only re-sent as it was, refused at every pass ('underpriced'), and its nonce held
    every later payment until the price fell."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    with automine_off(w3):
        pid = execute(client, payer, merchant, token, 79)
        send_queued(chain)
        (first,) = rows()
        assert first.nonce == start_nonce and known(w3, first.tx_hash)
        with gas_price_raised(w3, 5):
            rpc(w3, "anvil_dropTransaction", first.tx_hash)  # evicted from the node's pool
            assert not known(w3, first.tx_hash)
            with caplog.at_level("WARNING", logger="wallet_app.services.relayer"):
                counts = relayer.reconcile(chain)
            assert (counts["resent"], counts["replaced"]) == (0, 1), caplog.text
            (second,) = rows()
            assert (second.nonce, second.old_tx_hashes) == (first.nonce, first.tx_hash)
            assert int(second.gas_price) >= w3.eth.gas_price > int(first.gas_price)
            assert known(w3, second.tx_hash)
            rpc(w3, "evm_mine")
            assert relayer.reconcile(chain)["ok"] == 1
    assert status(client, pid) == {"status": "ok"}
    (done,) = rows()
    assert (done.settled, done.tx_hash, done.nonce) == (True, second.tx_hash, start_nonce)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 1  # the same nonce, no gap
    assert balance(w3, token, merchant) == 79  # paid once


def test_a_filler_signed_at_a_price_the_node_refuses_is_re_priced(client, payer, deployed, w3, send_tx, chain,  # noqa: F811
                                                                  monkeypatch):
    """The gas price rises between the pass's price read and its send: the node refuses both pay()s.
    Each keeps its nonce with a filler; the fillers, signed at that same refused price, were re-sent
    as they were at every pass and held the relayer's nonces until the price fell."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    pa, pb = (execute(client, payer, merchant, token, a) for a in (81, 82))
    real_batch = relayer._send_batch

    def price_rises_first(c, raws):
        raise_gas_price(w3, 5)
        return real_batch(c, raws)

    with base_fee_restored(w3):
        monkeypatch.setattr(relayer, "_send_batch", price_rises_first)
        assert relayer.send_queued(chain) == {"sent": 0, "failed": 2}
        monkeypatch.setattr(relayer, "_send_batch", real_batch)
        a, b = (next(r for r in rows() if r.payment_id == p) for p in (pa, pb))
        # Each filler holds its nonce (the newest too: its pay() may be in another backend's pool).
        assert (a.nonce, a.status, a.settled) == (start_nonce, "failed", False)
        assert (b.nonce, b.status, b.settled) == (start_nonce + 1, "failed", False)
        assert a.reason.startswith("relay_rejected: ") and "base fee" in a.reason
        fillers = a.tx_hash, b.tx_hash
        counts = relayer.reconcile(chain)  # automine: a filler the node takes is mined at once
        assert counts["replaced"] == 2, counts

    # The relayer's passes, however soon they are mined (a clean-clone run once found one unsettled after two).
    def fillers_settled() -> bool:
        relayer.reconcile(chain)
        return all(r.settled for r in rows() if r.payment_id in (pa, pb))

    wait_until(fillers_settled, 30.0, "the re-priced fillers are not settled")
    a, b = (next(r for r in rows() if r.payment_id == p) for p in (pa, pb))
    for row, filler, nonce in ((a, fillers[0], start_nonce), (b, fillers[1], start_nonce + 1)):
        assert row.settled and row.tx_hash != filler and row.nonce == nonce
        assert filler in row.old_tx_hashes.split()
        receipt = w3.eth.get_transaction_receipt(row.tx_hash)
        assert (receipt["status"], receipt["to"]) == (1, RELAYER.address)  # the filler, re-priced and mined
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 2  # the nonces used, no gap
    assert [status(client, p) for p in (pa, pb)] == [
        {"status": "failed", "reason": a.reason}, {"status": "failed", "reason": a.reason}]
    assert balance(w3, token, merchant) == 0
    # The next payment goes at once, on the next nonce.
    pc = execute(client, payer, merchant, token, 83)
    send_queued(chain)
    assert wait_status(client, pc) == {"status": "ok"}  # the relayer's passes, however soon it is mined
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 3
    assert balance(w3, token, merchant) == 83


def test_a_refused_pay_that_was_mined_after_all_is_ok_not_its_filler(client, payer, deployed, w3, send_tx, chain,  # noqa: F811
                                                                    monkeypatch):
    """A send the node answered with a refusal although the transaction reached a pool (a provider
    behind a load balancer: one backend refuses, another had it) gets a filler for its nonce, and
    the filler's hash took the row's place: when the pay() is the one mined, the payment was made.
    Without its hash the row found no receipt and ended failed (relay_rejected) while the merchant
    was paid."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    pa, pb = (execute(client, payer, merchant, token, a) for a in (84, 85))
    real_batch = relayer._send_batch
    sent: list[str] = []

    def a_refused_after_all_sent(c, raws):
        sent.extend(raws)
        outcomes = real_batch(c, raws)
        # Mined before the relayer's filler is sent: anvil's automine mines after the send has
        # answered, and a filler that came first would replace the pay() in its pool (a loaded
        # clean-clone run found no receipt for it).
        w3.eth.wait_for_transaction_receipt(tx_hash_of(raws[0]), timeout=30)
        return [(relayer.SendOutcome.REJECTED, "transaction underpriced"), *outcomes[1:]]

    monkeypatch.setattr(relayer, "_send_batch", a_refused_after_all_sent)
    assert relayer.send_queued(chain) == {"sent": 1, "failed": 1}
    monkeypatch.setattr(relayer, "_send_batch", real_batch)
    pay_a = tx_hash_of(sent[0])
    assert w3.eth.get_transaction_receipt(pay_a)["status"] == 1  # A's pay() mined (automine), nonce and all
    (a,) = [r for r in rows() if r.payment_id == pa]
    assert (a.nonce, a.status, a.tx_hash != pay_a) == (start_nonce, "failed", True)  # a filler took its place
    assert pay_a in (a.old_tx_hashes or "").split()
    monkeypatch.setattr(relayer, "DROPPED_AFTER_SECONDS", 0.0)  # no waiting for a lagging node
    assert relayer.reconcile(chain)["ok"] == 2
    assert [status(client, p) for p in (pa, pb)] == [{"status": "ok"}, {"status": "ok"}]
    (a,) = [r for r in rows() if r.payment_id == pa]
    assert (a.settled, a.tx_hash, a.reason) == (True, pay_a, None)
    with get_session() as s:
        act = s.get(Activity, a.activity_id)
        assert (act.status, act.tx_hash) == ("ok", pay_a)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 2
    assert balance(w3, token, merchant) == 84 + 85


def test_a_refused_pay_on_the_newest_nonce_that_was_mined_after_all_is_ok(client, payer, deployed, w3, send_tx,  # noqa: F811
                                                                          chain, monkeypatch):
    """The same, for a payment whose nonce was the newest allocated: its nonce was given back and
    its hash dropped, so the pay() mined after all left it failed and settled, the merchant paid
    and the payer told to pay again. (Found by an audit.)"""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    real_batch = relayer._send_batch
    sent: list[str] = []

    def refused_but_pooled(c, raws):
        sent.extend(raws)
        real_batch(c, raws)  # one backend took it
        return [(relayer.SendOutcome.REJECTED, "header not found")] * len(raws)  # another answered

    with automine_off(w3):
        pid = execute(client, payer, merchant, token, 13)
        monkeypatch.setattr(relayer, "_send_batch", refused_but_pooled)
        assert relayer.send_queued(chain) == {"sent": 0, "failed": 1}
        monkeypatch.setattr(relayer, "_send_batch", real_batch)
        (row,) = [r for r in rows() if r.payment_id == pid]
        assert (row.nonce, row.status, row.settled) == (start_nonce, "failed", False)  # a filler holds it
        rpc(w3, "evm_mine")
    pay = tx_hash_of(sent[0])
    assert w3.eth.get_transaction_receipt(pay)["status"] == 1
    assert relayer.reconcile(chain)["ok"] == 1
    assert status(client, pid) == {"status": "ok"}
    (row,) = [r for r in rows() if r.payment_id == pid]
    assert (row.settled, row.tx_hash, row.reason) == (True, pay, None)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 1
    assert balance(w3, token, merchant) == 13


def test_a_send_whose_nonce_our_own_replacement_took_is_not_queued_again(client, payer, deployed, w3, send_tx,  # noqa: F811
                                                                          chain, monkeypatch):
    """send_queued stores the row with its pay() (raw1) and nonce; before its batch reaches the node,
    a reconcile() pass (its thread, another relayer process) re-sends raw1, is refused for its
    price, and replaces it with raw2 on the same nonce, which is mined. raw1 then gets 'nonce too
    low': taken as a nonce used by someone else, the row was given back to the queue, its dry run
    reverted Replayed, and the paid payment ended failed 'replayed' with no hash. (Found by an audit.)"""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    pid = execute(client, payer, merchant, token, 93)
    real_batch = relayer._send_batch
    announced: list[tuple[str, str]] = []
    monkeypatch.setattr(relayer, "announce_final", lambda rs: announced.extend((r.payment_id, r.status) for r in rs))
    sent: list[str] = []

    def follower_pass_first(c, raws):
        sent.extend(raws)
        raise_gas_price(w3, 5)
        assert relayer.reconcile(chain)["replaced"] == 1  # raw1 refused for its price: raw2 (mined)
        # anvil may answer raw2's send before its block is in: raw1 then met raw2 in the pool
        # ('underpriced', rejected) instead of its nonce taken (one CI run).
        (replaced,) = rows()
        w3.eth.wait_for_transaction_receipt(replaced.tx_hash, timeout=30)
        outcomes = real_batch(c, raws)
        assert [outcome for outcome, _ in outcomes] == [relayer.SendOutcome.NONCE_TAKEN]
        return outcomes

    with base_fee_restored(w3):
        monkeypatch.setattr(relayer, "_send_batch", follower_pass_first)
        assert relayer.send_queued(chain) == {"sent": 0, "failed": 0}
        monkeypatch.setattr(relayer, "_send_batch", real_batch)
    raw1 = tx_hash_of(sent[0])
    (row,) = rows()
    assert (row.status, row.nonce, row.old_tx_hashes, row.settled) == ("pending", start_nonce, raw1, False)
    raw2 = row.tx_hash
    assert w3.eth.wait_for_transaction_receipt(raw2, timeout=30)["status"] == 1
    assert relayer.send_queued(chain) == {"sent": 0, "failed": 0}  # nothing queued again
    assert relayer.reconcile(chain)["ok"] == 1
    assert status(client, pid) == {"status": "ok"}
    (row,) = rows()
    assert (row.settled, row.tx_hash, row.nonce) == (True, raw2, start_nonce)
    assert announced == [(pid, "ok")]
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 1
    assert balance(w3, token, merchant) == 93


def test_a_refused_send_that_a_follow_pass_replaced_meanwhile_is_not_failed(client, payer, deployed, w3, send_tx,  # noqa: F811
                                                                              chain, monkeypatch):
    """send_queued's batch is refused for its price; before its bookkeeping (_refused) runs, a
    reconcile() pass (its thread, another relayer process; it takes no nonce lock) re-sends the pay(),
    is refused too and replaces it at the new price, mined. _refused then failed the row
    'relay_rejected' over that, with a filler, and announced 'failed' for a paid payment. (Found
    by an audit.)"""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    pid = execute(client, payer, merchant, token, 91)
    real_batch, real_refused = relayer._send_batch, relayer._refused
    announced: list[tuple[str, str]] = []
    monkeypatch.setattr(relayer, "announce_final", lambda rs: announced.extend((r.payment_id, r.status) for r in rs))
    sent: list[str] = []

    def price_rises_first(c, raws):
        sent.extend(raws)
        raise_gas_price(w3, 5)
        return real_batch(c, raws)

    def follow_pass_first(*args):
        assert relayer.reconcile(chain)["replaced"] == 1
        return real_refused(*args)

    with base_fee_restored(w3):
        monkeypatch.setattr(relayer, "_send_batch", price_rises_first)
        monkeypatch.setattr(relayer, "_refused", follow_pass_first)
        assert relayer.send_queued(chain) == {"sent": 0, "failed": 0}
        monkeypatch.setattr(relayer, "_send_batch", real_batch)
        monkeypatch.setattr(relayer, "_refused", real_refused)
        (row,) = rows()
        assert (row.status, row.reason, row.old_tx_hashes) == ("pending", None, tx_hash_of(sent[0]))
        assert announced == [] and status(client, pid) == {"status": "pending"}
        assert w3.eth.wait_for_transaction_receipt(row.tx_hash, timeout=30)["status"] == 1  # the replacement
    assert relayer.reconcile(chain)["ok"] == 1
    assert status(client, pid) == {"status": "ok"} and announced == [(pid, "ok")]
    (done,) = rows()
    assert (done.settled, done.tx_hash, done.nonce) == (True, row.tx_hash, start_nonce)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 1
    assert balance(w3, token, merchant) == 91


def test_a_follow_pass_does_not_write_its_stale_copy_over_a_refused_sends_filler(client, payer, deployed, w3,  # noqa: F811
                                                                                 send_tx, chain, monkeypatch):
    """The other order: a reconcile() pass reads the row (the pay() sent), send_queued's _refused
    then commits the filler in its place, and the pass, re-sending the pay() it read and refused
    for its price, replaced it and committed its copy over the filler: the filler's hash dropped,
    a second transaction sent for a payment already announced failed."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    pid = execute(client, payer, merchant, token, 92)
    real_batch, real_refused, real_send_raw = relayer._send_batch, relayer._refused, relayer._send_raw
    sent: list[str] = []

    def price_rises_first(c, raws):
        sent.extend(raws)
        raise_gas_price(w3, 5)
        return real_batch(c, raws)

    def follow_pass_meanwhile(*args):
        def refused_commits_first(c, raw):  # the pass's re-send of the pay() it read
            monkeypatch.setattr(relayer, "_send_raw", real_send_raw)
            real_refused(*args)  # commits the filler
            return real_send_raw(c, raw)

        monkeypatch.setattr(relayer, "_send_raw", refused_commits_first)
        assert relayer.reconcile(chain)["replaced"] == 0  # its copy is stale: not replaced, nothing sent
        return True

    with base_fee_restored(w3):
        monkeypatch.setattr(relayer, "_send_batch", price_rises_first)
        monkeypatch.setattr(relayer, "_refused", follow_pass_meanwhile)
        assert relayer.send_queued(chain) == {"sent": 0, "failed": 1}
        monkeypatch.setattr(relayer, "_send_batch", real_batch)
        monkeypatch.setattr(relayer, "_refused", real_refused)
        (row,) = rows()
        assert (row.status, row.nonce, row.old_tx_hashes) == ("failed", start_nonce, tx_hash_of(sent[0]))
        assert row.reason.startswith("relay_rejected: ")
        filler = relayer.decode_raw_tx(row.raw_tx)
        assert (filler.to.lower(), tx_hash_of(row.raw_tx)) == (RELAYER.address.lower(), row.tx_hash)
        assert w3.eth.get_transaction_count(RELAYER.address, "pending") == start_nonce  # no replacement sent

    def filler_settled() -> bool:
        relayer.reconcile(chain)
        return rows()[0].settled

    wait_until(filler_settled, 30.0, "the filler is not settled")
    (done,) = rows()
    assert (done.status, done.reason) == ("failed", row.reason)
    assert w3.eth.get_transaction_receipt(done.tx_hash)["to"] == RELAYER.address  # the filler took the nonce
    assert status(client, pid) == {"status": "failed", "reason": row.reason}
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 1
    assert balance(w3, token, merchant) == 0


def test_only_the_nonce_the_chain_waits_for_is_re_priced_for_waiting(client, payer, deployed, w3, send_tx, chain,  # noqa: F811
                                                                     monkeypatch):
    """A later nonce waiting behind it is not re-priced for its wait (it would go up by a quarter
    every relayer_stuck_seconds while it waits, and be mined that dear), only once the node's price
    has passed its own (then it would be stuck in its turn, and goes in the same block instead)."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    start_nonce = w3.eth.get_transaction_count(RELAYER.address)
    with automine_off(w3):
        pa, pb = (execute(client, payer, merchant, token, a) for a in (86, 87))
        send_queued(chain)
        a, b = (next(r for r in rows() if r.payment_id == p) for p in (pa, pb))
        assert (a.nonce, b.nonce) == (start_nonce, start_nonce + 1)
        use_env(monkeypatch, RELAYER_STUCK_SECONDS=0)
        assert relayer.reconcile(chain)["replaced"] == 1
        a2, b2 = (next(r for r in rows() if r.payment_id == p) for p in (pa, pb))
        assert (a2.old_tx_hashes, b2.old_tx_hashes, b2.tx_hash) == (a.tx_hash, None, b.tx_hash)
        assert int(a2.gas_price) > int(a.gas_price)
        with gas_price_raised(w3, 3):  # above both: the later one would not be mined in its turn
            assert relayer.reconcile(chain)["replaced"] == 2
            a3, b3 = (next(r for r in rows() if r.payment_id == p) for p in (pa, pb))
            assert b3.old_tx_hashes == b.tx_hash and int(b3.gas_price) >= w3.eth.gas_price
            rpc(w3, "evm_mine")
            assert relayer.reconcile(chain)["ok"] == 2
    assert [status(client, p) for p in (pa, pb)] == [{"status": "ok"}, {"status": "ok"}]
    done = {r.payment_id: r for r in rows()}
    assert (done[pa].tx_hash, done[pb].tx_hash) == (a3.tx_hash, b3.tx_hash)
    assert w3.eth.get_transaction_count(RELAYER.address) == start_nonce + 2
    assert balance(w3, token, merchant) == 86 + 87


def test_one_process_reconciles_a_chain_at_a_time(client, payer, deployed, w3, send_tx, chain):  # noqa: F811
    """Another process holding the chain's reconcile turn (as exclusive_turn does across processes):
    this pass skips, touching nothing; once the turn is free, the relayer's passes settle it."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    pid = execute(client, payer, merchant, token, 81)
    send_queued(chain)
    followed = [(r.status, r.settled, r.tx_hash, r.updated_at) for r in rows()]
    assert [(status, settled) for status, settled, *_ in followed] == [("pending", False)]
    with exclusive_turn(f"relayer-reconcile:{chain.chain_id}:{RELAYER.address.lower()}") as held:
        assert held is True
        assert relayer.reconcile(chain) == {"ok": 0, "failed": 0, "resent": 0, "replaced": 0, "pending": 0}
        assert [(r.status, r.settled, r.tx_hash, r.updated_at) for r in rows()] == followed
    assert wait_status(client, pid) == {"status": "ok"}  # the relayer's passes (run_once), the turn free


def test_payments_sent_with_a_replaced_relayer_key_are_followed(client, payer, deployed, w3, send_tx, chain,  # noqa: F811
                                                               monkeypatch):
    """RELAYER_PRIVATE_KEY replaced with payments in flight: they were never looked at again (left
    pending, their payers' later payments held behind them). Now one is followed to its receipt,
    and one that will never be mined is failed once past its deadline; neither is re-sent."""
    token, merchant = token_of(deployed), Account.create().address
    approve_directly(send_tx, payer, token, deployed["payment"])
    with automine_off(w3):
        mined_pid = execute(client, payer, merchant, token, 83)
        send_queued(chain)
        lost_pid = execute(client, payer, merchant, token, 84)
        send_queued(chain)
        mined, lost = rows()
        rpc(w3, "anvil_dropTransaction", lost.tx_hash)  # it will never be mined
        use_env(monkeypatch, RELAYER_PRIVATE_KEY=Account.create().key.hex())
        assert relayer.relayer_account().address != RELAYER.address
        assert relayer.reconcile(chain) == {"ok": 0, "failed": 0, "resent": 0, "replaced": 0, "pending": 2}
        assert not known(w3, lost.tx_hash)  # not re-sent: the new key does not own that nonce
        with get_session() as db:  # as if its deadline had passed
            db.get(Payment, lost.id).deadline = w3.eth.get_block("latest")["timestamp"] - 1
            db.commit()
        rpc(w3, "evm_mine")
    counts = relayer.reconcile(chain)
    assert (counts["ok"], counts["failed"]) == (1, 1)
    assert status(client, mined_pid) == {"status": "ok"}
    assert status(client, lost_pid) == {"status": "failed", "reason": "expired"}
    assert [(r.payment_id, r.settled) for r in rows()] == [(mined.payment_id, True), (lost.payment_id, True)]
    with get_session() as db:
        assert crud.payments_in_flight(db, chain.chain_id, {payer.address.lower()}) == []
