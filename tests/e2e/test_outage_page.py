"""The database out of reach while a page acts (PostgreSQL restarting or failing over; on SQLite
another process holding the write lock past the busy timeout), in Chromium at 390x844: the page
shows the database_unavailable text in the user's language, in the shared alert (not Reflex's
English toast), nothing changes, and the same action works once the database is back. On an app
of its own: the outage must not meet the other tests' servers."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.db_outage import database_out_of_reach
from tests.e2e import helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS, own_app_server
from tests.e2e.flows import create_wallet, expect_alert, new_email, switch_language

BUSY = "The wallet is busy right now and could not do this. Please try again in a moment."
BUSY_KO = "지금은 지갑 서버가 바빠서 처리하지 못했습니다. 잠시 후 다시 시도해 주세요."
OUTAGE_SHOWN_MS = 20_000  # SQLite's busy timeout (5 s) before the write gives up, on a loaded machine


@pytest.fixture(scope="module")
def outage_app(tmp_path_factory):
    """(server, its DATABASE_URL)."""
    workdir = tmp_path_factory.mktemp("e2e-outage")
    with own_app_server(workdir, "outage") as server:
        yield server, helpers.e2e_database_url(workdir)


@pytest.fixture
def outage_page(browser, outage_app):
    with helpers.mobile_page(browser, outage_app[0].base_url, DEFAULT_TIMEOUT_MS) as page:
        yield page


def test_language_switch_while_the_database_is_out_of_reach(outage_page, outage_app):
    page, database_url = outage_page, outage_app[1]
    create_wallet(page, new_email("outage"))
    page.goto("/settings")
    switch_language(page, "한국어", "ko")

    with database_out_of_reach(database_url):
        page.get_by_role("radio", name="English").click()
        expect_alert(page, BUSY_KO, title="오류", ok="확인", timeout=OUTAGE_SHOWN_MS)
    expect(page.get_by_role("radio", name="한국어")).to_be_checked()  # nothing changed
    switch_language(page, "English", "en")  # the database is back: it works

    with database_out_of_reach(database_url):
        page.get_by_role("radio", name="한국어").click()
        expect_alert(page, BUSY, timeout=OUTAGE_SHOWN_MS)
    expect(page.get_by_role("radio", name="English")).to_be_checked()
    expect(page.get_by_text("An error occurred.")).to_have_count(0)  # Reflex's own toast
    switch_language(page, "한국어", "ko")
