"""The payment link's reading (specification section 5) and the Pay payload (pure parts of state/payment.py)."""

from __future__ import annotations

import dataclasses
import json
import time
from types import SimpleNamespace
from urllib.parse import urlencode

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data
from sqlalchemy.exc import OperationalError
from web3.exceptions import Web3RPCError

from tests.conftest import run_async, run_unlocked_as
from wallet_app.errors import AppError
from wallet_app.i18n import CATALOGUES
from wallet_app.models import User
from wallet_app.services import chain, payments
from wallet_app.services.chain import ChainConfig
from wallet_app.state import payment as payment_state
from wallet_app.state.payment import (
    STALE_FLOW_SECONDS,
    PaymentState,
    Step,
    amount_units,
    pin_payload_for_pay,
    pin_payload_for_permit,
    read_link,
    read_permit_result,
)

RELAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
MERCHANT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
CHAIN = ChainConfig(31337, "Anvil", "http://127.0.0.1:1", "0x" + "11" * 20, RELAYER, "ETH", "Ether", 18, None, ())


@pytest.fixture(autouse=True)
def no_history(monkeypatch):
    """The page load's reads for the merchant's note (no database here): no history, no tokens."""
    monkeypatch.setattr(payment_state.activity, "known_counterparties", lambda user: [])
    monkeypatch.setattr(payment_state.tokens, "user_tokens", lambda user: [])
    monkeypatch.setattr(payment_state.payments, "recent_payment", lambda *a: None)  # nothing paid a moment ago


def link(**fields):
    base = {"merchant": MERCHANT, "chain_id": "31337", "token": TOKEN, "amount": "1.5"}
    return {k: v for k, v in {**base, **fields}.items() if v is not None}


@pytest.mark.parametrize("params, problem", [
    (link(merchant=None), "pay_merchant_missing"),
    (link(merchant="  "), "pay_merchant_missing"),
    (link(merchant="0x12"), "err_invalid_merchant"),
    (link(merchant="0x" + "0" * 40), "err_invalid_merchant"),
    (link(chain_id=None), "pay_select_network"),
    (link(chain_id="1"), "err_unsupported_chain"),
    (link(chain_id="0x7a69"), "err_unsupported_chain"),
    (link(token=None), "pay_select_token"),
    (link(token="0x" + "g" * 40), "err_invalid_token"),
    (link(amount=" "), "pay_enter_amount"),
    (link(), ""),
])
def test_read_link_first_problem(params, problem):
    got = read_link(params, [CHAIN])
    assert got.problem == problem
    assert problem == "" or problem in CATALOGUES["ko"]


def test_read_link_refuses_a_payment_to_oneself():
    assert read_link(link(), [CHAIN], MERCHANT.lower()).problem == "err_merchant_is_payer"
    assert read_link(link(chain_id=None), [CHAIN], MERCHANT).problem == "err_merchant_is_payer"  # merchant first
    assert read_link(link(), [CHAIN], TOKEN).problem == ""
    assert CATALOGUES["en"]["err_merchant_is_payer"] == "The merchant address is your own address."


def test_read_link_fields():
    got = read_link(link(merchant=MERCHANT.lower(), chain_id=" 31337 "), [CHAIN])
    assert (got.merchant, got.chain, got.token, got.amount) == (MERCHANT, CHAIN, TOKEN, "1.5")


@pytest.mark.parametrize("amount, decimals, expected", [
    ("1.5", None, (0, "pay_decimals_missing")),
    ("1.2.3", 6, (0, "pay_invalid_amount")),
    ("-1", 6, (0, "pay_invalid_amount")),
    ("1e3", 6, (0, "pay_invalid_amount")),
    ("0.0000001", 6, (0, "pay_invalid_amount")),
    ("0", 6, (0, "pay_invalid_amount")),
    ("1.5", 6, (1_500_000, "")),
    (" 2 ", 0, (2, "")),
])
def test_amount_units(amount, decimals, expected):
    assert amount_units(amount, decimals) == expected


def test_steps_are_distinct_and_named():
    assert len({s.value for s in Step}) == len(Step)
    assert Step.IDLE.value == "idle"


def test_pay_payload_is_what_the_server_verifies():
    """The browser signs exactly {domain, types: {Pay}, message} of services.payments.pay_typed_data."""
    acct = Account.create()
    payload = json.loads(pin_payload_for_pay(31337, RELAYER, MERCHANT, TOKEN, acct.address.lower(), 1_500_000,
                                             "0x" + "ab" * 32, 1_900_000_000))
    assert payload["domain"] == {"name": "NewblPayment2", "version": "1", "chainId": 31337,
                                 "verifyingContract": RELAYER}
    assert list(payload["types"]) == ["Pay"]
    assert payload["message"]["from"] == acct.address and payload["message"]["amount"] == "1500000"
    message = {**payload["message"], "amount": 1_500_000}
    signable = encode_typed_data(domain_data=payload["domain"], message_types=payload["types"], message_data=message)
    sig = Account.sign_message(signable, acct.key).signature
    assert payments.recover_pay_signer(31337, RELAYER, message, bytes(sig)) == acct.address


def test_permit_payload_takes_the_payment_deadline_and_is_what_the_server_verifies():
    """sign_pay_permit's {permit, pay}: the quote's Permit with the page's deadline; a signature of
    that permit recovers in services.payments as execute checks it."""
    acct = Account.create()
    domain = chain.PermitDomain("Newbl Test USD", "1", 31337, TOKEN)
    quote_permit = payments.permit_typed_data(domain, {"owner": acct.address, "spender": RELAYER, "value": "7",
                                                       "nonce": "3", "deadline": 1_800_000_000})
    pay = pin_payload_for_pay(31337, RELAYER, MERCHANT, TOKEN, acct.address, 7, "0x" + "ab" * 32, 1_900_000_000)
    payload = json.loads(pin_payload_for_permit(quote_permit, 1_900_000_000, pay))
    assert payload["pay"] == json.loads(pay)
    permit = payload["permit"]
    assert permit["domain"] == domain.as_typed() and list(permit["types"]) == ["Permit"]
    assert permit["message"] == {"owner": acct.address, "spender": RELAYER, "value": "7", "nonce": "3",
                                 "deadline": 1_900_000_000}
    message = {**permit["message"], "value": 7, "nonce": 3}
    signable = encode_typed_data(domain_data=permit["domain"], message_types=permit["types"], message_data=message)
    sig = Account.sign_message(signable, acct.key).signature
    assert payments.recover_typed_signer(payments.permit_typed_data(domain, message), sig) == acct.address


@pytest.mark.parametrize("result, expected", [
    ('{"signature": "0xaa", "permit_signature": "0xbb"}', ("0xaa", "0xbb")),
    ('{"signature": "0xaa"}', None),
    ('{"signature": 1, "permit_signature": "0xbb"}', None),
    ('["0xaa", "0xbb"]', None),
    ("0xaa", None),
    ('{"signature": "0x' + "a" * 300 + '", "permit_signature": "0xbb"}', None),
])
def test_read_permit_result(result, expected):
    assert read_permit_result(result) == expected


# ---------------------------------------------------------------- a flow that fails unexpectedly

USER = User(id=1, google_sub="1" * 21, email="a@example.com", locale="en", address="0x" + "ab" * 20)
NOT_REACHABLE = "The network is not reachable right now. Please try again."


@pytest.fixture
def flow(monkeypatch):
    """A PaymentState outside Reflex (its lock a no-op, no page), signed in as USER, whose link
    was read: what a background step does to it can be looked at."""

    run_unlocked_as(monkeypatch, PaymentState, USER)
    monkeypatch.setattr(PaymentState, "router", property(lambda self: SimpleNamespace(
        url=SimpleNamespace(path="/payment", query_parameters={}, query=""))), raising=False)
    monkeypatch.setattr(payment_state.accounts, "hit", lambda *a: None)
    s = PaymentState(_reflex_internal_init=True)
    s.address, s._units, s.chain_id, s.token, s.merchant, s.loaded = USER.address, 5, 31337, TOKEN, MERCHANT, True
    return s


def _raises(error):
    def call(*args, **kwargs):
        raise error
    return call


def test_a_quote_failing_unexpectedly_stops_the_flow_with_its_message(flow, monkeypatch):
    """A provider's rate limit is no AppError: run_quote died with `running` set, the overlay stayed
    up, and load and submit waited for a flow that was gone, for good (found by an audit)."""
    monkeypatch.setattr(payment_state.payments, "quote", _raises(Web3RPCError("429 Too Many Requests")))
    run_async(PaymentState.submit.fn(flow))
    assert (flow.running, flow._step) == (True, Step.QUOTING)
    run_async(PaymentState.run_quote.fn(flow))
    assert (flow.running, flow._step, flow.dialog_open) == (False, Step.IDLE, True)
    assert flow.dialog_texts["en"] == NOT_REACHABLE


def test_a_status_read_failing_after_execute_says_still_pending(flow, monkeypatch):
    """Executed, the payment may be on its way: not an error, and never the overlay for good."""
    monkeypatch.setattr(payment_state.payments, "execute", lambda *a: "0x" + "33" * 32)

    async def status(*args):
        raise OperationalError("SELECT", {}, Exception("database is locked"))

    monkeypatch.setattr(payment_state.payments, "wait_status", status)
    flow.running, flow._step, flow._started_at = True, Step.PAY_SENT, time.time()
    run_async(PaymentState.send_pay.fn(flow, signature="0x" + "00" * 65, permit_signature=""))  # as Reflex calls it
    assert (flow.running, flow._step, flow.dialog_open) == (False, Step.IDLE, True)
    assert flow.dialog_texts["en"] == CATALOGUES["en"]["pay_still_pending"]


@pytest.mark.parametrize("started_ago, kept", [(60, True), (STALE_FLOW_SECONDS + 1, False)])
def test_a_page_load_starts_afresh_after_a_flow_its_worker_lost(flow, monkeypatch, started_ago, kept):
    """A worker restarted under a running flow: its state says running for good. A load keeps a
    flow that may still run, and starts afresh after one long over."""
    monkeypatch.setattr(payment_state.chains, "get_chains", lambda: [])
    flow.running, flow._step, flow._started_at = True, Step.PAY_POLLING, time.time() - started_ago
    run_async(PaymentState.load.fn(flow))
    assert (flow.running, flow._step) == ((True, Step.PAY_POLLING) if kept else (False, Step.IDLE))


@pytest.mark.parametrize("token, counted", [(TOKEN, []), ("0x" + "5a" * 20, ["token_metadata"])])
def test_a_links_token_read_from_the_chain_counts_as_a_metadata_lookup(flow, monkeypatch, token, counted):
    """A payment link's token that is not a configured one is read from the chain on every page
    load, which any socket can send 20 times a second: counted against /token/metadata's limit,
    which it got round (found by an audit)."""
    configured = dataclasses.replace(CHAIN, tokens=(chain.TokenInfo(TOKEN, "tUSD", "Test USD", 6),))
    hits = []
    monkeypatch.setattr(payment_state.accounts, "hit", lambda kind, user: hits.append(kind))
    monkeypatch.setattr(payment_state.chains, "get_chains", lambda: [configured])
    monkeypatch.setattr(payment_state.tokens, "token_info", lambda user, c, address: None)
    params = {"merchant": MERCHANT, "chain_id": "31337", "token": token, "amount": "1"}
    monkeypatch.setattr(PaymentState, "router", property(lambda self: SimpleNamespace(
        url=SimpleNamespace(path="/payment", query_parameters=params, query=urlencode(params)))), raising=False)
    run_async(PaymentState.load.fn(flow))
    assert hits == counted


OWN = "0x" + "0e" * 20  # a token of the user's list
PAYABLE = "0x" + "0f" * 20  # on the chain's payment allow-list only (as tEUR on the dev chain)
STRANGER = "0x" + "5a" * 20


@pytest.mark.parametrize("token, shown", [
    (TOKEN, "tUSD"),
    (OWN, "USDC"),
    (PAYABLE, "USDC"),
    (STRANGER, "0x5a5A…5A5A"),  # checksummed, as /sign shows it
])
def test_a_links_token_not_listed_is_named_by_its_address(flow, monkeypatch, token, shown):
    """A link's token neither the chain's (configured, allow-listed for payments) nor in the user's
    list was named by its own symbol(), any it likes ("USDC"): as /sign names it, by its shortened
    address (found by an audit; the quote refuses it anyway)."""
    configured = dataclasses.replace(
        CHAIN, tokens=(chain.TokenInfo(TOKEN, "tUSD", "Test USD", 6),), payment_tokens=(TOKEN, PAYABLE))
    monkeypatch.setattr(payment_state.chains, "get_chains", lambda: [configured])
    claims = lambda user, c, address: (  # noqa: E731
        configured.tokens[0] if address == TOKEN else chain.TokenInfo(address, "USDC", "USD Coin", 6)
    )
    monkeypatch.setattr(payment_state.tokens, "token_info", claims)
    monkeypatch.setattr(payment_state.tokens, "user_tokens", lambda user: [{"chain_id": 31337, "token_address": OWN}])
    params = {"merchant": MERCHANT, "chain_id": "31337", "token": token, "amount": "1"}
    monkeypatch.setattr(PaymentState, "router", property(lambda self: SimpleNamespace(
        url=SimpleNamespace(path="/payment", query_parameters=params, query=urlencode(params)))), raising=False)
    run_async(PaymentState.load.fn(flow))
    assert (flow.token_symbol, flow.token_decimals, flow.units) == (shown, 6, "1000000")


def test_the_approve_step_sends_only_the_quotes_approve(flow, monkeypatch):
    """The PIN dialog signs the quote's approve; the step broadcast whatever signed transaction it
    was handed (found by an audit). Checked field by field as /sign checks its link's."""
    signer = Account.create()
    approve = {"chain_id": "31337", "to": TOKEN, "data": "0x095ea7b3" + "00" * 64, "value": "0", "nonce": "3",
               "gas_limit": "60000", "gas_price": "1000000000"}

    def signed(**changes) -> str:
        tx = {**approve, **changes}
        fields = {"chainId": int(tx["chain_id"]), "to": tx["to"], "data": tx["data"], "value": int(tx["value"]),
                  "nonce": int(tx["nonce"]), "gas": int(tx["gas_limit"]), "gasPrice": int(tx["gas_price"])}
        return "0x" + signer.sign_transaction(fields).raw_transaction.hex()

    sent = []
    monkeypatch.setattr(payment_state.transfers, "submit_signed",
                        lambda user, raw: sent.append(raw) or {"tx_hash": "0x1"})
    monkeypatch.setattr(payment_state, "MAX_POLLS", 0)  # no polling of the allowance here
    for raw, ok in [(signed(to=MERCHANT), False), (signed(value="1"), False), (signed(), True)]:
        sent.clear()
        flow.running, flow._step, flow._approve_tx = True, Step.APPROVE_SENT, approve
        run_async(PaymentState.send_approve.fn(flow, raw_tx=raw))
        assert sent == ([raw] if ok else [])
        if not ok:
            assert (flow.running, flow.dialog_texts["en"]) == (False, CATALOGUES["en"]["err_sign_tx_mismatch"])


# ---------------------------------------------------------------- the tab's state across page loads

M2 = "0x" + "2b" * 20
TUSD = dataclasses.replace(CHAIN, tokens=(chain.TokenInfo(TOKEN, "tUSD", "Test USD", 6),))
QUOTE = {"payment_id": "0x" + "ab" * 32, "verifying_contract": RELAYER, "available": True}


TAB_LINK: dict = {}  # the link the tab fixture's page loads read


def open_link(tab, **fields):
    TAB_LINK.clear()
    TAB_LINK.update(link(**fields))
    run_async(PaymentState.load.fn(tab))


@pytest.fixture
def tab(flow, monkeypatch):
    """The flow fixture whose page loads (open_link) read TAB_LINK: a tab opening links."""
    params = TAB_LINK
    monkeypatch.setattr(PaymentState, "router", property(lambda self: SimpleNamespace(
        url=SimpleNamespace(path="/payment", query_parameters=params, query=urlencode(params)))), raising=False)
    monkeypatch.setattr(payment_state.chains, "get_chains", lambda: [TUSD])
    monkeypatch.setattr(payment_state.tokens, "token_info", lambda user, c, address: TUSD.tokens[0])
    monkeypatch.setattr(payment_state.payments, "quote", lambda *a: dict(QUOTE))
    return flow


def _pay_pin_for(tab, **fields):
    open_link(tab, **fields)
    run_async(PaymentState.submit.fn(tab))
    run_async(PaymentState.run_quote.fn(tab))
    assert (tab.running, tab._step, tab.pin_open) == (True, Step.PAY_PIN, True)


def test_a_load_of_another_link_drops_a_flow_that_sent_nothing(tab):
    """Pay on link L1 (PIN dialog open), Back, open L2: the page kept L1's merchant and its PIN
    dialog, and the PIN paid L1's merchant (found by an audit). Nothing was sent: L2 replaces it."""
    _pay_pin_for(tab, merchant=MERCHANT, amount="1.5")
    open_link(tab, merchant=M2, amount="3")
    assert (tab.running, tab._step, tab.pin_open, tab.pin_payload) == (False, Step.IDLE, False, "")
    assert (tab.merchant, tab.units, tab.loaded) == (payment_state.checksum(M2), "3000000", True)
    tab.pin_done("0x" + "00" * 65)  # the dropped dialog's late answer
    assert (tab.running, tab._step) == (False, Step.IDLE)


def test_a_load_of_the_same_link_keeps_the_flow(tab):
    _pay_pin_for(tab, merchant=MERCHANT, amount="1.5")
    open_link(tab, merchant=MERCHANT, amount="1.5", lang="ko")  # a reconnect; the language is no new link
    assert (tab.running, tab._step, tab.pin_open, tab.merchant) == (True, Step.PAY_PIN, True, MERCHANT)


def test_a_quote_answered_after_its_flow_was_dropped_opens_nothing(tab, monkeypatch):
    open_link(tab, merchant=MERCHANT, amount="1.5")
    run_async(PaymentState.submit.fn(tab))

    def quote_while_l2_opens(*args):
        open_link(tab, merchant=M2, amount="3")
        return dict(QUOTE)

    monkeypatch.setattr(payment_state.payments, "quote", quote_while_l2_opens)
    run_async(PaymentState.run_quote.fn(tab))
    assert (tab.running, tab.pin_open, tab.merchant) == (False, False, payment_state.checksum(M2))


@pytest.mark.parametrize("step", [Step.APPROVE_POLLING, Step.PAY_SENT, Step.PAY_POLLING])
def test_a_load_of_another_link_keeps_a_flow_that_sent_something(tab, step):
    """Sent for L1: its progress stays (with L1's details), and Pay waits for a load after it."""
    _pay_pin_for(tab, merchant=MERCHANT, amount="1.5")
    tab._step, tab.pin_open = step, False
    open_link(tab, merchant=M2, amount="3")
    assert (tab.running, tab._step, tab.merchant, tab.units, tab.loaded) == (True, step, MERCHANT, "1500000", False)


def _paid(tab, monkeypatch, status="ok"):
    monkeypatch.setattr(payment_state.payments, "execute", lambda *a: QUOTE["payment_id"])

    async def wait_status(*args):
        return {"status": status}

    monkeypatch.setattr(payment_state.payments, "wait_status", wait_status)
    _pay_pin_for(tab, merchant=MERCHANT, amount="1.5")
    tab.pin_done("0x" + "00" * 65)
    run_async(PaymentState.send_pay.fn(tab, signature="0x" + "00" * 65, permit_signature=""))
    assert (tab.running, tab._step) == (False, Step.IDLE)


def test_a_load_of_a_paid_link_shows_the_payment_not_pay(tab, monkeypatch):
    """Paid, the success alert rides the redirect to /activity. A socket that dropped meanwhile
    loses both; its reconnect loaded the link afresh with Pay enabled, and a second PIN paid
    again (found by an audit). So does Back from /activity. The tab remembers the payment."""
    _paid(tab, monkeypatch)
    assert (tab._done_payment_id, tab._done_outcome) == (QUOTE["payment_id"], "pay_done")
    tab.dialog_open = False  # the reconnect's check_session closed the alert meant for /activity
    open_link(tab, merchant=MERCHANT, amount="1.5")
    assert (tab.finished, tab.dialog_open) == (True, True)
    assert (tab.dialog_ok_route, tab.dialog_route) == ("/activity", "/payment")
    assert tab.dialog_texts["en"] == CATALOGUES["en"]["pay_done"]
    tab.dialog_open = False
    run_async(PaymentState.submit.fn(tab))  # Pay, were it pressed anyway
    assert (tab.running, tab._step, tab.dialog_open) == (False, Step.IDLE, True)
    open_link(tab, merchant=MERCHANT, amount="3")  # another link is payable
    assert (tab.finished, tab.loaded) == (False, True)
    run_async(PaymentState.submit.fn(tab))
    assert (tab.running, tab._step) == (True, Step.QUOTING)


@pytest.mark.parametrize("status, alert, redirect", [
    ("ok", "pay_done", "/activity"), ("failed", "pay_failed", None), ("pending", "pay_still_pending", None)])
@pytest.mark.parametrize("left", [False, True])
def test_a_payment_that_ends_after_the_page_was_left_says_nothing_there(tab, monkeypatch, status, alert, redirect,
                                                                       left):
    """The person paid, then left /payment (Back, a tap on a link) while the payment settled: its
    redirect to /activity took the page they were on (/send with its form, /sign with its PIN
    dialog) and its alert showed there. Read after the wait, the tab's page (the state's router,
    its last event's) decides: on /payment as before; elsewhere nothing, the outcome remembered."""
    monkeypatch.setattr(payment_state.payments, "execute", lambda *a: QUOTE["payment_id"])
    monkeypatch.setattr(payment_state, "MAX_POLLS", 1)
    monkeypatch.setattr(payment_state, "POLL_SECONDS", 0)
    page = {"path": "/payment"}

    async def wait_status(*args):
        if left:
            page["path"] = "/send"  # the tab's next page loaded while the payment settled
        return {"status": status}

    monkeypatch.setattr(payment_state.payments, "wait_status", wait_status)
    params = TAB_LINK
    monkeypatch.setattr(PaymentState, "router", property(lambda self: SimpleNamespace(
        url=SimpleNamespace(path=page["path"], query_parameters=params, query=urlencode(params)))), raising=False)
    _pay_pin_for(tab, merchant=MERCHANT, amount="1.5")
    tab.pin_done("0x" + "00" * 65)
    done = run_async(PaymentState.send_pay.fn(tab, signature="0x" + "00" * 65, permit_signature=""))
    assert (tab.running, tab._step) == (False, Step.IDLE)
    assert tab._done_outcome == ("" if status == "failed" else alert)
    assert tab.dialog_open is not left
    if not left:
        assert tab.dialog_texts["en"] == CATALOGUES["en"][alert]
    assert (done is not None) == (redirect is not None and not left)
    if done is not None:
        assert '"/activity"' in str(done.args), done  # rx.redirect(routes.ACTIVITY)


def test_a_failed_payment_may_be_tried_again(tab, monkeypatch):
    _paid(tab, monkeypatch, status="failed")
    open_link(tab, merchant=MERCHANT, amount="1.5")
    assert not tab.finished
    run_async(PaymentState.submit.fn(tab))
    assert tab.running


PAID_RECENTLY = {
    "en": "You paid this merchant the same amount 3 min ago. To pay again, tap Pay once more.",
    "ko": "3분 전에 이 가맹점에 같은 금액을 결제했습니다. 다시 결제하려면 결제하기를 한 번 더 누르세요.",
}


def test_a_link_paid_a_moment_ago_is_announced_once_then_paid(tab, monkeypatch):
    """A link without a ref paid in another tab or on another device (this tab remembers only its
    own payments): Pay says so first; the next Pay goes ahead, and a newer payment is said again."""
    asked = []
    recent = ("0x" + "aa" * 32, 3)
    monkeypatch.setattr(payment_state.payments, "recent_payment", lambda *a: asked.append(a[1:]) or recent)
    open_link(tab, merchant=MERCHANT, amount="1.5")
    run_async(PaymentState.submit.fn(tab))
    assert asked == [(31337, MERCHANT, TUSD.tokens[0].token_address, 1_500_000)]
    assert (tab.running, tab._step, tab.dialog_open, tab.dialog_title) == (False, Step.IDLE, True, "notice")
    assert tab.dialog_texts == PAID_RECENTLY
    tab.dialog_open = False
    run_async(PaymentState.submit.fn(tab))
    assert (tab.running, tab._step, tab.dialog_open) == (True, Step.QUOTING, False)
    tab._reset_flow()
    recent = ("0x" + "bb" * 32, 1)  # paid once more since (in yet another tab)
    run_async(PaymentState.submit.fn(tab))
    assert (tab.running, tab.dialog_open) == (False, True)
    assert tab.dialog_texts["en"] == PAID_RECENTLY["en"].replace("3 min", "1 min")


def test_a_link_with_a_ref_or_a_failing_read_is_not_held(tab, monkeypatch):
    """A ref is paid once per payer (the server refuses it: payment_ref_used); a read that fails
    holds nothing back (the quote meets the same trouble and says so)."""
    monkeypatch.setattr(payment_state.payments, "recent_payment", _raises(AssertionError("not asked")))
    open_link(tab, merchant=MERCHANT, amount="1.5", ref="0x" + "cd" * 32)
    run_async(PaymentState.submit.fn(tab))
    assert (tab.running, tab._step) == (True, Step.QUOTING)
    tab._reset_flow()
    monkeypatch.setattr(payment_state.payments, "recent_payment", _raises(OperationalError("s", {}, Exception())))
    open_link(tab, merchant=MERCHANT, amount="1.5")
    run_async(PaymentState.submit.fn(tab))
    assert (tab.running, tab._step, tab.dialog_open) == (True, Step.QUOTING, False)


LOOKALIKE = "0x90F7" + "0" * 32 + "b906"  # MERCHANT's first and last 4 hex digits


@pytest.mark.parametrize("merchant, known, tokens, note", [
    (MERCHANT, [], [], ""),  # a first payment to a merchant: no note (most are paid once)
    (MERCHANT, [MERCHANT.lower()], [], ""),
    (LOOKALIKE, [MERCHANT.lower(), None], [], "recipient_lookalike"),  # address poisoning
    (LOOKALIKE.upper().replace("0X", "0x"), [MERCHANT], [], "recipient_lookalike"),
    (TOKEN, [], [TOKEN.lower()], "recipient_token_contract"),  # tokens sent to a token are lost
    (TOKEN.lower(), [TOKEN], [TOKEN], "recipient_token_contract"),
    ("", [MERCHANT], [TOKEN], ""),
])
def test_merchant_note_key(merchant, known, tokens, note):
    assert payment_state.merchant_note_key(merchant, known, tokens) == note


# ---------------------------------------------------------------- the Pay deadline runs out in the PIN dialog

EXPIRED = {"en": "The payment request has expired. Please try again.",
           "ko": "결제 요청이 만료되었습니다. 다시 시도해 주세요."}


def test_a_pin_confirmed_in_the_deadlines_last_minute_says_expired(tab, monkeypatch):
    """The PIN dialog opened with the Pay deadline 5 minutes after the server's now; confirmed 4.5
    minutes later, execute refuses the deadline as too near (a minute at least is left for the
    relayed transaction: tests/api/test_payments.py, invalid_deadline). The time ran out: the
    page said 'The payment deadline is invalid.', as if the request had been made up."""
    _pay_pin_for(tab)
    executed = []

    def execute(user, chain_id, merchant, token, units, payment_id, deadline, signature, permit):
        executed.append(deadline)
        raise AppError("invalid_deadline", "deadline too near: the relayed transaction needs time")

    monkeypatch.setattr(payment_state.payments, "execute", execute)
    PaymentState.pin_done.fn(tab, "0x" + "00" * 65)
    run_async(PaymentState.send_pay.fn(tab, signature="0x" + "00" * 65, permit_signature=""))
    assert len(executed) == 1 and executed[0] > time.time()  # its deadline, not yet past
    assert (tab.running, tab._step, tab.dialog_open, tab.dialog_title) == (False, Step.IDLE, True, "error")
    assert tab.dialog_texts == EXPIRED
