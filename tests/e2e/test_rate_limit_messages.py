"""Issue 12 item 3 in Chromium at 390x844: on a server with low limits, a rate-limited action
answers 429 with Retry-After and {"detail": "rate_limited"}, and the page shows the localized
message: the Add token dialog (a page state calling the service) and the sign-in (auth.jsx
calling /auth/google), in English and Korean."""

from __future__ import annotations

import os

import pytest
import redis
from eth_account import Account
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS, own_app_server, save_screenshot
from tests.e2e.flows import answer_popups_until, create_wallet, expect_alert, new_email, sign_in

RATE_LIMITED = "Too many requests. Please wait a moment and try again."
RATE_LIMITED_KO = "요청이 너무 많습니다. 잠시 후 다시 시도해 주세요."
METADATA_LIMIT = 2
SIGN_IN_LIMIT = 3


@pytest.fixture(scope="module")
def limited_server(tmp_path_factory):
    """An app of its own: the low limits must not meet the other tests' users."""
    env = {"RATE_LIMIT_TOKEN_METADATA": f"{METADATA_LIMIT}/minute", "RATE_LIMIT_SIGN_IN": f"{SIGN_IN_LIMIT}/minute"}
    if os.environ.get("REDIS_URL"):
        # A Redis database of its own (TEST_REDIS=1): its refusals of 127.0.0.1 are shared by every
        # server on the same database, and the next tests' sign-ins would meet them.
        env["REDIS_URL"] = os.environ["REDIS_URL"].rsplit("/", 1)[0] + "/2"
        redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    with own_app_server(tmp_path_factory.mktemp("e2e-limited"), "limited", env) as server:
        yield server


@pytest.fixture
def limited_page(browser, limited_server):
    with helpers.mobile_page(browser, limited_server.base_url, DEFAULT_TIMEOUT_MS) as page:
        yield page


def assert_limited(response) -> None:
    assert response.status == 429, response.status
    assert response.json() == {"detail": "rate_limited"}
    assert 1 <= int(response.headers["retry-after"]) <= 60


def test_token_metadata_limit_shows_the_message(limited_page):
    page = limited_page
    create_wallet(page, new_email("limited"))  # one sign-in of this IP's SIGN_IN_LIMIT
    tokens = {t["token_symbol"]: t["token_address"] for t in page.request.get("/api/v1/tokens").json()}

    page.get_by_role("button", name="Add token").click()
    dialog = page.get_by_role("dialog")
    # METADATA_LIMIT = 2 lookups answer: a plain account (no contract), then tUSD.
    dialog.locator("#add-token-address").fill(Account.create().address)
    dialog.get_by_role("button", name="Probe", exact=True).click()
    expect(dialog.get_by_role("alert")).to_have_text("There is no contract at this address on the selected network.")
    dialog.locator("#add-token-address").fill(tokens["tUSD"])
    dialog.get_by_role("button", name="Probe", exact=True).click()
    expect(dialog.locator("#add-token-symbol")).to_have_text("tUSD")
    # Another address: the submit button (now 'Add') looks it up first, the third lookup.
    dialog.locator("#add-token-address").fill(tokens["tKRW"])
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog.get_by_role("alert")).to_have_text(RATE_LIMITED)
    save_screenshot(page, "rate_limited_add_token_en")

    # The same user's REST call is refused by the same counter.
    assert_limited(page.request.get("/api/v1/token/metadata", params={"chain_id": "31337",
                                                                      "token_address": tokens["tUSD"]}))


def test_sign_in_limit_shows_the_message(limited_page):
    page = limited_page
    page.goto("/")
    for _ in range(SIGN_IN_LIMIT + 1):  # spend what is left of this IP's sign-ins
        last = page.request.post("/api/v1/auth/google", data={"id_token": "garbage", "locale": "en"})
        if last.status == 429:
            break
    assert_limited(last)
    sign_in(page, new_email("limited"))
    expect_alert(page, "Login failed: " + RATE_LIMITED, ok=None)
    save_screenshot(page, "rate_limited_sign_in_en")
    page.get_by_role("alertdialog").get_by_role("button", name="OK").click()

    page.get_by_role("radio", name="한국어").click()
    # The provider remembers the account now: its popup may answer by itself.
    page.get_by_role("button", name="Google로 계속하기").click()
    answer_popups_until(page, new_email("limited"), lambda: page.get_by_role("alertdialog").count() > 0)
    expect_alert(page, "로그인에 실패했습니다: " + RATE_LIMITED_KO, title="오류", ok=None)
    save_screenshot(page, "rate_limited_sign_in_ko")
    assert page.request.get("/api/v1/me").status == 401  # no session was made
