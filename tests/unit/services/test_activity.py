"""The activity list's pure parts: decoding token calls and the English summary (no chain)."""

import pytest
from eth_account import Account

from wallet_app.models import Activity
from wallet_app.services import activity
from wallet_app.services.activity import activity_summary, decode_token_call
from wallet_app.services.chain import ERC20, contract


def test_decode_token_call():
    erc20 = contract(ERC20)
    to = Account.create().address
    assert decode_token_call(erc20.encode_abi("transfer", [to, 123])) == ("transfer", to.lower(), 123)
    assert decode_token_call(erc20.encode_abi("approve", [to, 5])) == ("approve", to.lower(), 5)
    assert decode_token_call(erc20.encode_abi("balanceOf", [to])) is None
    assert decode_token_call("0x") is None
    # Bytes after the arguments (refused on /sign): still the call the token runs, recorded as it.
    assert decode_token_call(erc20.encode_abi("transfer", [to, 1]) + "00") == ("transfer", to.lower(), 1)
    unlimited = 2**256 - 1
    assert decode_token_call(erc20.encode_abi("approve", [to, unlimited]) + "00") == ("approve", to.lower(), unlimited)
    assert decode_token_call(erc20.encode_abi("transfer", [to, 1])[:-2]) is None


@pytest.mark.parametrize("fields,summary", [
    (dict(type="transfer", amount="1500000", token_decimals=6, token_symbol="tUSD", status="ok"),
     "Sent 1.5 tUSD to 0xabcd…1234"),
    (dict(type="transfer", amount="1234567891", token_decimals=6, token_symbol="tUSD", status="submitted"),
     "Sent 1,234.567891 tUSD to 0xabcd…1234 (pending)"),
    (dict(type="approve", amount="1", token_decimals=0, token_symbol="X", status="failed"),
     "Approved 1 X for 0xabcd…1234 (failed)"),
    (dict(type="call", status="ok"), "Call with 0xabcd…1234"),
    (dict(type="receive", amount="25", token_decimals=1, token_symbol="T", status="ok"),
     "Received 2.5 T from 0xabcd…1234"),
])
def test_activity_summary(fields, summary):
    row = Activity(user_id=1, counterparty="0xabcd" + "0" * 32 + "1234", **fields)
    assert activity_summary(row) == summary


# ---------------------------------------------------------------- recipient safety (issue 11 item 4)

_USED = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"


@pytest.mark.parametrize("address, known, risk", [
    (_USED, [_USED], None),
    (_USED.upper().replace("0X", "0x"), [_USED], None),  # case does not matter
    ("0x70997970C51812dc3A010C7d01b50e0d17dc79C8", [None, _USED], None),
    # Same first 4 and last 4 hex digits, another address: poisoning.
    ("0x7099" + "0" * 32 + "79c8", [_USED], "lookalike"),
    ("0x7099" + "f" * 32 + "79C8", ["0x" + "11" * 20, _USED], "lookalike"),
    # One digit off at either end: just a new address.
    ("0x7098" + "0" * 32 + "79c8", [_USED], "first_time"),
    ("0x7099" + "0" * 32 + "79c9", [_USED], "first_time"),
    ("0x7099" + "0" * 32 + "79c8", [], "first_time"),
    ("0x" + "11" * 20, [None], "first_time"),
])
def test_recipient_risk(address, known, risk):
    assert activity.recipient_risk(address, known) == risk


_TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3"


@pytest.mark.parametrize("address, known, risk", [
    # The token's own contract (a pasted token address): tokens sent there are as good as burnt.
    (_TOKEN, [], "token_contract"),
    (_TOKEN.upper().replace("0X", "0x"), [_TOKEN], "token_contract"),  # even once sent to before
    (_USED, [_USED], None),
    ("0x" + "11" * 20, [], "first_time"),
])
def test_recipient_risk_of_a_token_contract(address, known, risk):
    assert activity.recipient_risk(address, known, ["0x5FbDB2315678afecb367f032d93F642f64180aa3"]) == risk
    assert activity.RECIPIENT_NOTES.get(risk or "", "") in ("", "recipient_first_time", "recipient_token_contract")


def test_received_transfers_do_not_push_the_users_recipients_out_of_the_history(db):
    """Address poisoning: more receive entries than the activity list shows (dust from a look-alike,
    each costs the attacker a cheap transfer) left the user's own recipients out of the history the
    look-alike check compares with, so the poisoned address was only 'first_time'."""
    from wallet_app.services import accounts

    user = accounts.login_user("sub-flood", "flood@example.com", "en")
    accounts.set_address(user.id, "0x" + "ab" * 20)
    activity.record_activity(user.id, "transfer", chain_id=31337, counterparty=_USED, amount=5)
    lookalike = "0x7099" + "0" * 32 + "79c8"
    for _ in range(activity.ACTIVITY_LIMIT):
        activity.record_activity(user.id, "receive", chain_id=31337, counterparty=lookalike, amount=1, status="ok")
    assert activity.known_counterparties(user.id) == [_USED]
    assert activity.recipient_risk(lookalike, activity.known_counterparties(user.id)) == "lookalike"


def test_the_list_keeps_the_users_own_entries_and_every_pending_one_among_many_received(db):
    """The activity list: the user's own newest ACTIVITY_LIMIT entries, the newest ACTIVITY_LIMIT
    transfers received, and a pending send however many newer entries there are (its Speed up and
    Cancel), newest first. Before, the newest ACTIVITY_LIMIT of all: a flood of dust left only it."""
    from wallet_app.services import accounts

    user = accounts.login_user("sub-list", "list@example.com", "en")
    accounts.set_address(user.id, "0x" + "ab" * 20)
    fields = {"from": "0x" + "ab" * 20, "to": _USED, "data": "0x", "value": "1", "gas_limit": "21000",
              "gas_price": "1"}
    stuck = activity.record_activity(user.id, "transfer", chain_id=31337, tx_hash="0x" + "01" * 32, nonce=0,
                                     counterparty=_USED, amount=1, data=fields)
    sent = [activity.record_activity(user.id, "transfer", chain_id=31337, counterparty=_USED, amount=1, status="ok")
            for _ in range(activity.ACTIVITY_LIMIT)]
    received = [activity.record_activity(user.id, "receive", chain_id=31337, counterparty=_USED, amount=1,
                                         status="ok") for _ in range(activity.ACTIVITY_LIMIT + 5)]
    shown = activity.activities(user.id, refresh=False)
    assert [e["id"] for e in shown] == [*received[:4:-1], *sent[::-1], stuck]  # ids follow the time here
    assert shown[-1]["replaceable"] is True


def test_the_receipt_reads_of_a_listing_are_rate_limited_the_listing_is_not(db, monkeypatch, request):
    """Each listing with a pending send reads the chain node: RATE_LIMIT_ACTIVITY_REFRESH per user;
    over it the entries are listed as stored. A list with nothing pending spends nothing."""
    from wallet_app.core.config import get_settings
    from wallet_app.services import accounts, pending

    monkeypatch.setenv("RATE_LIMIT_ACTIVITY_REFRESH", "2/minute")
    get_settings.cache_clear()
    request.addfinalizer(get_settings.cache_clear)  # after monkeypatch's own undo: the next test's settings
    refreshed: list[list[int]] = []
    monkeypatch.setattr(pending, "refresh", lambda rows, limit: refreshed.append([r.id for r in rows]))
    user = accounts.login_user("sub-refresh", "refresh@example.com", "en")
    accounts.set_address(user.id, "0x" + "ab" * 20)
    done = activity.record_activity(user.id, "transfer", chain_id=31337, tx_hash="0x" + "02" * 32,
                                    counterparty=_USED, amount=1, status="ok")
    for _ in range(3):
        assert [e["id"] for e in activity.activities(user.id)] == [done]
    assert refreshed == []
    sent = activity.record_activity(user.id, "transfer", chain_id=31337, tx_hash="0x" + "03" * 32,
                                    counterparty=_USED, amount=1)
    for _ in range(3):
        assert [e["id"] for e in activity.activities(user.id)] == [sent, done]
    assert refreshed == [[sent, done]] * 2
