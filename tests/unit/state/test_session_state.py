"""The shared alert across page loads (state/session.py): it belongs to the page that raised it."""

import pytest
import redis.exceptions

from wallet_app.state.session import alert_due, browser_error_logged, dialog_after_load, server_error_event


@pytest.mark.parametrize("open_, route, pending, path, same_visit, expected", [
    # Raised with a redirect to /home (sign's invalid tx): shown on /home, once.
    (True, "/home", True, "/home", False, (True, False)),
    (True, "/home", True, "/home", True, (True, False)),  # a client-side redirect: the same visit
    (True, "/home", False, "/home", False, (False, False)),  # a later load of /home
    (True, "/home", True, "/send", True, (False, False)),  # went elsewhere first
    # Raised on its own page (send validation): any next load closes it, the same page too.
    (True, "/send", False, "/send", False, (False, False)),
    (True, "/send", False, "/activity", False, (False, False)),
    (True, "/send", False, "/activity", True, (False, False)),  # went elsewhere in the app
    # ...but the socket's reconnect (on_load again, the page not loaded again) keeps it.
    (True, "/send", False, "/send", True, (True, False)),
    (False, "/activity", True, "/activity", False, (False, False)),  # closed with OK before the redirect landed
    (False, "/send", False, "/send", True, (False, False)),
])
def test_dialog_after_load(open_, route, pending, path, same_visit, expected):
    assert dialog_after_load(open_, route, pending, path, same_visit) == expected


# (failures alerted for, the failed event, the event that queued it) -> (alert?, alerted for after). Keep 2.
@pytest.mark.parametrize("alerted, failed, queued_by, due, after", [
    ({}, "a", None, True, ["a"]),  # a click's event failed: the alert
    (["a"], "b", "a", False, ["a"]),  # the alert queued for it failed the same way: no alert for the alert
    (["a"], "c", None, True, ["a", "c"]),  # another failure
    (["a"], "d", "x", True, ["a", "d"]),  # an event chained by one that did not fail
    (["a", "c"], "e", None, True, ["c", "e"]),  # the oldest goes
])
def test_alert_due(alerted, failed, queued_by, due, after):
    kept = dict.fromkeys(alerted)
    assert alert_due(kept, failed, queued_by, keep=2) is due
    assert list(kept) == after


def test_the_alert_for_a_failure_is_not_queued_again_when_it_fails(caplog):
    """The loop this ends: the alert's event failed like the one before it, the handler queued
    the next alert for it, without end (seen with Redis, the state store, out of reach)."""
    import sqlalchemy.exc
    from reflex_base.event.context import EventContext

    failure = sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("connection refused"))
    click = EventContext(token="client", state_manager=None, enqueue_impl=None)  # type: ignore[arg-type]
    with click:
        alert = server_error_event(failure)
    assert alert is not None and alert.handler.fn.__name__ == "show_server_error"
    assert [str(v) for _, v in alert.args] == ['"database_unavailable"']
    with click.fork():  # the alert's event, queued in the click's context, fails the same way
        assert server_error_event(failure) is None
    assert [r.message for r in caplog.records] == ["an event handler failed"] * 2


def test_a_chain_node_refusal_in_an_event_is_one_log_line_and_its_alert(caplog):
    """A provider past its quota refuses every read of every page: one warning each, without the
    traceback or the node's URL (its API key), and the user's alert says the network."""
    import web3.exceptions

    failure = web3.exceptions.Web3RPCError("refused", rpc_response={"error": {"code": -32005, "message": "over quota"}})
    alert = server_error_event(failure)
    assert [str(v) for _, v in alert.args] == ['"rpc_unavailable"']
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records] == [
        ("WARNING", "an event handler met the chain node's trouble: Web3RPCError: -32005 over quota", None)]


@pytest.mark.parametrize("failure, busy", [
    (redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379."), True),  # Redis stopped
    (redis.exceptions.TimeoutError("Timeout reading from socket"), True),
    (redis.exceptions.ResponseError("WRONGTYPE"), False),  # a bug of ours: the alert (internal_error)
])
def test_redis_out_of_reach_shows_the_busy_notice_in_the_browser(failure, busy):
    """The state store out of reach: no event of the page can run on the server, the alert's
    neither; the notice is an event of the browser alone (it sets the flag's value)."""
    event = server_error_event(failure)
    if busy:
        assert event.handler.fn.__qualname__ == "_set_value"
        assert [(str(k), str(v)) for k, v in event.args] == [("ref", '"ref_server_busy_flag"'), ("value", '"1"')]
    else:
        assert event.handler.fn.__name__ == "show_server_error"


def test_the_session_exposes_the_signed_in_google_account_and_the_drive_dialogs_get_it():
    """The Drive token requests of backup and restore name the signed-in Google account (GIS
    login_hint): the session state holds its e-mail (read with the user, no other lookup) and
    both dialogs get it as their login_hint prop; logged out, it is empty."""
    from wallet_app.components.layout import _signed_in_parts
    from wallet_app.models import User
    from wallet_app.pages.settings import settings_page
    from wallet_app.state.session import SessionState

    state = SessionState(_reflex_internal_init=True)
    state._apply(User(id=1, google_sub="1" * 21, email="alice@example.com", locale="en", address="0x" + "ab" * 20))
    assert state.google_account == "alice@example.com"
    state._apply(None)
    assert state.google_account == ""

    bound = "loginHint:" + str(SessionState.google_account)
    assert bound in str(settings_page()).replace(" ", "")  # the backup button
    assert any(bound in str(part).replace(" ", "") for part in _signed_in_parts())  # the restore prompt


def test_client_storage_a_browser_sends_is_kept_only_when_ours_could_have_written_it():
    """Reflex sets the client storage vars to whatever a hydrate or a storage sync sends (by
    setattr, as here): a visit id and a language are short strings; anything else is dropped."""
    from wallet_app.state.session import CLIENT_STORAGE_MAX, SessionState

    state = SessionState(_reflex_internal_init=True)
    state.visit, state.stored_lang = "1a2b3c4d5e6f7g", "ko"  # what VISIT_SCRIPT and the page write
    assert (state.visit, state.stored_lang) == ("1a2b3c4d5e6f7g", "ko")
    state.visit = "v" * CLIENT_STORAGE_MAX
    assert state.visit == "v" * CLIENT_STORAGE_MAX
    for junk in ("v" * (CLIENT_STORAGE_MAX + 1), "x" * 400_000, {"a": 1}, ["ko"], 7):
        state.visit = state.stored_lang = junk
        assert (state.visit, state.stored_lang) == ("", "")
    state.address = "x" * 100  # other vars as before
    assert state.address == "x" * 100


@pytest.mark.parametrize("report, name", [
    ("TypeError: PIN 123456 rejected\n    at confirm (wallet.jsx:1:2)", "TypeError"),  # window.onerror's
    ("[SID: abc123] state_update: phrase abandon abandon about", "state_update"),  # Reflex's client_error
    ("undefined: undefined\nundefined", "undefined"),  # a rejection without an Error
    ("Script error.\n    at :0:0", "error"),
])
def test_a_pages_error_is_logged_by_its_name_alone(caplog, report, name):
    """What a page reports may quote what the user typed: it never reaches the log."""
    browser_error_logged(Exception(report))
    assert [r.getMessage() for r in caplog.records] == [f"a page reported an uncaught {name} (its text is not logged)"]



class _Session:
    """What SessionState.set_language reads of its state, with the session check of page states."""

    def __init__(self, user, logged_in=True, left=False):
        self.user, self.logged_in, self.busy, self.lang, self.stored_lang = user, logged_in, False, "en", "en"
        self.left = left  # the page that sent the event was left (its websocket closed)
        self.applied: list = []

    def _lookup_user(self):
        return self.user

    def _page_left(self):
        return self.left

    def _apply(self, user):
        self.applied.append(user)

    def _to_login(self):
        self._apply(None)
        return "to login"


@pytest.mark.parametrize("user, logged_in, answer, lang, locale_saved", [
    (None, True, "to login", "en", False),  # the session ended meanwhile: the 401 behaviour, nothing saved
    ("user", True, None, "ko", True),
    (None, False, None, "ko", False),  # signed out (/): the browser's choice alone
])
def test_a_language_switch_checks_the_session_as_page_states_do(monkeypatch, user, logged_in, answer, lang,
                                                                locale_saved):
    from tests.conftest import run_async
    from wallet_app.services import accounts
    from wallet_app.state.base import SignedInState
    from wallet_app.state.session import SessionState

    saved = []
    monkeypatch.setattr(accounts, "set_locale", lambda user_id, code: saved.append((user_id, code)))
    state = _Session(None if user is None else type("U", (), {"id": 7})(), logged_in)
    state._require_user = SignedInState._require_user.__get__(state)  # type: ignore[attr-defined]
    assert run_async(SessionState.set_language.fn(state, "ko")) == answer
    assert (state.lang, state.stored_lang) == (lang, lang)
    assert saved == ([(7, "ko")] if locale_saved else [])


@pytest.mark.parametrize("user, left, redirected, applied", [
    (None, False, True, [None, None]),  # the session ended: the 401 behaviour (logged out, to /)
    (None, True, False, []),  # the page that sent it was left: no user through its closed socket
    ("user", False, False, []),
])
def test_an_event_of_a_page_left_neither_signs_out_nor_redirects(user, left, redirected, applied):
    """An event of a page the user left (a link opened in the tab, a reload), handled after its
    websocket closed, finds no user through that socket: its 401 redirect reached the tab's next
    page (Reflex sends updates to the client's current socket), and a merchant link landed on /
    and then Home. Its on_load does nothing either."""
    from types import SimpleNamespace

    from tests.conftest import run_async
    from wallet_app.state.base import SignedInState
    from wallet_app.state.session import SessionState

    state = _Session(user, left=left)
    state._require_user = SignedInState._require_user.__get__(state)  # type: ignore[attr-defined]
    state._to_login = SessionState._to_login.__get__(state)  # type: ignore[attr-defined]
    state.router = SimpleNamespace(url=SimpleNamespace(path="/payment"))  # type: ignore[attr-defined]
    answer = run_async(SessionState.device_checked.fn(state, "present"))
    assert (answer is not None, state.applied) == (redirected, applied)
    if left:
        assert run_async(SessionState.check_session.fn(state)) is None
        assert state.applied == []
