"""Pure helpers of the /home token list (state/home.py) and /activity (state/activity.py): table tests."""

import pytest

from wallet_app.i18n import CATALOGUES
from wallet_app.state.activity import entry_view, render_summary
from wallet_app.state.home import balance_rows

WHO = "0x" + "12ab" * 10
ITEM = {
    "chain_id": 31337,
    "chain_name": "Dev",
    "token_address": "0x" + "aa" * 20,
    "token_symbol": "tUSD",
    "token_name": "Test USD",
    "token_decimals": 6,
}


@pytest.mark.parametrize(
    "balance, decimals, shown",
    [
        ("1000000000", 6, "1,000"),
        ("0", 6, "0"),
        ("1234567891", 6, "1,234.56789"),  # at most 5 decimals, truncated
        ("1000001", 6, "1"),  # below 0.00001 is cut
        ("1230000000000000000000", 18, "1,230"),
        ("7", 0, "7"),
    ],
)
def test_balance_rows_format(balance, decimals, shown):
    [row] = balance_rows([{**ITEM, "token_decimals": decimals, "balance": balance}])
    assert row == {
        "key": f"31337:{ITEM['token_address']}",
        "chain_id": "31337",
        "symbol": "tUSD",
        "name": "Test USD",
        "chain": "Dev",
        "balance": shown,
    }


def test_balance_rows_skip_malformed_items():
    good = {**ITEM, "balance": "50"}
    rows = balance_rows(
        [
            {**ITEM, "balance": "x"},
            {**ITEM, "token_decimals": None, "balance": "1"},
            {k: v for k, v in good.items() if k != "balance"},
            good,
        ]
    )
    assert [r["balance"] for r in rows] == ["0.00005"]


def entry(**fields):
    base = {
        "id": 1,
        "type": "transfer",
        "summary": "English summary",
        "chain_id": 31337,
        "tx_hash": "0x" + "cd" * 32,
        "token_address": ITEM["token_address"],
        "token_symbol": "tUSD",
        "token_decimals": 6,
        "amount": "1500000",
        "counterparty": WHO,
        "status": "ok",
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    "fields, en, ko",
    [
        ({}, "Sent 1.5 tUSD to 0x12ab…12ab", "0x12ab…12ab에게 1.5 tUSD 보냄"),
        ({"type": "approve"}, "Approved 1.5 tUSD for 0x12ab…12ab", "0x12ab…12ab에게 1.5 tUSD 사용 승인"),
        (
            {"type": "payment", "amount": "1234567891000"},
            "Paid 1,234,567.891 tUSD to 0x12ab…12ab",
            "0x12ab…12ab에게 1,234,567.891 tUSD 결제",
        ),
        # Full token precision in activity (not the 5-decimal balance display).
        ({"amount": "1000001"}, "Sent 1.000001 tUSD to 0x12ab…12ab", "0x12ab…12ab에게 1.000001 tUSD 보냄"),
        ({"token_symbol": None}, "Sent 1.5 to 0x12ab…12ab", "0x12ab…12ab에게 1.5 보냄"),
        ({"type": "call", "amount": None}, "Contract call to 0x12ab…12ab", "0x12ab…12ab 컨트랙트 호출"),
        (
            {"type": "receive", "amount": "2000000000000000000", "token_symbol": "ETH", "token_decimals": 18},
            "Received 2 ETH from 0x12ab…12ab",
            "0x12ab…12ab에게서 2 ETH 받음",
        ),
        ({"amount": None}, "Transfer with 0x12ab…12ab", "0x12ab…12ab와의 송금"),
        ({"token_decimals": None}, "Transfer with 0x12ab…12ab", "0x12ab…12ab와의 송금"),
        ({"type": "call", "counterparty": None}, "Contract call", "컨트랙트 호출"),
        ({"type": "mint"}, "English summary", "English summary"),  # unknown type: the service's text
        ({"type": "cancel", "replaces_tx": "0x" + "ef" * 32}, "Cancel of 0xefef…efef", "0xefef…efef 취소"),
    ],
)
def test_render_summary(fields, en, ko):
    e = entry(**fields)
    assert render_summary(e, "en") == en
    assert render_summary(e, "ko") == ko


@pytest.mark.parametrize(
    "status, shown",
    [
        ("submitted", "submitted"),
        ("ok", "ok"),
        ("failed", "failed"),
        ("replaced", "replaced"),
        ("cancelled", "cancelled"),
        ("dropped", "dropped"),
        ("weird", ""),
        (None, ""),
    ],
)
def test_entry_view(status, shown):
    v = entry_view(entry(status=status))
    assert v["status"] == shown
    assert v["tx_short"] == "0xcdcd…cdcd" and v["tx_hash"] == "0x" + "cd" * 32
    assert (v["type_en"], v["type_ko"]) == ("Transfer", "송금")
    assert v["summary_en"].startswith("Sent") and "보냄" in v["summary_ko"]


@pytest.mark.parametrize(
    "fields, replaceable, replaces_en, replaces_ko",
    [
        ({}, "", "", ""),
        ({"status": "submitted", "replaceable": True}, "1", "", ""),
        ({"status": "ok", "replaceable": True}, "", "", ""),  # only a pending entry offers the buttons
        (
            {"status": "submitted", "replaceable": True, "replaces_tx": "0x" + "ef" * 32},
            "1",
            "Replaces 0xefef…efef",
            "0xefef…efef 대체",
        ),
        ({"type": "cancel", "replaces_tx": "0x" + "ef" * 32}, "", "", ""),  # the summary says it
    ],
)
def test_entry_view_replacements(fields, replaceable, replaces_en, replaces_ko):
    v = entry_view(entry(**fields))
    assert (v["replaceable"], v["replaces_en"], v["replaces_ko"]) == (replaceable, replaces_en, replaces_ko)


def test_entry_view_without_hash_and_unknown_type():
    v = entry_view(entry(type="mint", tx_hash=None))
    assert (v["tx_hash"], v["tx_short"], v["type_en"], v["type_ko"]) == ("", "", "mint", "mint")


def test_templates_take_the_same_fields_in_both_languages():
    import string

    for key, en in CATALOGUES["en"].items():
        if key.startswith("activity_sum_"):
            fields = lambda s: sorted(f for _, f, _, _ in string.Formatter().parse(s) if f)  # noqa: E731
            assert fields(en) == fields(CATALOGUES["ko"][key]), key


def test_failed_loads_give_empty_lists(db):
    """A user that does not exist (a failed service call): empty lists, no exception."""
    from wallet_app.state.activity import _load
    from wallet_app.state.home import _load_rows

    assert _load_rows(987654) == ([], [])
    assert _load(987654) == []


def test_balance_reads_over_their_limit_leave_the_rows_shown(monkeypatch):
    """None: the token list keeps what it shows (an empty list would read as no tokens)."""
    from wallet_app.errors import AppError
    from wallet_app.services import tokens
    from wallet_app.state.home import _load_rows

    def limited(user):
        raise AppError("rate_limited", "balances over 60/minute", retry_after=5)

    monkeypatch.setattr(tokens, "asset_balances", limited)
    assert _load_rows(1) is None


def test_copycat_texts_name_the_listed_token_in_both_languages():
    from wallet_app.state.home import copycat_texts

    usdc = {"token_symbol": "USDC", "token_address": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"}
    assert copycat_texts(None) == {}
    assert copycat_texts(usdc) == {
        "en": "Your list already has USDC at another address (0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48). "
        "Anyone can make a token with any name: add this one only if you trust its address.",
        "ko": "내 토큰 목록에 다른 주소(0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48)의 USDC이(가) 이미 있습니다. "
        "누구나 아무 이름으로나 토큰을 만들 수 있으니 이 토큰의 주소를 믿을 수 있을 때만 추가하세요.",
    }


def test_copycat_texts_warn_of_a_symbol_outside_ascii_in_both_languages():
    """No table knows every script's letters drawn like Latin ones: Cherokee "tUᏚᎠ" read as tUSD
    with no warning (an audit). A copycat's own warning comes first."""
    from wallet_app.state.home import copycat_texts

    assert copycat_texts(None, "USDT") == {}
    assert copycat_texts(None, "tUᏚᎠ") == {
        "en": "This token's symbol tUᏚᎠ has letters other than A–Z, which can be drawn like those of another "
        "token's symbol. Anyone can make a token with any name: add this one only if you trust its address.",
        "ko": "이 토큰의 심볼 tUᏚᎠ에는 A–Z 외의 글자가 있어 다른 토큰의 심볼과 똑같아 보일 수 있습니다. "
        "누구나 아무 이름으로나 토큰을 만들 수 있으니 이 토큰의 주소를 믿을 수 있을 때만 추가하세요.",
    }
    tusd = {"token_symbol": "tUSD", "token_address": "0x" + "75" * 20}
    assert copycat_texts(tusd, "tUᏚᎠ")["en"].startswith("Your list already has tUSD at another address")


POISON_EN = (
    "This sender's address looks like one you sent to before, but it is different "
    "(address poisoning): never send to it."
)
POISON_KO = (
    "보낸 사람의 주소는 전에 송금한 주소와 비슷해 보이지만 다른 주소입니다(주소 위장). 이 주소로는 절대 보내지 마세요."
)


@pytest.mark.parametrize(
    "fields, known, en, ko",
    [
        # Dust from a look-alike of an address the user sent to: the summaries alike, 0x12ab…12ab both.
        ({"type": "receive"}, ["0x12ab" + "0" * 32 + "12ab"], POISON_EN, POISON_KO),
        ({"type": "receive"}, [WHO], "", ""),  # from an address the user sent to
        ({"type": "receive"}, [], "", ""),
        ({"type": "transfer"}, ["0x12ab" + "0" * 32 + "12ab"], "", ""),  # the user's own send
    ],
)
def test_entry_view_calls_out_a_lookalike_sender(fields, known, en, ko):
    v = entry_view(entry(**fields), known)
    assert (v["warning_en"], v["warning_ko"]) == (en, ko)


def test_receive_shows_the_accounts_address_now(monkeypatch):
    """Another tab replaced the wallet: Receive showed the address this tab loaded with, asking to
    be paid at an address the account no longer uses (found by an audit)."""
    from types import SimpleNamespace

    from tests.conftest import run_async
    from wallet_app.models import User
    from wallet_app.state import home

    now = User(id=1, google_sub="s", email="a@example.com", locale="en", address="0x" + "cd" * 20)

    async def signed_in(self):
        return now

    monkeypatch.setattr(home.HomeState, "_require_user", signed_in)
    monkeypatch.setattr(
        home.HomeState,
        "router",
        property(
            lambda self: SimpleNamespace(
                url=SimpleNamespace(path="/home"), headers=SimpleNamespace(accept_language="en")
            )
        ),
        raising=False,
    )
    monkeypatch.setattr(home.tokens, "user_tokens", lambda user: [])
    state = home.HomeState(_reflex_internal_init=True)
    state.address = "0x" + "ab" * 20  # what this tab loaded with
    run_async(home.HomeState.set_receive_open.fn(state, True))
    assert (state.address, state.receive_open, state.receive_uri) == (now.address, True, "")  # the address QR


def test_add_token_dialog_adds_only_what_its_probe_showed(monkeypatch):
    """The dialog's Add read the token again and stored whatever it answered then: 'SCAM' to the
    probe, 'tUSD' on the add, with no copycat warning (found by an audit). It hands add_token what
    it showed, warning or not; a token_changed makes the button probe again."""
    from tests.conftest import run_async, run_unlocked_as
    from wallet_app.errors import AppError
    from wallet_app.models import User
    from wallet_app.state import home

    user = User(id=1, google_sub="s", email="a@example.com", locale="en", address="0x" + "cd" * 20)
    token = "0x" + "5c" * 20
    meta = {"token_name": "Scam", "token_symbol": "SCAM", "token_decimals": 6}
    added = []

    def add(user, chain_id, address, shown):
        added.append(shown)
        raise AppError("token_changed")

    run_unlocked_as(monkeypatch, home.TokenListState, user)
    monkeypatch.setattr(home.tokens, "token_metadata", lambda user, chain_id, address: meta)
    monkeypatch.setattr(home.tokens, "copycat", lambda user, chain_id, address, symbol: None)
    monkeypatch.setattr(home.tokens, "add_token", add)
    state = home.TokenListState(_reflex_internal_init=True)
    state.chain_id, state.add_open = "31337", True
    run_async(home.TokenListState.submit.fn(state, {"token_address": token}))  # Probe
    assert (state.probed, state.meta_symbol, state.meta_warning) == (True, "SCAM", {})
    run_async(home.TokenListState.submit.fn(state, {"token_address": token}))  # Add
    assert added == [{**meta, "warned": False}]
    assert (state.probed, state.meta_symbol, state.add_open) == (False, "", True)
    assert state.add_error["en"] == CATALOGUES["en"]["err_token_changed"]


def activity_loaded(monkeypatch, activities):
    """ActivityState.load run to its end for a signed-in user, activities(state, user) answering
    each read (no state lock, no waits between polls): the state it leaves."""
    from types import SimpleNamespace

    from tests.conftest import run_async, run_unlocked_as
    from wallet_app.state import activity as activity_state
    from wallet_app.state.activity import ActivityState

    async def no_wait(_seconds):
        return None

    monkeypatch.setattr(activity_state.activity, "known_counterparties", lambda user: [])
    monkeypatch.setattr(activity_state.activity, "activities", lambda user: activities(state, user))
    run_unlocked_as(monkeypatch, ActivityState, SimpleNamespace(id=1))
    monkeypatch.setattr(activity_state.asyncio, "sleep", no_wait)
    state = ActivityState(_reflex_internal_init=True)
    run_async(ActivityState.load.fn(state))
    return state


def test_a_database_out_of_reach_keeps_the_lists_shown_and_a_pending_send_polled(monkeypatch):
    """A database restart while /activity polls a pending send: its load failed, the list became
    "No activity yet." and the polling ended, the pending send gone from the page (a second
    send invited); the token list read as no tokens."""
    from sqlalchemy.exc import OperationalError

    from wallet_app.services import tokens
    from wallet_app.state.home import _load_rows

    def out_of_reach(*_args):
        raise OperationalError("SELECT", {}, Exception("server closed the connection unexpectedly"))

    monkeypatch.setattr(tokens, "asset_balances", out_of_reach)
    assert _load_rows(1) is None  # the rows shown stay

    entry = {"id": 7, "type": "transfer", "status": "submitted", "tx_hash": "0x" + "ab" * 32, "counterparty": ""}
    answers = [[entry], "out", "out", [{**entry, "status": "ok"}]]
    shown: list[list[str]] = []  # what the page showed at each read after the first

    def activities(state, _user):
        if len(answers) < 4:
            shown.append([e["status"] for e in state.entries])
        answer = answers.pop(0)
        if answer == "out":
            out_of_reach()
        return answer

    state = activity_loaded(monkeypatch, activities)
    assert answers == []  # polled on through the outage until the send was final
    assert shown == [["submitted"]] * 3  # never emptied meanwhile
    assert [e["status"] for e in state.entries] == ["ok"]


def test_a_pending_send_is_polled_until_its_block_is_final(monkeypatch):
    """A send is ok once its block has index_confirmations (5 by default) blocks on top: on a chain
    of 12 s blocks, about 72 s after it was sent. The page re-read it for 30 s and then showed it
    pending until the next visit."""
    from wallet_app.state.activity import POLL_INTERVAL_S

    entry = {"id": 7, "type": "transfer", "status": "submitted", "tx_hash": "0x" + "ab" * 32, "counterparty": ""}
    reads = int(72 / POLL_INTERVAL_S) + 1
    answers = [[entry]] * (reads - 1) + [[{**entry, "status": "ok"}]]

    state = activity_loaded(monkeypatch, lambda _state, _user: answers.pop(0))
    assert answers == []
    assert [e["status"] for e in state.entries] == ["ok"]


def row(chain_id, token, balance):
    return {
        "key": f"{chain_id}:{token}",
        "chain_id": str(chain_id),
        "symbol": token,
        "name": token,
        "chain": f"c{chain_id}",
        "balance": balance,
    }


@pytest.mark.parametrize(
    "shown, fresh, unavailable, expected",
    [
        # every chain read: what was read
        ([row(1, "a", "1")], [row(1, "a", "2"), row(1, "b", "3")], set(), [row(1, "a", "2"), row(1, "b", "3")]),
        # nothing shown yet, a chain down: what was read
        ([], [row(2, "c", "4")], {"1"}, [row(2, "c", "4")]),
        # the chain shown first is down: its rows stay in their place, the other chain's are new
        ([row(1, "a", "1"), row(2, "c", "4")], [row(2, "c", "5")], {"1"}, [row(1, "a", "1"), row(2, "c", "5")]),
        # the only chain down: the rows shown stay
        ([row(1, "a", "1"), row(1, "b", "2")], [], {"1"}, [row(1, "a", "1"), row(1, "b", "2")]),
        # a token of a chain that answered, whose own read failed (services.chain.balances leaves it out): gone
        ([row(1, "a", "1"), row(1, "b", "2")], [row(1, "b", "3")], set(), [row(1, "b", "3")]),
    ],
)
def test_merge_rows_keeps_the_rows_of_chains_not_read(shown, fresh, unavailable, expected):
    from wallet_app.state.home import merge_rows

    assert merge_rows(shown, fresh, unavailable) == expected


def test_unavailable_texts_name_the_chains_in_both_languages():
    from wallet_app.state.home import unavailable_texts

    assert unavailable_texts([]) == {}
    assert unavailable_texts([{"chain_id": 1, "chain_name": "Ethereum"}, {"chain_id": 8453, "chain_name": "Base"}]) == {
        "en": "Your balances on Ethereum, Base could not be read just now, so they may be missing or out of date "
        "here. What you hold is not affected. Please try again in a moment.",
        "ko": "지금은 Ethereum, Base의 잔액을 읽을 수 없어 여기에 빠져 있거나 최신이 아닐 수 있습니다. 보유 자산에는 "
        "영향이 없습니다. 잠시 후 다시 시도해 주세요.",
    }


def test_load_or_keep(caplog):
    """Home's and Activity's lists: kept (None) while the database is out of reach, else empty on a failure."""
    import logging

    from sqlalchemy.exc import OperationalError

    from wallet_app.state.base import load_or_keep

    log = logging.getLogger("test.load_or_keep")

    def fails(error):
        def load():
            raise error
        return load

    assert load_or_keep(log, "x load", lambda: [1], []) == [1]
    with caplog.at_level("WARNING", logger="test.load_or_keep"):
        assert load_or_keep(log, "x load", fails(OperationalError("SELECT", {}, Exception("gone"))), []) is None
        assert load_or_keep(log, "x load", fails(ValueError("bad")), []) == []
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("WARNING", "x load: the database is out of reach (OperationalError)"), ("ERROR", "x load failed")]


def test_add_token_and_receive_read_the_fields_less_what_no_one_sees(monkeypatch):
    """A token address pasted with a zero-width space in it was refused as malformed: it is probed.
    One of invisible characters alone is an empty address, refused (empty would mean the native
    coin). A full-width Receive amount makes the request it reads as (services.typed)."""
    from tests.conftest import run_async, run_unlocked_as
    from wallet_app.models import User
    from wallet_app.state import home

    user = User(id=1, google_sub="s", email="a@example.com", locale="en", address="0x" + "cd" * 20)
    token = "0x" + "5c" * 20
    probed = []

    def metadata(user, chain_id, address):
        probed.append(address)
        return {"token_name": "T", "token_symbol": "T", "token_decimals": 6}

    run_unlocked_as(monkeypatch, home.TokenListState, user)
    monkeypatch.setattr(home.tokens, "token_metadata", metadata)
    monkeypatch.setattr(home.tokens, "copycat", lambda user, chain_id, address, symbol: None)
    state = home.TokenListState(_reflex_internal_init=True)
    state.chain_id, state.add_open = "31337", True
    run_async(home.TokenListState.submit.fn(state, {"token_address": "\u200b\u3000"}))
    assert (probed, state.add_error["en"]) == ([], CATALOGUES["en"]["err_invalid_address"])
    run_async(home.TokenListState.submit.fn(state, {"token_address": f" {token[:9]}\u200b{token[9:]}\n"}))
    assert (probed, state.probed, state.add_error) == ([token], True, {})

    entry = {"chain_id": 31337, "token_address": token, "token_symbol": "T", "token_decimals": 6,
             "chain_name": "Dev"}
    assert home.receive_request(user.address, entry, "１２．５") == home.receive_request(user.address, entry, "12.5")
