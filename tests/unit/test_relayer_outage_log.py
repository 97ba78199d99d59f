"""The relayer process's log while the database is out of reach (wallet_app.relayer): one line
when the outage begins and one when it ends, not a traceback on every pass of both loops."""

import logging

import sqlalchemy.exc

from wallet_app import relayer as relayer_loop


def test_an_outage_is_logged_once_when_it_begins_and_once_when_it_ends(caplog):
    outage = relayer_loop._DatabaseOutage()
    refused = sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("connection refused"))
    with caplog.at_level(logging.WARNING, logger="wallet_app.relayer"):
        outage.passed()  # nothing to end
        assert [outage.failed(refused) for _ in range(50)] == [True] * 50
        assert outage.failed(RuntimeError("a bug")) is False  # the caller logs it with its traceback
        outage.passed()
        outage.passed()
        assert outage.failed(refused) is True  # a second outage
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3, messages
    # The driver's first line tells a refused connection from a full disk or a held lock.
    assert messages[0] == "the database is out of reach (OperationalError: connection refused); relaying waits for it"
    assert messages[1].startswith("the database is back after ") and messages[1].endswith(" s; relaying goes on")
    assert messages[2] == messages[0]


def test_a_payments_warnings_of_two_kinds_each_logged_once_when_a_pass_gives_both(caplog, monkeypatch):
    """reconcile() may warn twice about one payment in a pass (its re-send refused, then no room to
    re-price it): alternating, each was new against the last one, and both were logged every pass."""
    from wallet_app.services import relayer

    monkeypatch.setattr(relayer, "_warned", {})
    with caplog.at_level(logging.WARNING, logger=relayer.log.name):
        for _ in range(3):
            relayer._warn_changed("0xab", "re-send of payment %s gave %s", "underpriced")
            relayer._warn_changed("0xab", "payment %s stuck at gas price %s", 7)
        relayer._warn_changed("0xab", "payment %s stuck at gas price %s", 8)  # a change is told
    assert [r.getMessage() for r in caplog.records] == [
        "re-send of payment 0xab gave underpriced",
        "payment 0xab stuck at gas price 7",
        "payment 0xab stuck at gas price 8",
    ]
