"""Steps a person takes, shared by the e2e tests: sign in through the dev provider's popup,
create a wallet with the PIN pad."""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, expect

REPO_ROOT = Path(__file__).resolve().parents[2]
JSQR = REPO_ROOT / "tools" / "node_modules" / "jsqr" / "dist" / "jsQR.js"
PIN = "135790"


def pin_field(dialog: Locator, label: str = "PIN") -> Locator:
    """The dialog's PIN field, checked to be one no password manager offers to save (issue 12
    item 5): no password input anywhere on the page, a text field masked by CSS, outside any
    form, with no password-like name or id."""
    field = dialog.get_by_label(label, exact=True)
    expect(field).to_be_visible()
    expect(dialog.page.locator("input[type=password]")).to_have_count(0)
    expect(field).to_have_attribute("type", "text")
    expect(field).to_have_attribute("inputmode", "numeric")
    expect(field).to_have_attribute("autocomplete", "off")
    found = field.evaluate(
        """el => ({mask: getComputedStyle(el).webkitTextSecurity, inForm: el.closest('form') !== null,
                   passwordish: /pass|pwd/i.test(el.name + ' ' + el.id)})"""
    )
    assert found == {"mask": "disc", "inForm": False, "passwordish": False}, found
    return field


def switch_language(page: Page, label: str, code: str) -> None:
    """Taps the language `label` on /settings and waits until the browser holds `code` (nb.lang): by
    then every earlier event of the page (its on_load reads too) has been handled (one client's
    events are handled in order). Still on /settings: / has the same radios and writes nb.lang too,
    and a page taken there by a stray redirect (an event of the page before, handled late) passed
    here with the account's language unchanged."""
    page.get_by_role("radio", name=label).click()
    page.wait_for_function("(c) => localStorage.getItem('nb.lang') === c", arg=code)
    assert re.search(r"^/settings/?$", page.evaluate("location.pathname")), page.url


def set_language(page: Page, label: str, code: str) -> None:
    """switch_language on a new load of /settings."""
    page.goto("/settings")
    switch_language(page, label, code)


def new_email(prefix: str = "user") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}@example.com"


def sign_in(page: Page, email: str, button: str = "Continue with Google") -> None:
    """Click a sign-in button on /, type the e-mail in the dev provider's popup."""
    with page.expect_popup() as popup_info:
        page.get_by_role("button", name=button).click()
    popup = popup_info.value
    try:
        popup.locator("input[type=email]").fill(email)
    except PlaywrightError as e:
        # Seen rarely under load (test_reconnect after its restart): say what the popup showed.
        from tests.e2e.conftest import save_screenshot

        try:
            shown = popup.evaluate("document.body ? document.body.innerText : ''")[:600]
            save_screenshot(popup, "FAILED-sign-in-popup")
        except PlaywrightError as gone:
            shown = f"(unreadable: {gone.message.splitlines()[0]})"
        raise AssertionError(f"the sign-in popup ({popup.url}) shows no e-mail field: {shown!r}") from e
    # A click, not Enter: the popup may close between keydown and keyup once it has answered.
    popup.locator("#continue").click(no_wait_after=True)


def answer_popups_until(page: Page, email: str, done, timeout: float = 90) -> None:
    """Wait until done() is true, answering the dev provider's popups on the way. Unlike sign_in,
    a popup may never need an answer: the token popup completes and closes by itself when the
    provider remembers the account; if it shows its e-mail form instead, type the e-mail."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            from tests.e2e.conftest import save_screenshot
            save_screenshot(page, "FAILED-popup-step")
            raise AssertionError("the popup step did not finish: " + page.locator("body").inner_text()[:800])
        for other in page.context.pages:
            if other is page or other.is_closed():
                continue
            try:
                box = other.locator("input[type=email], input[name=email]")
                if box.count() and box.first.is_visible():
                    box.first.fill(email)
                    other.keyboard.press("Enter")
            except Exception:  # noqa: BLE001 - the popup may close between the checks
                pass
        page.wait_for_timeout(200)  # polling interval of the condition above


def sign_in_to_onboarding(page: Page, email: str) -> None:
    page.goto("/")
    sign_in(page, email)
    page.wait_for_url("**/onboarding**")
    expect(page.get_by_role("button", name="1", exact=True)).to_be_visible()


def expect_alert(page: Page, message: str, title: str = "Error", ok: str | None = "OK",
                 timeout: float | None = None) -> None:
    """The shared alert dialog shows exactly `title` and `message`; the `ok` button closes it."""
    dialog = page.get_by_role("alertdialog")
    expect(dialog.get_by_role("heading")).to_have_text(title, timeout=timeout)
    expect(dialog.get_by_role("alert")).to_have_text(message)
    if ok:
        dialog.get_by_role("button", name=ok).click()
        expect(dialog).to_have_count(0)


def press_pin(page: Page, pin: str = PIN) -> None:
    for digit in pin:
        page.get_by_role("button", name=digit, exact=True).click()


def create_wallet(page: Page, email: str, pin: str = PIN) -> str:
    """Sign in as a new user and create the wallet; returns the registered address."""
    sign_in_to_onboarding(page, email)
    # The onboarding PIN is typed on a pad of buttons: no field a password manager could save.
    expect(page.locator("input[type=password], form input")).to_have_count(0)
    press_pin(page, pin)
    page.wait_for_url("**/home**", timeout=60_000)
    return me(page)["address"]


def me(page: Page) -> dict:
    """GET /api/v1/me with the page's cookies."""
    response = page.request.get("/api/v1/me")
    assert response.ok, response.status
    return response.json()


def local_materials(page: Page, owner: str) -> dict:
    names = ["lwrapIv", "lwrapCt", "kdfSaltB", "kdfParams", "ciphertextIv", "ciphertext", "devSecret"]
    return page.evaluate(
        "([owner, names]) => Object.fromEntries(names.map((n) => [n, localStorage.getItem(owner + ':' + n)]))",
        [owner.lower(), names],
    )


def decode_qr_png(png: bytes) -> str | None:
    """Decode a QR code image with jsQR under node (independent of the app's own code)."""
    from io import BytesIO

    from PIL import Image

    img = Image.open(BytesIO(png)).convert("RGBA")
    script = (
        f"const jsQR = require({json.dumps(str(JSQR))});"
        "let chunks=[];process.stdin.on('data',c=>chunks.push(c));process.stdin.on('end',()=>{"
        "const buf=Buffer.concat(chunks);const w=buf.readUInt32BE(0),h=buf.readUInt32BE(4);"
        "const r=jsQR(new Uint8ClampedArray(buf.subarray(8)),w,h);process.stdout.write(r?r.data:'');});"
    )
    header = img.width.to_bytes(4, "big") + img.height.to_bytes(4, "big")
    out = subprocess.run(["node", "-e", script], input=header + img.tobytes(), capture_output=True, timeout=30,
                         check=True)
    return out.stdout.decode() or None


def assert_within_screen(locator: Locator) -> None:
    """The element is shown whole inside the page's width: it starts and ends on the screen and
    nothing in it is cut (its content no wider than its box)."""
    expect(locator).to_be_visible()
    shown = locator.evaluate(
        """e => { const r = e.getBoundingClientRect();
                  return {left: r.left, right: r.right, screen: document.documentElement.clientWidth,
                          content: e.scrollWidth, box: e.clientWidth}; }"""
    )
    assert 0 <= shown["left"] and shown["right"] <= shown["screen"], shown
    assert shown["content"] <= shown["box"], shown
