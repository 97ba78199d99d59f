"""Issue 4 items 3, 4 and /activity of 8 in Chromium at 390x844 on the e2e anvil: the /home token
list with faucet balances (the native coin's too: issue 14 item 1), the add-token dialog (errors,
probe, idempotent add) in English and Korean, and the /activity empty state."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e import helpers
from tests.e2e.flows import create_wallet, new_email, set_language

FAUCET_BALANCE = "1,000"  # 1,000 tUSD/tKRW from the dev faucet, as format_balance shows it
CHAIN_NAME = "Newbl Dev (anvil)"
BALANCE_TRIES = 12  # reloads while the faucet's background transfers land


def balance_cell(page: Page, symbol: str):
    return page.locator(f'.token-row[data-symbol="{symbol}"] .token-balance')


def wait_for_balance(page: Page, symbol: str, text: str) -> None:
    """The faucet funds a new address in the background: reload /home until the balance shows (bounded)."""
    for _ in range(BALANCE_TRIES):
        try:
            expect(balance_cell(page, symbol)).to_have_text(text, timeout=5_000)
            return
        except AssertionError:
            page.reload()
    expect(balance_cell(page, symbol)).to_have_text(text, timeout=5_000)


def probe(dialog, address: str, button: str) -> None:
    dialog.locator("#add-token-address").fill(address)
    dialog.get_by_role("button", name=button, exact=True).click()


def test_token_list_add_token_and_empty_activity(page: Page, screenshot, browser_issues):
    address = create_wallet(page, new_email("assets"))

    # A new user has no activity yet (the faucet's transfers are not the user's own).
    page.goto("/activity")
    expect(page.locator("#activity-empty")).to_have_text("No activity yet.")
    screenshot("activity_empty_en")

    page.goto("/home")
    tokens = page.request.get("/api/v1/tokens")
    assert tokens.ok, tokens.status
    by_symbol = {t["token_symbol"]: t for t in tokens.json()}
    # The chains file's tokens and, from the start, the chain's native coin (issue 14 item 1).
    assert list(by_symbol) == ["tUSD", "tKRW", "ETH"]

    for symbol in ("tUSD", "tKRW"):
        wait_for_balance(page, symbol, FAUCET_BALANCE)
    wait_for_balance(page, "ETH", "1")  # the faucet's 1 ETH, formatted by the same rules
    expect(page.locator('.token-row[data-symbol="ETH"] .token-name')).to_have_text(f"Ether · {CHAIN_NAME}")
    rows = page.locator(".token-row")
    expect(rows).to_have_count(len(by_symbol))
    expect(rows.locator(".token-balance")).to_have_text([FAUCET_BALANCE, FAUCET_BALANCE, "1"])
    tusd_row = page.locator('.token-row[data-symbol="tUSD"]')
    expect(tusd_row.locator(".token-name")).to_have_text(f"Newbl Test USD · {CHAIN_NAME}")
    style = balance_cell(page, "tUSD").evaluate(
        "(e) => { const s = getComputedStyle(e); return [s.fontVariantNumeric, s.textAlign]; }")
    assert style == ["tabular-nums", "right"], style
    screenshot("home_tokens_en")

    # Add token: network preselected; invalid address, then a non-contract (the user's own EOA).
    page.get_by_role("button", name="Add token").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("combobox")).to_have_text(CHAIN_NAME)
    probe(dialog, "", "Probe")
    expect(dialog.get_by_role("alert")).to_have_text("Invalid address. Enter 0x followed by 40 hex digits.")
    since = helpers.received_frames(page)
    probe(dialog, "0x1234", "Probe")
    # Answered: the same text is up from the probe before, and a probe sent while this one is busy
    # is ignored (a CI run's next probe was, and the dialog kept this text).
    helpers.wait_for_state(page, since, "busy", False)
    expect(dialog.get_by_role("alert")).to_have_text("Invalid address. Enter 0x followed by 40 hex digits.")
    probe(dialog, address, "Probe")
    expect(dialog.get_by_role("alert")).to_have_text(
        "There is no contract at this address on the selected network.")
    screenshot("add_token_error_en")

    # Probe a deployed token, then add it again: idempotent, the list keeps one tUSD row.
    probe(dialog, by_symbol["tUSD"]["token_address"].lower(), "Probe")
    expect(dialog.locator("#add-token-name")).to_have_text("Newbl Test USD")
    expect(dialog.locator("#add-token-symbol")).to_have_text("tUSD")
    expect(dialog.locator("#add-token-decimals")).to_have_text("6")
    expect(dialog.get_by_role("alert")).to_have_count(0)
    screenshot("add_token_dialog_en")
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(dialog).to_have_count(0)
    wait_for_balance(page, "tUSD", FAUCET_BALANCE)
    expect(rows).to_have_count(len(by_symbol))
    assert len(page.request.get("/api/v1/tokens").json()) == len(by_symbol)

    # Korean.
    set_language(page, "한국어", "ko")
    page.goto("/activity")
    expect(page.locator("#activity-empty")).to_have_text("아직 활동 내역이 없습니다.")
    screenshot("activity_empty_ko")
    page.goto("/home")
    wait_for_balance(page, "tKRW", FAUCET_BALANCE)
    expect(page.get_by_role("heading", name="토큰")).to_be_visible()
    screenshot("home_tokens_ko")
    page.get_by_role("button", name="토큰 추가").click()
    dialog = page.get_by_role("dialog")
    probe(dialog, address, "조회")
    expect(dialog.get_by_role("alert")).to_have_text("선택한 네트워크의 이 주소에는 컨트랙트가 없습니다.")
    probe(dialog, by_symbol["tKRW"]["token_address"], "조회")
    expect(dialog.locator("#add-token-name")).to_have_text("Newbl Test KRW")
    screenshot("add_token_dialog_ko")
    dialog.get_by_role("button", name="취소").click()
    expect(dialog).to_have_count(0)

    browser_issues.assert_clean()


COPYCAT_KEY = "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a"  # anvil's account #4


def deploy_copycat(app_server) -> str:
    """A new token calling itself tUSD (name "Copycat USD") on the app's chain: its address."""
    from contracts.deploy import _deploy_contract
    from tests.e2e.flows_send import web3_of

    return _deploy_contract(web3_of(app_server), COPYCAT_KEY, "TestToken", "Copycat USD", "tUSD")


def test_a_copycat_token_and_a_token_contract_recipient_are_called_out(page: Page, app_server, screenshot,
                                                                       browser_issues):
    """A token calling itself tUSD from another address (anyone can deploy one; once listed, its
    transfers read like the real one's) is called out when probed; a token's contract pasted as
    Send's recipient too (tokens sent there are lost)."""
    create_wallet(page, new_email("copycat"))
    copycat = deploy_copycat(app_server)
    tusd = next(t for t in page.request.get("/api/v1/tokens").json() if t["token_symbol"] == "tUSD")
    page.goto("/home")
    page.get_by_role("button", name="Add token").click()
    dialog = page.get_by_role("dialog")
    probe(dialog, copycat, "Probe")
    expect(dialog.locator("#add-token-name")).to_have_text("Copycat USD")
    expect(dialog.locator("#add-token-copycat")).to_have_text(
        f"Your list already has tUSD at another address ({tusd['token_address']}). Anyone can make a token with "
        "any name: add this one only if you trust its address.")
    screenshot("add_token_copycat_en")
    probe(dialog, tusd["token_address"], "Add")  # the listed one itself (another address: probed first)
    expect(dialog.locator("#add-token-name")).to_have_text("Newbl Test USD")
    expect(dialog.locator("#add-token-copycat")).to_have_count(0)
    dialog.get_by_role("button", name="Cancel").click()

    page.goto("/send")
    page.get_by_label("Recipient address").fill(tusd["token_address"])
    expect(page.locator("#send-recipient-note")).to_have_text(
        "This is a token's contract address: tokens sent to it are usually lost for good.")
    expect(page.get_by_role("status").filter(has=page.locator("#send-recipient-note"))).to_have_count(1)  # read out

    set_language(page, "한국어", "ko")
    page.goto("/home")
    page.get_by_role("button", name="토큰 추가").click()
    probe(dialog, copycat, "조회")
    expect(dialog.locator("#add-token-copycat")).to_have_text(
        f"내 토큰 목록에 다른 주소({tusd['token_address']})의 tUSD이(가) 이미 있습니다. 누구나 아무 이름으로나 "
        "토큰을 만들 수 있으니 이 토큰의 주소를 믿을 수 있을 때만 추가하세요.")
    screenshot("add_token_copycat_ko")
    dialog.get_by_role("button", name="취소").click()
    page.goto("/send")
    page.get_by_label("받는 주소").fill(tusd["token_address"])
    expect(page.locator("#send-recipient-note")).to_have_text(
        "이 주소는 토큰의 컨트랙트 주소입니다. 이 주소로 보낸 토큰은 대개 되찾을 수 없습니다.")
    browser_issues.assert_clean()



SUBMITS_SENT = "window.__nbFrames.sent.filter((f) => f.includes('token_list_state.submit')).length"


def test_a_held_enter_probes_and_does_not_add(page: Page, app_server, browser_issues):
    """Enter held in the add-token field (a phone keyboard, a slow finger): its first press probed
    the token, and a repeat of the key once the probe's answer had come added it, the copycat
    warning shown and unread. A repeat of a held Enter now submits nothing: Add is the person's
    own second press."""
    create_wallet(page, new_email("heldenter"))
    copycat = deploy_copycat(app_server)
    page.goto("/home")
    page.get_by_role("button", name="Add token").click()
    dialog = page.get_by_role("dialog")
    dialog.locator("#add-token-address").fill(copycat)
    page.keyboard.down("Enter")
    expect(dialog.locator("#add-token-copycat")).to_contain_text("Your list already has tUSD at another address")
    expect(dialog.get_by_role("button", name="Add", exact=True)).to_be_visible()
    probes = page.evaluate(SUBMITS_SENT)  # the socket's frames (SOCKET_WATCH): the probe's submit
    assert probes > 0
    page.keyboard.down("Enter")  # the key still held: a repeat (KeyboardEvent.repeat)
    page.keyboard.up("Enter")
    dialog.get_by_role("button", name="Cancel").click()  # sent after anything the repeat sent
    expect(dialog).to_have_count(0)
    assert page.evaluate(SUBMITS_SENT) == probes
    listed = {t["token_address"].lower() for t in page.request.get("/api/v1/tokens").json()}
    assert copycat.lower() not in listed
    browser_issues.assert_clean()
