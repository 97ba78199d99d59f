"""Issue 15 items 4 and 5 in Chromium at 390x844: the PIN pad and the PIN dialog work with the
keyboard alone and announce how many digits are in ("3 of 6 digits") without a digit of the PIN
in the DOM or the accessibility tree; every dialog takes focus when it opens and gives it back
to what opened it; reduced motion stops every animation; and a person who uses only the
keyboard signs in, creates a wallet, sends and pays."""

from __future__ import annotations

import re

from eth_account import Account
from playwright.sync_api import Locator, Page, expect

from tests.e2e.flows import PIN, create_wallet, new_email, sign_in_to_onboarding
from tests.e2e.flows_payment import (
    chain_web3,
    deployed_token,
    me_address,
    merchant_link,
    token_address,
    wait_for_balance,
    wait_for_chain_balance,
)
from tests.e2e.flows_send import send_to_sign, wait_for_asset
from tests.e2e.test_assets import deploy_copycat

NETWORK = "Newbl Dev (anvil)"
KDF_TIMEOUT_MS = 60_000  # Argon2id with 256 MiB in the browser
BULLET = "\u2022"

# Every trusted pointer, mouse or touch press, and every click a pointer made (a click from the
# keyboard has detail 0), reported to the test: the keyboard-only test asserts there were none.
_POINTER_RECORDER = """
for (const type of ['pointerdown', 'mousedown', 'touchstart', 'click']) {
  document.addEventListener(type, (e) => {
    if (!e.isTrusted || (type === 'click' && e.detail === 0)) return;
    const t = e.target;
    window.__nbPointer && window.__nbPointer(type + ' on ' + (t && t.outerHTML ? t.outerHTML.slice(0, 80) : t));
  }, true);
}
"""


def is_focused(locator: Locator) -> bool:
    return locator.evaluate("el => el === document.activeElement")


def tab_to(page: Page, locator: Locator, limit: int = 40) -> None:
    """Press Tab until `locator` has focus (the Tab order reaches it)."""
    for _ in range(limit):
        if is_focused(locator):
            return
        page.keyboard.press("Tab")
    now = page.evaluate("() => document.activeElement && document.activeElement.outerHTML.slice(0, 120)")
    raise AssertionError(f"Tab never reached {locator}; focus on {now}")


def focus_names(page: Page, presses: int) -> list[str]:
    """The accessible-ish names (aria-label, else text) of what Tab focuses, `presses` times from the top."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    names = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        names.append(page.evaluate(
            "() => { const e = document.activeElement;"
            " return e ? (e.getAttribute('aria-label') || e.innerText || e.tagName).trim() : ''; }"))
    return names


def pin_exposures(page: Page, digits: str) -> list[str]:
    """Where the typed `digits` (or, in the PIN field, any digit) show: DOM text, any attribute,
    the PIN field's value, and every accessibility tree node's name, value and description."""
    found = page.evaluate(
        """(d) => {
          const out = [];
          for (const el of document.querySelectorAll('*')) {
            for (const a of el.attributes) if (a.value.includes(d)) out.push(`${el.tagName}[${a.name}]`);
            if ('value' in el && typeof el.value === 'string' && el.value.includes(d)) out.push(`${el.tagName}.value`);
          }
          for (const el of document.querySelectorAll('[data-testid=pin-input]'))
            if (/[0-9]/.test(el.value)) out.push('PIN field value ' + el.value.length);
          if (document.body.innerText.includes(d) || document.body.textContent.includes(d)) out.push('text');
          return out;
        }""",
        digits,
    )
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    for node in nodes:
        role = (node.get("role") or {}).get("value")
        for prop in ("name", "value", "description"):
            text = str((node.get(prop) or {}).get("value", ""))
            if digits in text or (role == "textbox" and prop == "value" and re.search(r"[0-9]", text)):
                found.append(f"accessibility node {role} {prop}")
    return found


def expect_quiet_live_region(scope: Locator | Page, region: Locator) -> None:
    """`region` is a status live region, there and empty before its wait begins: text put into
    a region that is there is announced, a region added along with its text not always."""
    expect(scope.get_by_role("status").and_(region)).to_have_text("")


def expect_progress(scope: Locator | Page, text: str) -> None:
    """The polite live region says `text` (and is one)."""
    region = scope.get_by_test_id("pin-progress")
    expect(region).to_have_text(text)
    expect(region).to_have_attribute("aria-live", "polite")


def test_pin_pad_by_keyboard_announces_the_count_never_the_digits(page, browser_issues):
    sign_in_to_onboarding(page, new_email("pad-keys"))
    pad = page.get_by_role("group", name="PIN")
    expect_quiet_live_region(page, page.get_by_test_id("creating-wallet"))
    # Tab order: the digit keys in reading order, then Delete (enabled once a digit is in).
    page.keyboard.type("1")
    names = focus_names(page, 20)
    start = names.index("1")
    assert names[start:start + 11] == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "Delete"], names
    page.keyboard.press("Escape")  # clears what was typed
    expect_progress(pad, "0 of 6 digits")

    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.type("928")
    expect_progress(pad, "3 of 6 digits")
    page.keyboard.press("Backspace")
    expect_progress(pad, "2 of 6 digits")
    page.keyboard.type("837")
    expect_progress(pad, "5 of 6 digits")
    assert pin_exposures(page, "92837") == []
    cont = page.get_by_role("button", name="Continue")
    expect(cont).to_be_disabled()
    page.keyboard.press("Enter")  # five digits: nothing happens
    expect(page).to_have_url(re.compile(r"/onboarding"))
    expect_progress(pad, "5 of 6 digits")

    # Enter on a focused key presses that key: the sixth digit, which creates the wallet.
    four = pad.get_by_role("button", name="4", exact=True)
    tab_to(page, four)
    page.keyboard.press("Enter")
    page.wait_for_url("**/home**", timeout=KDF_TIMEOUT_MS)
    browser_issues.assert_clean()


def test_pin_dialog_by_keyboard_hides_the_digits_and_takes_focus(page, browser_issues):
    create_wallet(page, new_email("dialog-keys"))
    send_to_sign(page)

    confirm = page.get_by_role("button", name="Confirm")
    expect_quiet_live_region(page, page.locator("#sign-status"))
    tab_to(page, confirm)
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Enter your PIN")
    field = dialog.get_by_label("PIN", exact=True)
    expect(field).to_be_focused()
    expect_quiet_live_region(dialog, dialog.get_by_test_id("pin-working"))
    expect(field).not_to_have_attribute("aria-invalid", "true")
    page.keyboard.type(PIN[:3])
    expect_progress(dialog, "3 of 6 digits")
    expect(field).to_have_value(BULLET * 3)
    page.keyboard.press("Backspace")
    expect_progress(dialog, "2 of 6 digits")
    page.keyboard.type(PIN[2:])
    expect_progress(dialog, "6 of 6 digits")
    expect(field).to_have_value(BULLET * 6)
    assert pin_exposures(page, PIN) == []
    # Confirm turns on at 6 digits once the signing code has prepared the transaction (a disabled
    # button is skipped by Tab; on a loaded CI machine it was still preparing, and Tab went past it).
    expect(dialog.get_by_role("button", name="Confirm", exact=True)).to_be_enabled()
    # Tab order: the field, Cancel, Confirm, and round again inside the dialog.
    for name in ("Cancel", "Confirm"):
        page.keyboard.press("Tab")
        expect(dialog.get_by_role("button", name=name, exact=True)).to_be_focused()
    page.keyboard.press("Tab")
    expect(field).to_be_focused()
    # Escape closes it (nothing signed) and focus is back on the button that opened it.
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(confirm).to_be_focused()

    # Again: a wrong PIN keeps the dialog open with focus in the emptied field; Enter confirms.
    page.keyboard.press("Enter")
    expect(field).to_be_focused()
    expect_progress(dialog, "0 of 6 digits")
    page.keyboard.type("000000")
    page.keyboard.press("Enter")
    expect(dialog.get_by_role("alert")).to_have_text("Invalid PIN. Please try again.", timeout=KDF_TIMEOUT_MS)
    expect(field).to_be_focused()
    expect(field).to_have_value("")
    # The error is the field's: a screen reader back in it hears why it was emptied.
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_accessible_description("Invalid PIN. Please try again.")
    page.keyboard.type(PIN)
    page.keyboard.press("Enter")
    alert = page.get_by_role("alertdialog")
    expect(alert.get_by_role("heading")).to_have_text("Notice", timeout=KDF_TIMEOUT_MS)
    expect(alert.get_by_role("button", name="OK")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url("**/activity")
    browser_issues.assert_clean()


def test_every_dialog_takes_focus_and_gives_it_back(page, browser_issues):
    create_wallet(page, new_email("focus"))

    def opens_and_returns(opener: Locator, inside: Locator, dialog: Locator, key: str = "Escape") -> None:
        tab_to(page, opener)
        page.keyboard.press("Enter")
        expect(inside).to_be_focused()
        page.keyboard.press(key)
        expect(dialog).to_have_count(0)
        expect(opener).to_be_focused()

    # Receive QR: Copy (its first control), back to Receive.
    receive = page.get_by_role("dialog", name="Receive")
    opens_and_returns(page.get_by_role("button", name="Receive"), receive.get_by_role("button", name="Copy"), receive)
    # Add token: the address field it is for.
    add = page.get_by_role("dialog", name="Add token")
    opens_and_returns(page.get_by_role("button", name="Add token"), add.locator("#add-token-address"), add)

    # The alert dialog: OK, closed by Enter, back to the form's button.
    page.goto("/send")
    alert = page.get_by_role("alertdialog")
    opens_and_returns(page.get_by_role("button", name="Next"), alert.get_by_role("button", name="OK"), alert, "Enter")
    opens_and_returns(page.get_by_role("button", name="Next"), alert.get_by_role("button", name="OK"), alert, "Escape")
    # The camera scanner (no camera here: it says so inside): Close, back to the scan button.
    scanner = page.get_by_role("dialog", name="Scan QR code")
    opens_and_returns(page.get_by_role("button", name="Scan QR code"), scanner.get_by_role("button", name="Close"),
                      scanner)

    # The backup PIN dialog: the PIN field; it counts in Korean too.
    page.goto("/settings")
    backup = page.get_by_test_id("backup-dialog")
    opens_and_returns(page.get_by_role("button", name="Back up"), backup.get_by_label("PIN", exact=True), backup)
    page.get_by_role("radio", name="한국어").press("Space")
    expect(page.get_by_role("button", name="백업하기")).to_be_visible()
    tab_to(page, page.get_by_role("button", name="백업하기"))
    page.keyboard.press("Enter")
    page.keyboard.type("123")
    expect_progress(backup, "6자리 중 3자리 입력됨")
    page.keyboard.press("Escape")
    expect(backup).to_have_count(0)
    page.get_by_role("radio", name="English").press("Space")
    expect(page.get_by_role("button", name="Back up")).to_be_visible()

    # The restore prompt opens by itself (a new device): the PIN field; with no opener, focus
    # goes to the page's heading when it is cancelled.
    assert page.request.post("/api/v1/backup/touch").ok
    page.goto("/home")
    expect(page.get_by_role("heading", level=1)).to_have_text("Wallet")
    page.evaluate("() => localStorage.clear()")
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
    prompt = page.get_by_test_id("restore-dialog")
    expect(prompt.get_by_label("PIN", exact=True)).to_be_focused()
    page.keyboard.press("Escape")
    expect(prompt).to_have_count(0)
    expect(page.get_by_role("heading", level=1)).to_be_focused()
    browser_issues.assert_clean(ignore=[r"getUserMedia|NotFoundError|Requested device not found"])


def test_add_token_dialog_with_a_copycat_warning_by_keyboard(page, app_server, browser_issues):
    """Probing a token calling itself tUSD: the warning is read out (a status region), then the
    dialog is closed with Escape, or the token added with Enter, the keyboard alone."""
    create_wallet(page, new_email("copycat-keys"))
    copycat = deploy_copycat(app_server)
    opener = page.get_by_role("button", name="Add token")
    dialog = page.get_by_role("dialog", name="Add token")
    field = dialog.get_by_label("Token address")
    warning = dialog.get_by_role("status")  # a live region, there before the warning is put in
    text = (f"Your list already has tUSD at another address ({token_address(page, 'tUSD')}). Anyone can make a "
            "token with any name: add this one only if you trust its address.")
    for key in ("Escape", "Enter"):
        tab_to(page, opener)
        page.keyboard.press("Enter")
        expect(field).to_be_focused()
        expect(warning).to_have_text("")
        page.keyboard.type(copycat)
        page.keyboard.press("Enter")  # the form's one button: Probe
        expect(warning).to_have_text(text)
        expect(dialog.get_by_role("button", name="Add", exact=True)).to_be_enabled()
        expect(field).to_be_focused()  # still: Enter again adds it
        page.keyboard.press(key)
        expect(dialog).to_have_count(0)
        expect(opener).to_be_focused()
    expect(page.locator('.token-row[data-symbol="tUSD"]')).to_have_count(2)  # the copycat was added
    browser_issues.assert_clean()


def test_a_fields_error_describes_it_and_marks_it_invalid(page, browser_issues):
    """The error under a field (Add token's address, Send's pasted payment URI, Receive's amount)
    is the field's description while it shows, and the field is aria-invalid: a screen reader on
    the field hears why, not only its name; once the input is fixed, both go."""
    create_wallet(page, new_email("field-errors"))

    def tied(field: Locator, text: str) -> None:
        expect(field).to_have_attribute("aria-invalid", "true")
        expect(field).to_have_accessible_description(text)

    def untied(field: Locator) -> None:
        expect(field).not_to_have_attribute("aria-invalid", "true")
        expect(field).to_have_accessible_description("")

    page.get_by_role("button", name="Add token").click()
    dialog = page.get_by_role("dialog", name="Add token")
    field = dialog.get_by_label("Token address")
    untied(field)
    field.fill("0x12")
    page.keyboard.press("Enter")
    tied(field, "Invalid address. Enter 0x followed by 40 hex digits.")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)

    page.get_by_role("button", name="Receive", exact=True).click()
    dialog = page.get_by_role("dialog", name="Receive")
    dialog.get_by_role("combobox", name="Token").click()
    page.get_by_role("option", name=f"tUSD · {NETWORK}").click()
    field = dialog.get_by_label("Amount (optional)")
    field.fill("1.1234567")
    tied(field, "max 6 decimal places")
    field.fill("1.5")
    untied(field)
    page.keyboard.press("Escape")

    page.goto("/send")
    field = page.get_by_label("Recipient address")
    untied(field)
    field.fill(f"ethereum:{Account.create().address}@1/transfer?address={Account.create().address}")
    tied(field, "This payment request is for a network this wallet does not support (chain ID 1).")
    field.fill(Account.create().address)
    untied(field)
    browser_issues.assert_clean()


def test_reduced_motion_stops_spinners_and_overlays(page):
    create_wallet(page, new_email("motion"))
    # A Radix spinner as every spinner of the app renders (rx.spinner, loading buttons, overlays).
    page.evaluate("""() => {
      const s = document.createElement('span');
      s.className = 'rt-Spinner'; s.id = 'probe-spinner';
      s.innerHTML = '<span class="rt-SpinnerLeaf"></span>';
      document.querySelector('.radix-themes').appendChild(s);
    }""")
    animated = """() => [...document.querySelectorAll('#probe-spinner, #probe-spinner *, '
        + '.rt-DialogOverlay, .rt-DialogContent, .rt-BaseDialogOverlay, .rt-BaseDialogContent')]
      .map((el) => { const s = getComputedStyle(el);
                     return { name: s.animationName, duration: s.animationDuration }; })
      .filter((a) => a.name !== 'none' && a.duration !== '0s')"""
    receive = page.get_by_role("dialog", name="Receive")
    for motion in ("reduce", "no-preference"):
        page.emulate_media(reduced_motion=motion)
        page.get_by_role("button", name="Receive").click()
        expect(receive).to_be_visible()
        moving = page.evaluate(animated)
        if motion == "reduce":
            assert moving == [], moving
        else:  # the check can see an animation: the spinner leaf and the dialog's opening
            assert len(moving) >= 2, moving
        page.keyboard.press("Escape")
        expect(receive).to_have_count(0)
        expect(page.locator(".rt-DialogOverlay")).to_have_count(0)  # its closing animation too


def test_onboard_send_and_pay_with_the_keyboard_only(page, app_server, browser_issues):
    pointer: list[str] = []
    page.context.expose_binding("__nbPointer", lambda _source, what: pointer.append(what))
    page.context.add_init_script(_POINTER_RECORDER)
    email = new_email("keyboard")

    # Sign in: Tab to the button, Enter; the provider's popup by keyboard too.
    page.goto("/")
    google = page.get_by_role("button", name="Continue with Google")
    expect_quiet_live_region(page, page.locator("#full-screen-status"))  # "Signing in…" comes into it
    tab_to(page, google)
    with page.expect_popup() as popup_info:
        page.keyboard.press("Enter")
    popup = popup_info.value
    expect(popup.locator("input[type=email]")).to_be_focused()
    popup.keyboard.type(email)
    try:
        popup.keyboard.press("Enter")
    except Exception:  # noqa: BLE001 - the popup may close between keydown and keyup
        pass
    page.wait_for_url("**/onboarding**")

    # The PIN typed on the keyboard; the sixth digit creates the wallet.
    expect(page.get_by_role("button", name="1", exact=True)).to_be_visible()
    page.keyboard.type(PIN)
    page.wait_for_url("**/home**", timeout=KDF_TIMEOUT_MS)

    # Send: Home's Send button, the network by the select's keys, recipient, amount, Enter.
    wait_for_asset(page, "tUSD")
    tab_to(page, page.get_by_role("button", name="Send"))
    page.keyboard.press("Enter")
    page.wait_for_url("**/send")
    network = page.get_by_role("combobox", name="Network")
    tab_to(page, network)
    page.keyboard.press("Enter")
    expect(page.get_by_role("listbox")).to_be_visible()
    page.keyboard.type("Newbl")
    page.keyboard.press("Enter")
    expect(network).to_have_text(NETWORK)
    expect(page.get_by_role("combobox", name="Token")).to_have_text("tUSD · Newbl Test USD")
    tab_to(page, page.get_by_label("Recipient address"))
    page.keyboard.type(Account.create().address)
    tab_to(page, page.get_by_label("Amount"))
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    page.wait_for_url("**/sign?tx=**")
    expect(page.locator("#sign-amount")).to_have_text("2 tUSD")
    tab_to(page, page.get_by_role("button", name="Confirm"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog", name="Enter your PIN").get_by_label("PIN", exact=True)).to_be_focused()
    page.keyboard.type(PIN)
    page.keyboard.press("Enter")
    alert = page.get_by_role("alertdialog")
    expect(alert.get_by_role("alert")).to_have_text(
        re.compile(r"Transaction submitted\. Hash: 0x[0-9a-f]{4}…[0-9a-f]{4}"), timeout=KDF_TIMEOUT_MS)
    expect(alert.get_by_role("button", name="OK")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url("**/activity")

    # Pay merchant links: tEUR (no permit) with Pay, the approve PIN, the Pay PIN; then tUSD
    # gaslessly with Pay and the one PIN of the Permit and the Pay; each confirmed with Enter.
    plain = deployed_token(app_server, "tEUR")
    wait_for_chain_balance(chain_web3(app_server), plain, me_address(page), 1_500_000)
    token = token_address(page, "tUSD")
    wait_for_balance(page, "tUSD", 1_500_000)
    for link_token, titles in ((plain, ("Approve the token", "Sign the payment")), (token, ("Sign the payment",))):
        page.goto(merchant_link(Account.create().address, link_token, "1.5"))
        expect(page.locator("#pay-amount")).to_have_text("1.5")
        tab_to(page, page.get_by_role("button", name="Pay", exact=True))
        page.keyboard.press("Enter")
        for title in titles:
            field = page.get_by_role("dialog", name=title).get_by_label("PIN", exact=True)
            expect(field).to_be_focused(timeout=30_000)
            page.keyboard.type(PIN)
            page.keyboard.press("Enter")
            expect(page.get_by_role("dialog", name=title)).to_have_count(0, timeout=KDF_TIMEOUT_MS)
        page.wait_for_url("**/activity**", timeout=KDF_TIMEOUT_MS)
        expect(alert.get_by_role("alert")).to_have_text("Payment complete.")
        expect(alert.get_by_role("button", name="OK")).to_be_focused()
        page.keyboard.press("Enter")
        expect(alert).to_have_count(0)

    assert pointer == [], pointer
    browser_issues.assert_clean()


def test_an_enter_before_the_pin_dialog_is_ready_confirms_once_it_is(page, app_server, browser_issues):
    """The PIN typed and Enter pressed while the dialog's signing code still loads (held here):
    nothing happens until it has loaded, then the Enter confirms; it is not lost."""
    create_wallet(page, new_email("early-enter"))
    plain = deployed_token(app_server, "tEUR")  # no permit: the approve dialog
    wait_for_chain_balance(chain_web3(app_server), plain, me_address(page), 1_500_000)
    held = []
    page.route("**/assets/keyring-*.js", lambda route: held.append(route))  # routing also turns the HTTP cache off
    page.goto(merchant_link(Account.create().address, plain, "1.5"))
    tab_to(page, page.get_by_role("button", name="Pay", exact=True))
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Approve the token")
    expect(dialog.get_by_label("PIN", exact=True)).to_be_focused(timeout=30_000)
    page.keyboard.type(PIN)
    page.keyboard.press("Enter")
    expect(dialog.get_by_role("button", name="Confirm")).to_be_disabled()  # not ready: the code is held
    assert held, "the signing code was not requested"
    for route in held:
        route.continue_()
    page.unroute("**/assets/keyring-*.js")
    expect(dialog).to_have_count(0, timeout=KDF_TIMEOUT_MS)  # the early Enter confirmed
    expect(page.get_by_role("dialog", name="Sign the payment")).to_be_visible(timeout=KDF_TIMEOUT_MS)
    browser_issues.assert_clean()
