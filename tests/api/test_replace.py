"""Speeding up and cancelling a pending send through /api/v1 on a real anvil with mining paused
(issue 14 item 4): the same nonce at a higher price, linked to the original; when one of the
group is mined the others are replaced or cancelled, and the chain moves the funds once."""

import pytest
from eth_account import Account
from sqlmodel import select

from tests.anvil_mining import mine, mining_paused
from tests.api.test_wallet_api import API, api_user, balance_of, sign  # noqa: F401 - api_user is a fixture
from wallet_app.core.db import get_session
from wallet_app.models import Activity
from wallet_app.services import pending


def pending_send(client, acct, token, recipient, amount="1500000") -> tuple[dict, str, int]:
    built = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": token, "to": recipient,
                                                 "amount": amount})
    assert built.status_code == 200, built.text
    tx = built.json()
    resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(acct, tx)})
    assert resp.status_code == 200, resp.text
    (entry,) = [e for e in client.get(f"{API}/activities").json() if e["tx_hash"] == resp.json()["tx_hash"]]
    assert (entry["status"], entry["replaceable"]) == ("submitted", True)
    return tx, resp.json()["tx_hash"], entry["id"]


def entries(client) -> dict[str, dict]:
    return {e["tx_hash"]: e for e in client.get(f"{API}/activities").json()}


def test_speed_up_replaces_the_pending_send_and_moves_funds_once(api_user, client, chain, w3):  # noqa: F811
    tusd = chain.tokens[0].token_address
    recipient = Account.create().address
    before = balance_of(w3, tusd, recipient)
    with mining_paused(w3):
        tx, old_hash, old_id = pending_send(client, api_user, tusd, recipient)
        # A price below +10% is refused before anything is broadcast.
        low = {**tx, "gas_price": str(int(tx["gas_price"]) + 1)}
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, low), "replaces": old_id})
        assert (resp.status_code, resp.json()) == (400, {"detail": "replacement_underpriced"})
        # Another recipient is not a speed-up of this send.
        other = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": tusd,
                                                     "to": Account.create().address, "amount": "1"}).json()
        other = {**other, "nonce": tx["nonce"], "gas_price": str(pending.bump(int(tx["gas_price"])))}
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, other), "replaces": old_id})
        assert (resp.status_code, resp.json()) == (400, {"detail": "replacement_mismatch"})

        built = client.post(f"{API}/tx/replace", json={"activity_id": old_id, "kind": "speedup"})
        assert built.status_code == 200, built.text
        fast = built.json()
        assert {k: fast[k] for k in ("chain_id", "to", "data", "value", "nonce", "gas_limit")} == {
            k: tx[k] for k in ("chain_id", "to", "data", "value", "nonce", "gas_limit")}
        assert int(fast["gas_price"]) >= pending.bump(int(tx["gas_price"]))
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, fast), "replaces": old_id})
        assert resp.status_code == 200, resp.text
        new_hash = resp.json()["tx_hash"]
        listed = entries(client)
        assert (listed[old_hash]["status"], listed[old_hash]["replaceable"]) == ("submitted", False)
        assert (listed[new_hash]["status"], listed[new_hash]["replaceable"]) == ("submitted", True)
        assert listed[new_hash]["replaces_tx"] == old_hash
        assert listed[new_hash]["type"] == "transfer"
        # Sped up once more: above the highest price sent with this nonce.
        again = client.post(f"{API}/tx/replace", json={"activity_id": listed[new_hash]["id"], "kind": "speedup"})
        faster = again.json()
        assert int(faster["gas_price"]) >= pending.bump(int(fast["gas_price"]))
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, faster),
                                                     "replaces": listed[new_hash]["id"]})
        assert resp.status_code == 200, resp.text
        mid_hash, new_hash = new_hash, resp.json()["tx_hash"]
        assert [e["replaceable"] for e in entries(client).values()][:3] == [True, False, False]
        mine(w3)
    mine(w3)
    listed = entries(client)
    assert [listed[h]["status"] for h in (new_hash, mid_hash, old_hash)] == ["ok", "replaced", "replaced"]
    assert listed[old_hash]["summary"].endswith("(replaced)")
    assert w3.eth.get_transaction_receipt(new_hash)["status"] == 1
    assert balance_of(w3, tusd, recipient) - before == 1_500_000  # once
    assert w3.eth.get_transaction_count(api_user.address) == int(tx["nonce"]) + 1
    # Neither can be replaced any more, each with its reason.
    for activity_id, code in ((old_id, "nonce_used"), (listed[mid_hash]["id"], "nonce_used"),
                              (listed[new_hash]["id"], "already_mined")):
        resp = client.post(f"{API}/tx/replace", json={"activity_id": activity_id, "kind": "speedup"})
        assert (resp.status_code, resp.json()) == (409, {"detail": code})


def test_cancel_sends_nothing_and_marks_the_send_cancelled(api_user, client, chain, w3):  # noqa: F811
    tusd = chain.tokens[0].token_address
    recipient = Account.create().address
    before = balance_of(w3, tusd, recipient)
    with mining_paused(w3):
        tx, old_hash, old_id = pending_send(client, api_user, tusd, recipient)
        built = client.post(f"{API}/tx/replace", json={"activity_id": old_id, "kind": "cancel"})
        assert built.status_code == 200, built.text
        cancel = built.json()
        assert (cancel["to"], cancel["data"], cancel["value"], cancel["nonce"], cancel["gas_limit"]) == (
            api_user.address, "0x", "0", tx["nonce"], "21000")
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, cancel), "replaces": old_id})
        assert resp.status_code == 200, resp.text
        cancel_hash = resp.json()["tx_hash"]
        assert entries(client)[cancel_hash]["type"] == "cancel"
        mine(w3)
    listed = entries(client)
    assert (listed[cancel_hash]["status"], listed[old_hash]["status"]) == ("ok", "cancelled")
    assert listed[cancel_hash]["summary"] == f"Cancel of {old_hash[:6]}…{old_hash[-4:]}"
    assert balance_of(w3, tusd, recipient) == before
    assert w3.eth.get_transaction_receipt(cancel_hash)["status"] == 1


def test_replace_refusals(api_user, client, chain, w3, login):  # noqa: F811
    tusd = chain.tokens[0].token_address
    resp = client.post(f"{API}/tx/replace", json={"activity_id": 999999, "kind": "cancel"})
    assert (resp.status_code, resp.json()) == (404, {"detail": "unknown_activity"})
    resp = client.post(f"{API}/tx/replace", json={"activity_id": 1, "kind": "faster"})
    assert (resp.status_code, resp.json()) == (422, {"detail": "invalid_request"})
    # Past the database's integer: refused as a request, not an overflow inside the lookup.
    resp = client.post(f"{API}/tx/replace", json={"activity_id": 10**30, "kind": "cancel"})
    assert (resp.status_code, resp.json()) == (422, {"detail": "invalid_request"})
    with mining_paused(w3):
        _, _, old_id = pending_send(client, api_user, tusd, Account.create().address)
        # Another user's entry is unknown to this one.
        login("mallory@example.com")
        resp = client.post(f"{API}/tx/replace", json={"activity_id": old_id, "kind": "cancel"})
        assert (resp.status_code, resp.json()) == (404, {"detail": "unknown_activity"})
    mine(w3)


def stored_entry(tx_hash: str) -> Activity:
    with get_session() as db:
        return db.exec(select(Activity).where(Activity.tx_hash == tx_hash)).one()


def test_a_send_mined_while_its_group_is_read_is_never_marked_replaced(api_user, client, chain, w3, monkeypatch):  # noqa: F811
    """The block lands after the group's receipts are read: the nonce read before them was still
    free, so nothing is decided, and the next look finds the receipt."""
    tusd = chain.tokens[0].token_address
    with mining_paused(w3):
        _tx, tx_hash, _id = pending_send(client, api_user, tusd, Account.create().address)
        read_receipt = pending.tx_status

        def receipt_then_block(c, h):
            status = read_receipt(c, h)
            mine(w3)
            return status

        monkeypatch.setattr(pending, "tx_status", receipt_then_block)
        pending.refresh_group(chain, stored_entry(tx_hash))
        assert stored_entry(tx_hash).status == "submitted"
    monkeypatch.undo()
    assert w3.eth.get_transaction_receipt(tx_hash)["status"] == 1
    assert entries(client)[tx_hash]["status"] == "ok"


def test_a_used_nonce_without_a_receipt_yet_waits_for_it(api_user, client, chain, w3, monkeypatch):  # noqa: F811
    """A node may serve the new nonce before the receipt: a member it knows is not replaced."""
    tusd = chain.tokens[0].token_address
    with mining_paused(w3):
        _tx, tx_hash, _id = pending_send(client, api_user, tusd, Account.create().address)
        mine(w3)
    monkeypatch.setattr(pending, "tx_status", lambda _c, _h: "pending")  # the receipt not served yet
    pending.refresh_group(chain, stored_entry(tx_hash))
    assert stored_entry(tx_hash).status == "submitted"
    monkeypatch.undo()
    assert entries(client)[tx_hash]["status"] == "ok"


def test_a_nonce_taken_from_outside_the_group_leaves_it_replaced(api_user, client, chain, w3):  # noqa: F811
    """Another device sends with the same nonce at a higher price: the node drops ours, mines
    theirs, and the entry is replaced (it moved nothing)."""
    tusd = chain.tokens[0].token_address
    recipient = Account.create().address
    before = balance_of(w3, tusd, recipient)
    with mining_paused(w3):
        tx, tx_hash, _id = pending_send(client, api_user, tusd, recipient)
        outside = api_user.sign_transaction({"chainId": 31337, "to": api_user.address, "value": 0, "gas": 21_000,
                                             "gasPrice": pending.bump(int(tx["gas_price"])), "nonce": int(tx["nonce"])})
        w3.eth.send_raw_transaction(outside.raw_transaction)
        mine(w3)
    assert entries(client)[tx_hash]["status"] == "replaced"
    assert balance_of(w3, tusd, recipient) == before


def test_a_call_with_more_data_than_a_link_can_carry_is_kept_without_it(api_user, client, chain, w3):  # noqa: F811
    """Every Activity listing reads its entries' kept fields: a client other than ours submitted
    calls of 150 kB, a hundred of them a listing of 26 MB (found by an audit). One over what a
    /sign link can carry keeps no call data, and so offers no speed-up; one within it does."""
    from wallet_app.services.activity import KEPT_CALLDATA_CHARS

    big, small = ("0x" + "ab" * (KEPT_CALLDATA_CHARS // 2 + n) for n in (1, -1000))
    with mining_paused(w3):
        hashes = []
        for nonce, data in enumerate((small, big), start=w3.eth.get_transaction_count(api_user.address)):
            raw = api_user.sign_transaction({"chainId": 31337, "to": Account.create().address, "value": 0,
                                             "data": data, "nonce": nonce, "gas": 1_000_000,
                                             "gasPrice": w3.eth.gas_price}).raw_transaction
            resp = client.post(f"{API}/tx/submit", json={"raw_tx": "0x" + raw.hex()})
            assert resp.status_code == 200, resp.text
            hashes.append(resp.json()["tx_hash"])
        listed = entries(client)
        assert [listed[h]["replaceable"] for h in hashes] == [True, False]
        with get_session() as db:
            kept = {row.tx_hash: len(row.data) for row in db.exec(select(Activity)) if row.tx_hash in hashes}
        assert kept[hashes[1]] < 1000 < kept[hashes[0]]
        mine(w3)


def test_a_speed_up_has_its_entry_before_it_is_broadcast(api_user, client, chain, w3, monkeypatch):  # noqa: F811
    """The worker dies (or the database fails) right after the speed-up is broadcast (found by an
    audit): its entry was written after the broadcast, and lost; the only one left said "replaced"
    once the speed-up was mined. Now it is written first, and the mined speed-up is shown."""
    from wallet_app.services import chain as chain_svc

    tusd = chain.tokens[0].token_address
    recipient = Account.create().address
    before = balance_of(w3, tusd, recipient)
    with mining_paused(w3):
        tx, old_hash, old_id = pending_send(client, api_user, tusd, recipient)
        faster = {**tx, "gas_price": str(pending.bump(int(tx["gas_price"])) * 2)}
        real = chain_svc.submit_raw

        def broadcast_then_die(*a, **k):
            real(*a, **k)
            raise RuntimeError("stand-in for the worker's death right after the broadcast")

        monkeypatch.setattr(chain_svc, "submit_raw", broadcast_then_die)
        with pytest.raises(RuntimeError):
            client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, faster), "replaces": old_id})
        monkeypatch.undo()
        mine(w3)
    listed = entries(client)
    new_hash = next(h for h in listed if h != old_hash)
    assert (listed[new_hash]["status"], listed[new_hash]["replaces_tx"]) == ("ok", old_hash)
    assert listed[old_hash]["status"] == "replaced"
    assert balance_of(w3, tusd, recipient) - before == 1_500_000


def test_a_speed_up_that_cannot_be_recorded_is_not_broadcast(api_user, client, chain, w3, monkeypatch):  # noqa: F811
    """The database fails as the speed-up's entry is written: nothing is broadcast (a send without
    its entry is lost to the user, who may send again), the send stays pending and can be sped up."""
    from wallet_app.services import activity

    tusd = chain.tokens[0].token_address
    with mining_paused(w3):
        tx, old_hash, old_id = pending_send(client, api_user, tusd, Account.create().address)
        faster = {**tx, "gas_price": str(pending.bump(int(tx["gas_price"])) * 2)}

        def fails(*a, **k):
            raise RuntimeError("stand-in for a database outage")

        monkeypatch.setattr(activity, "record_submitted", fails)
        raw = sign(api_user, faster)
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": raw, "replaces": old_id})
        assert (resp.status_code, resp.json()) == (500, {"detail": "internal_error"})
        monkeypatch.undo()
        assert w3.eth.get_transaction(old_hash)["gasPrice"] == int(tx["gas_price"])  # still the pool's
        assert [(e["tx_hash"], e["status"], e["replaceable"]) for e in entries(client).values()] == [
            (old_hash, "submitted", True)]
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": raw, "replaces": old_id})  # tried again
        assert resp.status_code == 200, resp.text
        mine(w3)
    listed = entries(client)
    assert [listed[h]["status"] for h in (resp.json()["tx_hash"], old_hash)] == ["ok", "replaced"]


def test_a_speed_up_the_node_refuses_leaves_the_send_as_it_was(api_user, client, chain, w3):  # noqa: F811
    """Refused by the node (more gas than the address can pay), the speed-up's entry is removed again:
    the send is not marked replaced, and still offers Speed up and Cancel."""
    tusd = chain.tokens[0].token_address
    with mining_paused(w3):
        tx, old_hash, old_id = pending_send(client, api_user, tusd, Account.create().address)
        costly = {**tx, "gas_price": str(10**18)}
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, costly), "replaces": old_id})
        assert (resp.status_code, resp.json()) == (400, {"detail": "fee_unaffordable"})
        assert [(e["tx_hash"], e["status"], e["replaceable"]) for e in entries(client).values()] == [
            (old_hash, "submitted", True)]
        mine(w3)
    assert entries(client)[old_hash]["status"] == "ok"


def test_a_send_the_node_never_got_is_replaced_by_the_next_one_on_its_nonce(api_user, client, chain, w3,  # noqa: F811
                                                                            monkeypatch):
    """A send whose broadcast never reached the node is shown as not sent; the next send takes its
    nonce and is mined: that one is confirmed (a 'dropped' member never wins the group), the first
    replaced."""
    from tests.api.test_wallet_api import _never_sent
    from wallet_app.services import chain as chain_svc

    tusd = chain.tokens[0].token_address
    with monkeypatch.context() as m:
        m.setattr(*_never_sent(chain))
        built = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": tusd,
                                                     "to": Account.create().address, "amount": "7"}).json()
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, built)})
        assert (resp.status_code, resp.json()) == (503, {"detail": "rpc_unavailable"})
    monkeypatch.setattr(pending, "DROP_AFTER_SECONDS", -1)
    (lost,) = entries(client).values()
    assert lost["status"] == "dropped"
    with mining_paused(w3):
        tx, tx_hash, _id = pending_send(client, api_user, tusd, Account.create().address)
        assert tx["nonce"] == built["nonce"]
        mine(w3)
    listed = entries(client)
    assert [listed[h]["status"] for h in (tx_hash, lost["tx_hash"])] == ["ok", "replaced"]
    assert chain_svc.transaction_known(w3, lost["tx_hash"]) is False


def test_a_second_tabs_send_on_a_pending_nonce_is_refused(api_user, client, chain, w3):  # noqa: F811
    """Two tabs build sends before either is sent: both get the same nonce. The second, at a higher
    price, replaced the first unseen while both tabs said "submitted" (an audit): it is refused, and
    Speed up and Cancel on Activity stay the way to replace a pending send."""
    tusd = chain.tokens[0].token_address
    first_to, second_to = Account.create().address, Account.create().address
    with mining_paused(w3):
        second = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": tusd, "to": second_to,
                                                      "amount": "1500000"}).json()
        tx, first_hash, _id = pending_send(client, api_user, tusd, first_to)
        assert second["nonce"] == tx["nonce"]
        dearer = {**second, "gas_price": str(int(second["gas_price"]) * 2)}
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, dearer)})
        assert (resp.status_code, resp.json()) == (400, {"detail": "sign_nonce_pending"})
        # The same bytes as the pending one are that send, not another.
        again = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)})
        assert (again.status_code, again.json()) == (200, {"tx_hash": first_hash})
        mine(w3)
    assert [e["status"] for e in entries(client).values()] == ["ok"]
    assert (balance_of(w3, tusd, first_to), balance_of(w3, tusd, second_to)) == (1_500_000, 0)
