"""Chains, tokens, balances, transfers and activity through /api/v1 against a real anvil."""

import json
import time

import pytest
from eth_account import Account
from sqlmodel import select
from web3 import Web3
from web3.exceptions import RequestTimedOut

from contracts.artifacts import abi
from contracts.deploy import (
    DEV_DEPLOYER_KEY,
    FAUCET_ETH_WEI,
    FAUCET_TOKEN_UNITS,
    _deploy_contract,
)
from tests.anvil_mining import mine, mining_paused
from tools.ports import free_port
from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.dev import faucet
from wallet_app.errors import AppError
from wallet_app.models import Activity
from wallet_app.services import chain as chain_svc
from wallet_app.services import sessions, tokens
from wallet_app.services.eth import ZERO_ADDRESS

API = "/api/v1"


def balance_of(w3, token, owner):
    return w3.eth.contract(address=Web3.to_checksum_address(token), abi=abi("IERC20Full")).functions.balanceOf(
        Web3.to_checksum_address(owner)).call()


@pytest.fixture
def api_user(chain_env, client, login):
    """A signed-in user with a fresh address, funded by the dev faucet on registration."""
    login("wallet@example.com")
    acct = Account.create()
    resp = client.post(f"{API}/me/address", json={"address": acct.address})
    assert resp.status_code == 200, resp.text
    assert faucet.wait_idle(60)
    return acct


def current_user(client):
    return sessions.lookup_user(client.cookies.get(sessions.SESSION_COOKIE))


def count_rpc(monkeypatch, chain):
    """Records the JSON-RPC methods sent to this chain by the service's client. Wraps the HTTP
    round trip (_make_request): web3 caches a composed make_request after the first call."""
    provider = chain_svc.web3_for(chain).provider
    seen, real = [], provider._make_request
    monkeypatch.setattr(provider, "_make_request", lambda m, data: seen.append(m) or real(m, data))
    return seen


def sign(acct, tx):
    signed = acct.sign_transaction({
        "chainId": int(tx["chain_id"]), "to": tx["to"], "data": tx["data"], "value": int(tx["value"]),
        "nonce": int(tx["nonce"]), "gas": int(tx["gas_limit"]), "gasPrice": int(tx["gas_price"])})
    return "0x" + signed.raw_transaction.hex()


def test_routes_need_a_session(chain_env, client):
    for method, path, body in [
        ("GET", "/chains", None), ("GET", "/assets", None), ("GET", "/tokens", None),
        ("POST", "/tokens", {"chain_id": 31337, "token_address": ZERO_ADDRESS}),
        ("GET", f"/token/metadata?chain_id=31337&token_address={ZERO_ADDRESS}", None),
        ("POST", "/tx/build", {"chain_id": 31337, "token_address": ZERO_ADDRESS, "to": ZERO_ADDRESS, "amount": "1"}),
        ("POST", "/tx/submit", {"raw_tx": "0x00"}), ("GET", "/activities", None),
    ]:
        resp = client.request(method, API + path, json=body)
        assert resp.status_code == 401, (path, resp.text)
        assert resp.json() == {"detail": "not_authenticated"}


def test_chains_and_openapi(chain_env, client, login):
    login()
    assert client.get(f"{API}/chains").json() == [{"chain_id": 31337, "chain_name": "Newbl Dev (anvil)"}]
    paths = client.get(f"{API}/openapi.json").json()["paths"]
    assert {"get", "post"} <= set(paths[f"{API}/tokens"])
    for p in ("/assets", "/chains", "/token/metadata", "/tx/build", "/tx/submit", "/activities"):
        assert API + p in paths


def test_assets_equal_balance_of_with_one_eth_call(api_user, client, chain, w3, monkeypatch):
    seen = count_rpc(monkeypatch, chain)
    items = client.get(f"{API}/assets").json()
    assert seen == ["eth_call"]
    # The chains file's tokens, then the chain's native coin (issue 14 item 1), all in that one eth_call.
    assert [i["token_symbol"] for i in items] == ["tUSD", "tKRW", "ETH"]
    for item in items:
        assert set(item) == {"token_symbol", "token_name", "chain_name", "chain_id", "token_address",
                             "token_decimals", "balance"}
        assert item["chain_id"] == 31337 and item["chain_name"] == "Newbl Dev (anvil)"
        assert isinstance(item["balance"], str)
    for item in items[:2]:
        assert item["token_decimals"] == 6
        assert int(item["balance"]) == balance_of(w3, item["token_address"], api_user.address) == FAUCET_TOKEN_UNITS
    native = items[2]
    assert (native["token_address"], native["token_name"], native["token_decimals"]) == (ZERO_ADDRESS, "Ether", 18)
    assert int(native["balance"]) == w3.eth.get_balance(api_user.address) == FAUCET_ETH_WEI
    # The Reflex handlers call the same service with the user: same answer.
    assert tokens.asset_balances(current_user(client)) == (items, [])
    assert client.get(f"{API}/tokens").json() == [{k: i[k] for k in i if k != "balance"} for i in items]


def test_a_token_list_seeded_at_once_by_another_worker(api_user, client, monkeypatch):
    # Two workers load a user's first token list at once: the one whose insert collides rolls
    # back (which expires the user it loaded) and must still read the user's address.
    user = current_user(client)
    with get_session() as db:
        for row in crud.list_user_tokens(db, user.id):
            db.delete(row)
        db.commit()
    real, raced = crud.list_user_tokens, []

    def read_then_seeded_elsewhere(db, user_id):
        rows = real(db, user_id)
        if not raced:  # the other worker seeds between our read and our insert
            raced.append(True)
            with get_session() as other:
                tokens._seed(other, user_id, chain_svc.get_chains())
        return rows

    monkeypatch.setattr(crud, "list_user_tokens", read_then_seeded_elsewhere)
    items = tokens.asset_balances(user.id).items
    assert raced and [(i["token_symbol"], i["balance"]) for i in items] == [
        ("tUSD", str(FAUCET_TOKEN_UNITS)), ("tKRW", str(FAUCET_TOKEN_UNITS)), ("ETH", str(FAUCET_ETH_WEI))]


def test_an_existing_user_gets_the_native_coin_once(api_user, client, monkeypatch):
    """A list seeded before the native coin was (tUSD and tKRW only) gets it on its next read,
    once, even when another worker adds it between this read and this insert."""
    user = current_user(client)
    with get_session() as db:
        for row in crud.list_user_tokens(db, user.id):
            db.delete(row)
        db.flush()
        for t in chain_svc.get_chains()[0].tokens:
            crud.add_user_token(db, user.id, 31337, t.token_address, t.token_symbol, t.token_name, t.token_decimals)
        db.commit()
    real, raced = crud.list_user_tokens, []

    def read_then_native_added_elsewhere(db, user_id):
        rows = real(db, user_id)
        if not raced:
            raced.append(True)
            with get_session() as other:
                crud.add_user_token(other, user_id, 31337, ZERO_ADDRESS, "ETH", "Ether", 18)
                other.commit()
        return rows

    monkeypatch.setattr(crud, "list_user_tokens", read_then_native_added_elsewhere)
    assert [t["token_symbol"] for t in tokens.user_tokens(user.id)] == ["tUSD", "tKRW", "ETH"]
    monkeypatch.setattr(crud, "list_user_tokens", real)
    listed = client.get(f"{API}/tokens").json()
    assert raced and [(t["token_symbol"], t["token_address"]) for t in listed][2:] == [("ETH", ZERO_ADDRESS)]
    assert len(listed) == 3


def test_add_token_probes_the_chain(api_user, client, chain, w3, deployed):
    extra = _deploy_contract(w3, DEV_DEPLOYER_KEY, "TestToken", "Extra Token", "XTR")
    body = {"chain_id": 31337, "token_address": extra.lower()}
    added = client.post(f"{API}/tokens", json=body)
    assert added.status_code == 200, added.text
    assert added.json() == {"chain_id": 31337, "chain_name": "Newbl Dev (anvil)", "token_address": extra,
                            "token_symbol": "XTR", "token_name": "Extra Token", "token_decimals": 6}
    assert client.post(f"{API}/tokens", json={**body, "chain_id": "31337"}).json() == added.json()  # idempotent
    assert [t["token_symbol"] for t in client.get(f"{API}/tokens").json()] == ["tUSD", "tKRW", "ETH", "XTR"]

    native = client.post(f"{API}/tokens", json={"chain_id": 31337, "token_address": ZERO_ADDRESS})
    assert native.status_code == 200  # already listed from the start: the same entry
    assert (native.json()["token_symbol"], native.json()["token_decimals"]) == ("ETH", 18)
    assets = {a["token_symbol"]: a["balance"] for a in client.get(f"{API}/assets").json()}
    assert assets["XTR"] == "0"
    assert int(assets["ETH"]) == w3.eth.get_balance(api_user.address) > 0

    for address, chain_id, code in [
        (Account.create().address, 31337, "not_a_contract"),
        (deployed["multicall"], 31337, "not_erc20"),
        ("0x1234", 31337, "invalid_address"),
        (extra, 999, "unsupported_chain"),
    ]:
        resp = client.post(f"{API}/tokens", json={"chain_id": chain_id, "token_address": address})
        assert (resp.status_code, resp.json()) == (400, {"detail": code}), address
    assert len(client.get(f"{API}/tokens").json()) == 4


def test_add_token_adds_only_what_the_probe_showed(api_user, client, chain, w3, deployer, send_tx):
    """A token can answer 'SCAM' to the add-token dialog's probe and 'tUSD' on the add (switching on
    block.timestamp, or renamed in between): add_token read it again and stored that, a copycat of
    the configured tUSD the user was never warned of (found by an audit)."""
    user = current_user(client)
    token = _deploy_contract(w3, DEV_DEPLOYER_KEY, "CopycatToken", "SCAM", "Scam Token")
    rename = lambda symbol, name: send_tx(  # noqa: E731
        deployer, token, w3.eth.contract(abi=abi("CopycatToken")).encode_abi("rename", [symbol, name]))
    probed = tokens.token_metadata(user, 31337, token)
    assert probed == {"token_name": "Scam Token", "token_symbol": "SCAM", "token_decimals": 6}
    assert tokens.copycat(user, 31337, token, probed["token_symbol"]) is None  # no warning shown
    rename("tUSD", "Newbl Test USD")
    with pytest.raises(AppError) as exc:
        tokens.add_token(user, 31337, token, {**probed, "warned": False})
    assert exc.value.code == "token_changed"
    resp = client.post(f"{API}/tokens", json={"chain_id": 31337, "token_address": token, **probed})
    assert (resp.status_code, resp.json()) == (409, {"detail": "token_changed"})  # a client's own probe

    # The same answers, but a copycat the dialog did not warn of (the list changed, or no warning
    # was shown for it): refused too. Warned of, it is the user's choice.
    probed = tokens.token_metadata(user, 31337, token)
    assert tokens.copycat(user, 31337, token, probed["token_symbol"])["token_symbol"] == "tUSD"
    with pytest.raises(AppError) as exc:
        tokens.add_token(user, 31337, token, {**probed, "warned": False})
    assert exc.value.code == "token_changed"
    assert token not in [t["token_address"] for t in client.get(f"{API}/tokens").json()]
    assert tokens.add_token(user, 31337, token, {**probed, "warned": True})["token_symbol"] == "tUSD"

    # Cherokee letters: the unfamiliar-symbol warning.
    other = _deploy_contract(w3, DEV_DEPLOYER_KEY, "CopycatToken", "tUᏚᎠ", "Scam Token")
    shown = {**tokens.token_metadata(user, 31337, other), "warned": False}
    with pytest.raises(AppError) as exc:
        tokens.add_token(user, 31337, other, shown)
    assert exc.value.code == "token_changed"
    assert tokens.add_token(user, 31337, other, {**shown, "warned": True})["token_symbol"] == "tUᏚᎠ"
    # Without what was shown (an API client that did not probe): added as it answers now.
    plain = _deploy_contract(w3, DEV_DEPLOYER_KEY, "CopycatToken", "PLAIN", "Plain Token")
    assert client.post(f"{API}/tokens", json={"chain_id": 31337, "token_address": plain}).status_code == 200


def test_token_metadata(chain_env, client, login, deployed):
    login()
    get = lambda addr, cid=31337: client.get(f"{API}/token/metadata", params={"chain_id": cid, "token_address": addr})  # noqa: E731
    assert get(deployed["tokens"]["tUSD"].lower()).json() == {
        "token_name": "Newbl Test USD", "token_symbol": "tUSD", "token_decimals": 6}
    assert get(ZERO_ADDRESS).json() == {"token_name": "Ether", "token_symbol": "ETH", "token_decimals": 18}
    assert get(Account.create().address).json() == {"detail": "not_a_contract"}
    assert get(ZERO_ADDRESS, cid="abc").json() == {"detail": "invalid_chain_id"}


def test_build_sign_submit_and_activity(api_user, client, chain, w3):
    tusd = chain.tokens[0].token_address
    recipient = Account.create().address
    hashes = []
    for amount in ("1500000", "250"):
        built = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": tusd,
                                                     "to": recipient, "amount": amount})
        assert built.status_code == 200, built.text
        tx = built.json()
        assert (tx["chain_id"], tx["to"], tx["value"]) == ("31337", tusd, "0")
        before = balance_of(w3, tusd, recipient)
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)})
        assert resp.status_code == 200, resp.text
        tx_hash = resp.json()["tx_hash"]
        assert w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)["status"] == 1
        assert balance_of(w3, tusd, recipient) - before == int(amount)
        hashes.append(tx_hash)

    entries = client.get(f"{API}/activities").json()
    assert [e["tx_hash"] for e in entries] == hashes[::-1]  # newest first
    newest, oldest = entries
    assert oldest["summary"] == f"Sent 1.5 tUSD to {recipient.lower()[:6]}…{recipient.lower()[-4:]}"
    assert (oldest["type"], oldest["amount"], oldest["token_symbol"], oldest["token_decimals"],
            oldest["counterparty"], oldest["chain_id"]) == ("transfer", "1500000", "tUSD", 6, recipient.lower(), 31337)
    assert newest["amount"] == "250" and newest["summary"].startswith("Sent 0.00025 tUSD")
    assert {e["status"] for e in entries} == {"ok"}  # refreshed from the receipts


def test_submit_refuses_foreign_sender_and_unknown_chain(api_user, client, w3):
    stranger = Account.create()
    nonce = w3.eth.get_transaction_count(api_user.address)
    base = {"to": stranger.address, "value": 1, "nonce": nonce, "gas": 21_000, "gasPrice": 10**9}
    for signer, chain_id, code in [(stranger, 31337, "sender_mismatch"), (api_user, 5, "unsupported_chain"),
                                   (api_user, None, "unsupported_chain")]:
        raw = "0x" + signer.sign_transaction({**base, "chainId": chain_id}).raw_transaction.hex()
        resp = client.post(f"{API}/tx/submit", json={"raw_tx": raw})
        assert (resp.status_code, resp.json()) == (400, {"detail": code})
    assert client.post(f"{API}/tx/submit", json={"raw_tx": "0xzz"}).json() == {"detail": "invalid_raw_tx"}
    assert w3.eth.get_transaction_count(api_user.address) == nonce  # nothing broadcast
    assert client.get(f"{API}/activities").json() == []


def test_build_validation(api_user, client, chain):
    tusd = chain.tokens[0].token_address
    ok = {"chain_id": 31337, "token_address": tusd, "to": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "amount": "1"}
    for change, code in [
        ({"token_address": ZERO_ADDRESS}, "native_blocked"),
        ({"token_address": ""}, "native_blocked"),
        ({"to": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"}, "bad_checksum"),
        ({"to": "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae"}, "invalid_recipient"),
        ({"amount": "0"}, "invalid_amount"),
        ({"amount": "1.5"}, "invalid_amount"),
        ({"chain_id": 1}, "unsupported_chain"),
        ({"token_address": "0xabc"}, "invalid_address"),
        ({"amount": str(FAUCET_TOKEN_UNITS + 1)}, "estimate_failed"),
    ]:
        resp = client.post(f"{API}/tx/build", json={**ok, **change})
        assert (resp.status_code, resp.json()) == (400, {"detail": code}), change
    assert client.post(f"{API}/tx/build", json={**ok, "to": ok["to"].lower()}).status_code == 200


def test_no_address_yet(chain_env, client, login, chain):
    login("fresh@example.com")
    assert client.get(f"{API}/assets").json() == []
    resp = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": chain.tokens[0].token_address,
                                                "to": Account.create().address, "amount": "1"})
    assert resp.json() == {"detail": "no_address"}


def test_a_chain_that_does_not_answer_gives_no_items(api_user, client, chains_file, deployments_dir, tmp_path,
                                                      monkeypatch):
    from wallet_app.core.config import get_settings

    entries = json.loads(chains_file.read_text())
    dead = {**entries[0], "chain_id": 31338, "chain_name": "Down", "rpc_url": f"http://127.0.0.1:{free_port()}"}
    (tmp_path / "chains.json").write_text(json.dumps(entries + [dead]))
    for f in deployments_dir.glob("deployments-*.json"):
        (tmp_path / f.name).write_text(f.read_text())
    (tmp_path / "deployments-31338.json").write_text((deployments_dir / "deployments-31337.json").read_text())
    monkeypatch.setenv("CHAINS_FILE", str(tmp_path / "chains.json"))
    monkeypatch.setenv("DEPLOYMENTS_DIR", str(tmp_path))
    get_settings.cache_clear()

    assert [c["chain_id"] for c in client.get(f"{API}/chains").json()] == [31337, 31338]
    items = client.get(f"{API}/assets").json()
    assert [(i["chain_id"], i["token_symbol"]) for i in items] == [(31337, "tUSD"), (31337, "tKRW"), (31337, "ETH")]


def test_a_chain_without_the_multicall_contract_still_shows_its_token_balances(api_user, client, deployments_dir,
                                                                              tmp_path, monkeypatch):
    """The chain's multicall address holds no contract on its node (a chains file written for another
    network): the aggregated read answers "0x", and each token is read on its own instead of the
    list failing; the native coin with eth_getBalance, which needs no contract."""
    from wallet_app.core.config import get_settings

    deployed = json.loads((deployments_dir / "deployments-31337.json").read_text())
    (tmp_path / "deployments-31337.json").write_text(json.dumps({**deployed, "multicall": Account.create().address}))
    monkeypatch.setenv("DEPLOYMENTS_DIR", str(tmp_path))
    get_settings.cache_clear()

    items = client.get(f"{API}/assets").json()
    assert [(i["token_symbol"], i["balance"]) for i in items] == [
        ("tUSD", str(FAUCET_TOKEN_UNITS)), ("tKRW", str(FAUCET_TOKEN_UNITS)), ("ETH", str(FAUCET_ETH_WEI))]


@pytest.mark.parametrize("body", ["html", "null-result", "rate-limited"])
def test_a_node_that_answers_nothing_usable_is_the_network_not_reachable(api_user, client, odd_node, deployed,
                                                                        body, tmp_path, chains_file, monkeypatch):
    """The chain's node answers a page, a result of the wrong kind, or a provider's quota refusal:
    every route that reads the chain says rpc_unavailable (its text: "The network is not reachable
    right now. Please try again."), never internal_error; the token list shows no items of it."""
    from wallet_app.core.config import get_settings

    entries = [{**e, "rpc_url": f"{odd_node}/body/{body}"} for e in json.loads(chains_file.read_text())]
    (tmp_path / "chains.json").write_text(json.dumps(entries))
    monkeypatch.setenv("CHAINS_FILE", str(tmp_path / "chains.json"))
    get_settings.cache_clear()
    token, someone = deployed["tokens"]["tUSD"], Account.create().address

    assert client.get(f"{API}/assets").json() == []
    for method, path, body_in in [
        ("GET", f"/token/metadata?chain_id=31337&token_address={someone}", None),
        ("POST", "/tokens", {"chain_id": 31337, "token_address": someone}),
        ("POST", "/tx/build", {"chain_id": 31337, "token_address": token, "to": someone, "amount": "1"}),
        ("GET", f"/payment/available?chain_id=31337&token_address={token}&amount=1&merchant={someone}", None),
    ]:
        r = client.request(method, API + path, json=body_in)  # a refusal no service expected raises no more
        assert (r.status_code, r.json()) == (503, {"detail": "rpc_unavailable"}), (path, r.text)


def _a_transfer(client, chain):
    """(token, recipient, the built transfer of 1.5 tUSD)."""
    tusd, recipient = chain.tokens[0].token_address, Account.create().address
    tx = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": tusd, "to": recipient,
                                              "amount": "1500000"}).json()
    return tusd, recipient, tx


def _answers_lost(chain, *methods):
    """(provider, "_make_request", a replacement) for monkeypatch.setattr: the node does these
    methods, and their answers are lost on the way back."""
    provider = chain_svc.web3_for(chain).provider
    real = provider._make_request

    def make_request(method, data):
        answer = real(method, data)
        if method in methods:
            raise RequestTimedOut("no answer in time")
        return answer

    return provider, "_make_request", make_request


def test_a_send_whose_answer_was_lost_after_the_node_took_it_shows_as_sent(api_user, client, chain, w3,
                                                                           monkeypatch):
    """The send reached the node but its answer did not come back: the user is shown the send (its
    hash, an activity entry), not "try again", which would pay twice."""
    tusd, recipient, tx = _a_transfer(client, chain)
    monkeypatch.setattr(*_answers_lost(chain, "eth_sendRawTransaction"))
    r = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)})
    assert r.status_code == 200, r.text
    tx_hash = r.json()["tx_hash"]
    assert w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)["status"] == 1
    assert [(e["type"], e["tx_hash"]) for e in client.get(f"{API}/activities").json()] == [("transfer", tx_hash)]
    assert balance_of(w3, tusd, recipient) == 1_500_000


def test_the_same_send_submitted_again_is_one_payment_and_one_entry(api_user, client, chain, w3, monkeypatch):
    """The send reached the node, its answer was lost and the node could not say either: "try
    again", and the send is listed as pending (it may be out). The Sign page still holds the same
    transaction (its nonce), so trying again signs the same bytes, which the node already holds
    ("already known"; "nonce too low" once mined). That is the send, shown once: not "rejected",
    which sent the user back to Send for a second payment."""
    tusd, recipient, tx = _a_transfer(client, chain)
    raw = sign(api_user, tx)
    with mining_paused(w3):
        with monkeypatch.context() as m:
            m.setattr(*_answers_lost(chain, "eth_sendRawTransaction", "eth_getTransactionByHash"))
            r = client.post(f"{API}/tx/submit", json={"raw_tx": raw})
        assert (r.status_code, r.json()) == (503, {"detail": "rpc_unavailable"})
        tx_hash = chain_svc.decode_raw_tx(raw).tx_hash
        assert [(e["type"], e["tx_hash"], e["status"]) for e in client.get(f"{API}/activities").json()] == [
            ("transfer", tx_hash, "submitted")]
        again = [client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, tx)}) for _ in range(2)]
    mine(w3)
    mined_then = client.post(f"{API}/tx/submit", json={"raw_tx": raw})
    assert [(r.status_code, r.json()) for r in [*again, mined_then]] == [(200, {"tx_hash": tx_hash})] * 3
    assert w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)["status"] == 1
    assert [(e["type"], e["tx_hash"]) for e in client.get(f"{API}/activities").json()] == [("transfer", tx_hash)]
    assert balance_of(w3, tusd, recipient) == 1_500_000


def _never_sent(chain):
    """(provider, "_make_request", a replacement): eth_sendRawTransaction never reaches the node."""
    provider = chain_svc.web3_for(chain).provider
    real = provider._make_request

    def make_request(method, data):
        if method == "eth_sendRawTransaction":
            raise RequestTimedOut("no answer in time")
        return real(method, data)

    return provider, "_make_request", make_request


def test_a_send_the_node_never_got_is_pending_then_not_sent_and_sent_again(api_user, client, chain, w3,
                                                                            monkeypatch):
    """The broadcast got no answer, and the node does not hold the transaction: its entry (recorded
    before the broadcast) is pending, since it may be on its way; when the node still holds none of
    it DROP_AFTER_SECONDS later, it is shown as dropped, not pending for ever, and still offers a
    speed-up and a cancel (its nonce is free). The same bytes submitted again and taken by the node
    make it pending again, then confirmed."""
    from wallet_app.services import pending

    tusd, recipient, tx = _a_transfer(client, chain)
    raw = sign(api_user, tx)
    tx_hash = chain_svc.decode_raw_tx(raw).tx_hash
    with monkeypatch.context() as m:
        m.setattr(*_never_sent(chain))
        r = client.post(f"{API}/tx/submit", json={"raw_tx": raw})
    assert (r.status_code, r.json()) == (503, {"detail": "rpc_unavailable"})

    def listed():
        return [(e["tx_hash"], e["status"], e["replaceable"]) for e in client.get(f"{API}/activities").json()]

    assert listed() == [(tx_hash, "submitted", True)]
    monkeypatch.setattr(pending, "DROP_AFTER_SECONDS", -1)
    assert listed() == [(tx_hash, "dropped", True)]
    assert client.get(f"{API}/activities").json()[0]["summary"].endswith("(dropped)")
    assert w3.eth.get_transaction_count(api_user.address) == int(tx["nonce"])  # nothing went out
    r = client.post(f"{API}/tx/submit", json={"raw_tx": raw})
    assert (r.status_code, r.json()) == (200, {"tx_hash": tx_hash})
    assert w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)["status"] == 1
    assert listed() == [(tx_hash, "ok", False)]
    assert balance_of(w3, tusd, recipient) == 1_500_000


def test_a_dropped_send_mined_after_all_is_confirmed(api_user, client, chain, w3, monkeypatch):
    """Dropped means our node holds none of it now: another node's pool may still have it and mine
    it. Shown "dropped" for good, the user would send again and pay twice: it is followed on."""
    from wallet_app.services import indexer, pending

    tusd, recipient, tx = _a_transfer(client, chain)
    raw = sign(api_user, tx)
    tx_hash = chain_svc.decode_raw_tx(raw).tx_hash
    with monkeypatch.context() as m:
        m.setattr(*_never_sent(chain))
        assert client.post(f"{API}/tx/submit", json={"raw_tx": raw}).status_code == 503
    monkeypatch.setattr(pending, "DROP_AFTER_SECONDS", -1)
    assert [e["status"] for e in client.get(f"{API}/activities").json()] == ["dropped"]
    w3.eth.send_raw_transaction(raw)  # another node's pool had it: mined
    assert w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)["status"] == 1
    assert [(e["tx_hash"], e["status"]) for e in client.get(f"{API}/activities").json()] == [(tx_hash, "ok")]
    # The background pass follows dropped entries too (one the user never lists again).
    tx2 = client.post(f"{API}/tx/build", json={"chain_id": 31337, "token_address": tusd, "to": recipient,
                                               "amount": "1"}).json()
    raw2 = sign(api_user, tx2)
    hash2 = chain_svc.decode_raw_tx(raw2).tx_hash
    with monkeypatch.context() as m:
        m.setattr(*_never_sent(chain))
        assert client.post(f"{API}/tx/submit", json={"raw_tx": raw2}).status_code == 503
    assert client.get(f"{API}/activities").json()[0]["status"] == "dropped"
    w3.eth.send_raw_transaction(raw2)
    assert w3.eth.wait_for_transaction_receipt(hash2, timeout=30)["status"] == 1
    indexer.refresh_outgoing(chain)
    with get_session() as db:
        assert [r.status for r in db.exec(select(Activity).where(Activity.tx_hash == hash2))] == ["ok"]


def test_a_send_the_node_refuses_leaves_no_entry(api_user, client, chain, w3):
    """Refused by the node (here: more gas than the address can pay), the entry recorded before the
    broadcast is removed: no send is shown that never went out."""
    _tusd, _recipient, tx = _a_transfer(client, chain)
    costly = {**tx, "gas_price": str(10**18)}
    r = client.post(f"{API}/tx/submit", json={"raw_tx": sign(api_user, costly)})
    assert (r.status_code, r.json()) == (400, {"detail": "fee_unaffordable"})  # the node's refusal, in words
    assert client.get(f"{API}/activities").json() == []


def test_faucet_funds_a_new_address_in_dev(chain_env, client, login, chain, w3):
    login("faucet@example.com")
    acct = Account.create()
    assert client.post(f"{API}/me/address", json={"address": acct.address.lower()}).status_code == 200
    deadline = time.monotonic() + 30  # wait for the background faucet, not a fixed sleep
    while w3.eth.get_balance(acct.address) < FAUCET_ETH_WEI and time.monotonic() < deadline:
        time.sleep(0.05)
    assert faucet.wait_idle(30)
    assert w3.eth.get_balance(acct.address) == FAUCET_ETH_WEI
    for t in chain.tokens:
        assert balance_of(w3, t.token_address, acct.address) == FAUCET_TOKEN_UNITS
    # Registering the same address again does not fund it twice.
    assert client.post(f"{API}/me/address", json={"address": acct.address}).status_code == 200
    assert faucet.wait_idle(30)
    assert w3.eth.get_balance(acct.address) == FAUCET_ETH_WEI


def test_faucet_never_runs_outside_development(chain_env, production_env):
    assert faucet.on_address_registered(Account.create().address) is None
    assert faucet.fund_now(Account.create().address) == {}


def test_faucet_failure_does_not_fail_registration(chain_env, client, login, chains_file, deployments_dir,
                                                   tmp_path, monkeypatch):
    from wallet_app.core.config import get_settings

    dead = [{**e, "rpc_url": f"http://127.0.0.1:{free_port()}"} for e in json.loads(chains_file.read_text())]
    (tmp_path / "dead.json").write_text(json.dumps(dead))
    monkeypatch.setenv("CHAINS_FILE", str(tmp_path / "dead.json"))
    get_settings.cache_clear()
    login("unlucky@example.com")
    acct = Account.create()
    resp = client.post(f"{API}/me/address", json={"address": acct.address})
    assert resp.status_code == 200 and resp.json()["address"] == acct.address.lower()
    assert faucet.wait_idle(30)
    assert faucet.fund_now(acct.address) == {}  # every chain failed, nothing raised
    assert faucet.is_loopback_rpc("http://127.0.0.1:8545") and not faucet.is_loopback_rpc("https://rpc.example.org")
