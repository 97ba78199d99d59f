"""Issue 5 in Chromium at 390x844: back up from /settings to the Drive stand-in, restore on a
new device through the device check (wrong PIN first), tampered and foreign files, a server
that says hasBackup without a file, and no secret in anything our server receives or logs.
Issue 10: the prompt comes back after a cancel (bottom navigation, tab shown again), a Google
script that fails to load offers onboarding or cancel, and every restore error reads in Korean."""

import json
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from eth_account import Account
from eth_account.messages import encode_defunct
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.drive_api import DriveApi, backup_name
from tests.e2e.flows import (
    PIN,
    answer_popups_until,
    create_wallet,
    local_materials,
    me,
    new_email,
    sign_in,
)
from tests.e2e.flows_backup import (
    backup_file,
    backup_from_settings,
    enter_pin_and_confirm,
    put_backup_file,
    restore_attempt,
    storage,
)
from tests.e2e.flows_payment import server_env
from tests.e2e.leaks import LeakRecorder, phrase_patterns, phrase_windows
from tests.e2e.vault_py import backup_key, unwrap
from wallet_app.dev import idp

Account.enable_unaudited_hdwallet_features()
WRONG_PIN = "246801"


def new_device(browser, app_server, recorder: LeakRecorder | None = None, errors: list | None = None):
    """A fresh profile (a new device); console and page errors go to `errors`."""
    ctx = browser.new_context(base_url=app_server.base_url, **helpers.MOBILE_CONTEXT)
    ctx.set_default_timeout(20_000)
    if errors is not None:
        ctx.on("console", lambda m: m.type == "error" and errors.append(m.text))
        ctx.on("weberror", lambda e: errors.append(str(e.error)))
    if recorder:
        recorder.attach(ctx)
    page = ctx.new_page()
    return ctx, page


def expect_prompt(page, title="You signed in on a new device.", description="A backup restore is required."):
    """The device check's restore prompt is up with its two notices; returns it."""
    prompt = page.get_by_test_id("restore-dialog")
    expect(prompt.get_by_role("heading")).to_have_text(title)
    expect(prompt.get_by_text(description, exact=True)).to_be_visible()
    return prompt


def sign_in_on_new_device(page, email, **texts):
    """A device without the wallet: sign in, land on /home, get the restore prompt."""
    page.goto("/")
    sign_in(page, email)
    page.wait_for_url("**/home**")
    return expect_prompt(page, **texts)


def wallet_with_backup_flag(page, email, lang=None):
    """A wallet whose server record says it has a backup (no file written); `lang`: the
    account's language, set in settings. Returns the address."""
    address = create_wallet(page, email)
    assert page.request.post("/api/v1/backup/touch").ok
    if lang:
        page.goto("/settings")
        page.get_by_role("radio", name=lang).click()
        expect(page.get_by_role("radio", name=lang)).to_be_checked()
    return address


def assert_revoked(page, tokens) -> None:
    """Issue 12 item 5: every Drive token the page used was revoked (GIS revoke -> the stand-in's
    /dev-idp/revoke) once its backup or restore ended: Drive refuses it now."""
    assert tokens
    for token in tokens:
        resp = page.request.get("/dev-drive/drive/v3/files", params={"spaces": "appDataFolder"},
                                headers={"Authorization": f"Bearer {token}"})
        assert resp.status == 401, resp.text()


def test_backup_then_restore_on_new_device(page, browser, app_server, screenshot, browser_issues):
    recorder = LeakRecorder(app_server.base_url).attach(page.context)
    revokes: list[str] = []
    page.context.on("request", lambda r: r.url.endswith("/dev-idp/revoke") and revokes.append(r.method))
    email = new_email("backup")
    address = create_wallet(page, email)

    page.goto("/settings")
    expect(page.locator("#last-backup")).to_have_text("-")
    assert me(page)["hasBackup"] is False
    backup_from_settings(page, email, PIN)
    assert revokes == ["POST"]
    assert_revoked(page, set(recorder.google_tokens))

    # The time the server recorded, in the page's locale format (en here).
    last = page.request.get("/api/v1/backup/info").json()["last_backup_at"]
    assert isinstance(last, int) and last > 0
    shown = page.locator("#last-backup")
    expected = page.evaluate(
        "(s) => new Intl.DateTimeFormat('en', {dateStyle: 'medium', timeStyle: 'short'}).format(new Date(s * 1000))",
        last)
    expect(shown).to_have_text(expected)
    assert re.search(r"\d{4}", expected)
    assert me(page)["hasBackup"] is True
    screenshot("settings-backup-time")
    browser_issues.assert_clean()

    drive = DriveApi(app_server.base_url, email)
    file_id = drive.file_id(backup_name(address))
    assert file_id, "no backup file on the Drive stand-in"
    file_bytes = drive.download(file_id)
    # Stored in this server's own stand-in Drive, not in the developer's data/dev-drive.
    stored = Path(server_env(app_server)["DEV_DRIVE_DIR"]).rglob(f"{file_id}.bin")
    assert [f.read_bytes() for f in stored] == [file_bytes]
    original = unwrap(local_materials(page, address), PIN)

    errors: list = []
    ctx, page2 = new_device(browser, app_server, recorder, errors)
    try:
        prompt = sign_in_on_new_device(page2, email)
        screenshot("restore-prompt", page2)
        # Wrong PIN first: the message, and the prompt stays.
        restore_attempt(page2, email, WRONG_PIN,
                        lambda: "Invalid PIN" in (prompt.get_by_role("alert").all_inner_texts() or [""])[0])
        expect(prompt.get_by_role("alert")).to_have_text("Invalid PIN. Please try again.")
        assert local_materials(page2, address)["lwrapCt"] is None

        done = page2.get_by_role("alertdialog").filter(has_text="Your wallet has been restored.")
        restore_attempt(page2, email, PIN, lambda: done.count() > 0)
        expect(prompt).to_have_count(0)
        done.get_by_role("button", name="OK").click()
        page2.wait_for_url("**/home**")
        short = f"{address[:6]}…{address[-4:]}"
        expect(page2.locator("#home-address")).to_have_text(short)
        assert me(page2)["address"] == address

        # The restored materials are the same wallet and open with the PIN (it can sign).
        restored = local_materials(page2, address)
        assert restored == local_materials(page, address)
        opened = unwrap(restored, PIN)
        acct = Account.from_mnemonic(opened.words, account_path="m/44'/60'/0'/0/0")
        assert acct.address.lower() == address
        assert Account.recover_message(encode_defunct(text="hi"),
                                       signature=acct.sign_message(encode_defunct(text="hi")).signature) == acct.address
        # The device check no longer prompts on another page.
        page2.goto("/settings")
        expect(page2.locator("#last-backup")).not_to_have_text("-")
        expect(page2.get_by_test_id("restore-dialog")).to_have_count(0)
        assert not errors, errors
    finally:
        helpers.close_context(ctx)
    # The backup's token, the wrong-PIN attempt's and the restore's: all revoked.
    assert len(recorder.google_tokens) >= 3
    assert_revoked(page, recorder.google_tokens)

    # Nothing secret reached our server: requests, websocket frames, the server log. The Drive
    # tokens went to the Drive stand-in only (as they would to Google).
    assert recorder.google_tokens, "no Drive request was seen"
    secrets = {"PIN": PIN, "wrong PIN": WRONG_PIN, "K": original.k, "devSecret": original.dev_secret,
               "K xor devSecret": original.wrapped, "private key": original.private_key,
               "argon2 output (local)": original.pin_key,
               "argon2 output (backup)": backup_key(file_bytes, PIN),
               "argon2 output (backup, wrong PIN)": backup_key(file_bytes, WRONG_PIN)}
    secrets.update({f"Drive token {i}": token for i, token in enumerate(sorted(recorder.google_tokens))})
    secrets.update({f"phrase words {i}": text for i, text in enumerate(phrase_windows(original.words))})
    secrets.update({f"phrase words {i} (any separator)": pattern
                    for i, pattern in enumerate(phrase_patterns(original.words))})
    recorder.assert_absent(secrets, app_server.log_path.read_text(errors="replace"))
    # The recorder works: the public address does travel.
    assert any(address in f for f in recorder.frames)


def test_a_backup_the_server_never_heard_of_is_told_by_the_device_check(page, browser, app_server):
    """The backup reached Drive, but its /backup/touch did not reach us (the phone offline right
    after the upload; every attempt lost). The server said "no backup", so a new device was sent to
    onboarding to replace a wallet whose backup was on Drive. The device that wrote it tells the
    server at its next check (it holds the backup's driveMeta), and a new device is asked to restore."""
    email = new_email("untold")
    address = create_wallet(page, email)
    touches: list[str] = []

    def lost(route):
        touches.append(route.request.post_data or "")
        route.abort()

    page.route("**/api/v1/backup/touch", lost)
    backup_from_settings(page, email, PIN)
    assert touches == [json.dumps({"address": address}, separators=(",", ":"))] * 3  # each names the wallet
    assert me(page)["hasBackup"] is False
    page.unroute("**/api/v1/backup/touch")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Home").click()  # a device check
    helpers.wait_for_sent(page, '.device_checked","payload":{"status":"backed_up"}')
    deadline = time.monotonic() + 10
    while not me(page)["hasBackup"]:  # the event's answer is not awaited by the page
        assert time.monotonic() < deadline, "the device check did not tell the server of the backup"
        page.wait_for_timeout(100)

    ctx, page2 = new_device(browser, app_server)
    try:
        sign_in_on_new_device(page2, email)  # the restore prompt, not "No backup file on Google Drive."
    finally:
        helpers.close_context(ctx)


def test_tampered_and_foreign_backup_files(page, browser, app_server):
    email = new_email("tamper")
    address = create_wallet(page, email)
    backup_from_settings(page, email, PIN)
    drive = DriveApi(app_server.base_url, email)
    file_id = drive.file_id(backup_name(address))
    good = drive.download(file_id)
    nl = good.index(b"\n")
    tampered = bytearray(good)
    tampered[nl + 1 + 7] ^= 0x01
    drive.replace(file_id, bytes(tampered))

    ctx, page2 = new_device(browser, app_server)
    try:
        prompt = sign_in_on_new_device(page2, email)
        # Something this device already holds for the address (partial materials) must survive.
        page2.evaluate("(o) => { localStorage.setItem(o + ':devSecret', 'sentinel'); }", address)
        before = storage(page2)
        # AES-GCM cannot tell a changed body from a wrong PIN: the right PIN is refused.
        restore_attempt(page2, email, PIN, lambda: prompt.get_by_role("alert").count() > 0)
        expect(prompt.get_by_role("alert")).to_have_text("Invalid PIN. Please try again.")
        assert storage(page2) == before

        # Someone else's backup under this name: the header names another owner.
        other = "0x" + "ab" * 20
        header = good[:nl].decode().replace(address, other)
        assert other in header
        drive.replace(file_id, header.encode() + good[nl:])
        failed = page2.get_by_role("alertdialog").filter(has_text="Recovery failed: ")
        restore_attempt(page2, email, PIN, lambda: failed.count() > 0)
        expect(failed.get_by_role("alert")).to_have_text("Recovery failed: Backup owner mismatch")
        assert storage(page2) == before
        # The choice: cancel stays here; the prompt waits for the next check.
        expect(failed.get_by_role("button", name="Cancel")).to_be_visible()
        failed.get_by_role("button", name="Cancel").click()
        expect(failed).to_have_count(0)
        expect(page2).to_have_url(re.compile(r"/home"))

        # A broken header line, and then continuing to onboarding.
        drive.replace(file_id, b"z" + good[1:])
        page2.goto("/activity")
        restore_attempt(page2, email, PIN, lambda: failed.count() > 0)
        expect(failed.get_by_role("alert")).to_have_text("Recovery failed: Invalid backup header")
        assert storage(page2) == before
        failed.get_by_role("button", name="Continue to onboarding").click()
        page2.wait_for_url("**/onboarding**")
    finally:
        helpers.close_context(ctx)


def test_has_backup_without_a_drive_file_goes_to_onboarding(page, browser, app_server):
    email = new_email("nofile")
    address = create_wallet(page, email)
    # The server believes a backup exists, but nothing was ever written to Drive.
    assert page.request.post("/api/v1/backup/touch").ok
    assert me(page)["hasBackup"] is True
    # The last backup time follows the language's format (Korean here), a dash never.
    last = page.request.get("/api/v1/backup/info").json()["last_backup_at"]
    page.goto("/settings")
    page.get_by_role("radio", name="한국어").click()
    expected = page.evaluate(
        "(s) => new Intl.DateTimeFormat('ko-KR', {dateStyle: 'medium', timeStyle: 'short'}).format(new Date(s * 1000))",
        last)
    expect(page.locator("#last-backup")).to_have_text(expected)
    page.get_by_role("radio", name="English").click()
    expect(page.get_by_role("button", name="Back up")).to_be_visible()

    ctx, page2 = new_device(browser, app_server)
    try:
        sign_in_on_new_device(page2, email)
        notice = page2.get_by_role("alertdialog").filter(has_text="No backup file on Google Drive.")
        restore_attempt(page2, email, PIN, lambda: notice.count() > 0)
        expect(notice.get_by_role("alert")).to_have_text("No backup file on Google Drive. Redirecting to onboarding.")
        assert storage(page2) == {} or not any(k.startswith(address) for k in storage(page2))
        notice.get_by_role("button", name="OK").click()
        page2.wait_for_url("**/onboarding**")
    finally:
        helpers.close_context(ctx)


def test_prompt_returns_after_cancel_on_navigation_and_when_visible(page, browser, app_server):
    """Specification section 4: the device check runs on each route change and when the tab
    becomes visible; a cancelled restore is asked for again then."""
    email = new_email("reprompt")
    wallet_with_backup_flag(page, email)
    ctx, page2 = new_device(browser, app_server)
    try:
        prompt = sign_in_on_new_device(page2, email)
        prompt.get_by_role("button", name="Cancel").click()
        expect(prompt).to_have_count(0)

        # A client-side route change through the bottom navigation (the document stays).
        page2.evaluate("() => { window.__samePage = true; }")
        page2.get_by_role("navigation").get_by_role("link", name="Activity").click()
        page2.wait_for_url("**/activity**")
        expect_prompt(page2)
        assert page2.evaluate("() => window.__samePage === true")
        prompt.get_by_role("button", name="Cancel").click()
        expect(prompt).to_have_count(0)

        # The tab becomes visible again.
        page2.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
        expect_prompt(page2)
        assert page2.evaluate("() => window.__samePage === true")
    finally:
        helpers.close_context(ctx)


def test_google_script_failing_to_load_offers_onboarding_or_cancel(page, browser, app_server):
    email = new_email("nogis")
    wallet_with_backup_flag(page, email)
    ctx, page2 = new_device(browser, app_server)
    try:
        page2.goto("/")
        expect(page2.get_by_role("button", name="Continue with Google")).to_be_enabled()
        # From here on the browser cannot load Google Identity Services (the dev stand-in's script).
        page2.route("**/dev-idp/gsi/client", lambda route: route.abort())
        sign_in(page2, email)
        page2.wait_for_url("**/home**")
        prompt = expect_prompt(page2)
        expect(prompt.get_by_role("alert")).to_have_text("Recovery failed: Failed to load Google Identity Services")

        failed = page2.get_by_role("alertdialog").filter(has_text="Recovery failed: ")
        restore_attempt(page2, email, PIN, lambda: failed.count() > 0)
        expect(failed.get_by_role("alert")).to_have_text("Recovery failed: Failed to load Google Identity Services")
        expect(prompt).to_have_count(0)
        expect(failed.get_by_role("button", name="Cancel")).to_be_visible()
        failed.get_by_role("button", name="Continue to onboarding").click()
        page2.wait_for_url("**/onboarding**")
    finally:
        helpers.close_context(ctx)


def test_restore_errors_read_in_korean(page, browser, app_server):
    """Every restore failure a broken or foreign file can cause shows catalogue text in Korean:
    no English, no code (INVALID_HEADER, OWNER_MISMATCH, UNSUPPORTED_VERSION, BUNDLE_INVALID,
    INVALID_PIN)."""
    email = new_email("ko-restore")
    address = wallet_with_backup_flag(page, email, lang="한국어")
    drive = DriveApi(app_server.base_url, email)
    ctx, page2 = new_device(browser, app_server)
    ko = {"label": "PIN 번호", "confirm": "확인"}
    failed = page2.get_by_role("alertdialog").filter(has_text="복구에 실패했습니다: ")

    next_page = iter([("설정", "/settings"), ("홈", "/home")] * 3)

    def attempt_fails_with(text):
        restore_attempt(page2, email, PIN, lambda: failed.count() > 0, **ko)
        expect(failed.get_by_role("alert")).to_have_text("복구에 실패했습니다: " + text)
        assert not re.search(r"[A-Za-z]{4,}", failed.inner_text()), failed.inner_text()
        failed.get_by_role("button", name="취소").click()
        expect(failed).to_have_count(0)
        # The next check (a route change through the bottom navigation) asks again.
        link, path = next(next_page)
        page2.get_by_role("navigation").get_by_role("link", name=link).click()
        page2.wait_for_url(f"**{path}**")
        expect_prompt(page2, **prompt_texts)

    prompt_texts = {"title": "새 기기에서 로그인했습니다.", "description": "백업을 복원해야 합니다."}
    try:
        # A broken header line.
        put_backup_file(drive, address, b"not a backup header\n" + bytes(64))
        prompt = sign_in_on_new_device(page2, email, **prompt_texts)
        attempt_fails_with("백업 헤더가 올바르지 않습니다")

        # A well-formed file of another owner.
        put_backup_file(drive, address, backup_file("0x" + "ab" * 20, PIN, {"version": 1}))
        attempt_fails_with("백업 소유자가 일치하지 않습니다")

        # The PIN opens it, but the bundle inside is of another version, then incomplete.
        put_backup_file(drive, address, backup_file(address, PIN, {"version": 2}))
        attempt_fails_with("지원하지 않는 번들 버전입니다")
        put_backup_file(drive, address, backup_file(address, PIN, {"version": 1, "devSecret": "AAAA"}))
        attempt_fails_with("백업 번들이 올바르지 않습니다")

        # A file the PIN does not open: the prompt says so and stays.
        put_backup_file(drive, address, backup_file(address, "000000", {"version": 1}))
        restore_attempt(page2, email, PIN, lambda: prompt.get_by_role("alert").count() > 0, **ko)
        expect(prompt.get_by_role("alert")).to_have_text("PIN이 올바르지 않습니다. 다시 시도하세요.")
        assert local_materials(page2, address)["lwrapCt"] is None
    finally:
        helpers.close_context(ctx)


def test_backup_errors_read_in_korean(page):
    """The settings backup's failures in Korean: a wrong PIN, corrupted local materials, Drive
    refusing the listing (catalogue text, the status filled in; never a code or English)."""
    email = new_email("ko-backup")
    address = create_wallet(page, email)
    page.goto("/settings")
    page.get_by_role("radio", name="한국어").click()
    page.get_by_role("button", name="백업하기").click()
    alert = page.get_by_test_id("backup-dialog").get_by_role("alert")

    def attempt_fails_with(pin, text):
        enter_pin_and_confirm(page, "backup-dialog", pin, label="PIN 번호", confirm="확인")
        answer_popups_until(page, email, lambda: alert.count() > 0 and alert.inner_text() == text)
        expect(alert).to_have_text(text)

    attempt_fails_with(WRONG_PIN, "백업 실패: PIN이 올바르지 않습니다. 다시 시도하세요.")

    # Drive answers the file listing with 503.
    def listing(url):
        return "/dev-drive/drive/v3/files?" in url

    page.route(listing, lambda route: route.fulfill(status=503, body=""))
    attempt_fails_with(PIN, "백업 실패: Drive 목록 조회 실패: 503")
    page.unroute(listing)

    # The PIN opens the key, but the stored phrase ciphertext was changed.
    page.evaluate("""(o) => {
        const key = o + ':ciphertext', b = atob(localStorage.getItem(key));
        const flipped = String.fromCharCode(b.charCodeAt(0) ^ 1) + b.slice(1);
        localStorage.setItem(key, btoa(flipped));
    }""", address)
    attempt_fails_with(PIN, "백업 실패: 로컬 자료가 손상되었습니다")
    assert me(page)["hasBackup"] is False


def test_restore_of_a_backup_asking_4_gib_fails_fast_and_changes_nothing(page, browser, app_server):
    """Issue 12 item 5: a header with other KDF parameters than design.md's (m = 4 GiB here) is
    refused before any Argon2 work, with the exact message; localStorage stays byte-identical."""
    email = new_email("kdf4g")
    address = wallet_with_backup_flag(page, email)
    drive = DriveApi(app_server.base_url, email)
    put_backup_file(drive, address,
                    backup_file(address, PIN, {"version": 1}, kdf={"t": 3, "m": 4 * 1024 * 1024, "p": 1}))
    ctx, page2 = new_device(browser, app_server)
    # Counts the Web Workers the page starts (Argon2 runs in one).
    ctx.add_init_script("""(() => { const Real = window.Worker; window.__workers = 0;
        window.Worker = function (...args) { window.__workers += 1; return new Real(...args); }; })();""")
    try:
        sign_in_on_new_device(page2, email)
        # Something this device already holds for the address must survive.
        page2.evaluate("(o) => { localStorage.setItem(o + ':devSecret', 'sentinel'); }", address)
        before = storage(page2)
        failed = page2.get_by_role("alertdialog").filter(has_text="Recovery failed: ")
        started = time.monotonic()
        restore_attempt(page2, email, PIN, lambda: failed.count() > 0)
        elapsed = time.monotonic() - started
        expect(failed.get_by_role("alert")).to_have_text(
            "Recovery failed: Unsupported backup: unknown key parameters. Nothing was changed.")
        assert page2.evaluate("() => window.__workers") == 0
        assert elapsed < 15, elapsed  # the token popup and Drive only; no KDF run
        assert storage(page2) == before
    finally:
        helpers.close_context(ctx)


def remember_google_account(ctx, base_url: str, email: str) -> None:
    """The browser's Google session is now `email` (the dev provider's account cookie, like
    Google's own sign-in cookie): its popup picks that account unasked unless the request names
    another (login_hint)."""
    host = urlsplit(base_url).hostname
    ctx.add_cookies([{"name": idp.ACCOUNT_COOKIE, "value": email, "domain": host, "path": idp.PREFIX}])


def drive_token_hints(ctx) -> list:
    """The login_hint of every Drive token request the context's popups make (None: no hint)."""
    hints: list = []

    def note(request):
        query = parse_qs(urlsplit(request.url).query)
        if urlsplit(request.url).path == idp.PREFIX + "/authorize" and query.get("response_type") == ["token"]:
            hints.append((query.get("login_hint") or [None])[0])

    ctx.on("request", note)
    return hints


def test_drive_token_is_for_the_signed_in_account_when_the_browser_has_another(page, browser, app_server):
    """Several Google accounts in one browser: backup and restore ask the token for the signed-in
    account (its e-mail as GIS login_hint), so the file goes to, and is found in, that account's
    Drive, not the Drive of the account the browser would pick (here the last one used)."""
    email, other = new_email("hint"), new_email("hint-other")
    address = create_wallet(page, email)
    hints = drive_token_hints(page.context)
    remember_google_account(page.context, app_server.base_url, other)
    backup_from_settings(page, email, PIN)
    assert DriveApi(app_server.base_url, other).file_id(backup_name(address)) is None
    assert DriveApi(app_server.base_url, email).file_id(backup_name(address))
    assert hints == [email]

    ctx, page2 = new_device(browser, app_server)
    try:
        new_hints = drive_token_hints(ctx)
        sign_in_on_new_device(page2, email)
        remember_google_account(ctx, app_server.base_url, other)
        done = page2.get_by_role("alertdialog").filter(has_text="Your wallet has been restored.")
        no_file = page2.get_by_role("alertdialog").filter(has_text="No backup file on Google Drive.")
        restore_attempt(page2, email, PIN, lambda: done.count() > 0 or no_file.count() > 0)
        expect(no_file).to_have_count(0)
        assert new_hints == [email]
        done.get_by_role("button", name="OK").click()
        page2.wait_for_url("**/home**")
        assert local_materials(page2, address)["lwrapCt"] is not None
        assert me(page2)["address"] == address
    finally:
        helpers.close_context(ctx)


def pick_google_account(ctx, email: str) -> str:
    """The user picks `email` in Google's account chooser, whatever login_hint preselected: the
    context's Drive token requests go to the dev provider for that account. Returns the route's
    URL pattern (for unroute)."""
    pattern = f"**{idp.PREFIX}/authorize?*"

    def pick(route):
        parts = urlsplit(route.request.url)
        query = parse_qs(parts.query)
        if query.get("response_type") != ["token"]:
            return route.continue_()
        query["login_hint"] = [email]
        return route.continue_(url=urlunsplit(parts._replace(query=urlencode(query, doseq=True))))

    ctx.route(pattern, pick)
    return pattern


def test_a_drive_token_of_another_google_account_is_refused(page, browser, app_server):
    """login_hint only preselects the signed-in account in Google's chooser; the user may pick
    another. Drive's about.user then names that account: the backup (in Korean) and the restore
    (in English) refuse its token, say which account to choose, write and change nothing, and
    work once the signed-in account is picked."""
    email, other = new_email("pick"), new_email("pick-other")
    address = create_wallet(page, email)
    page.goto("/settings")
    page.get_by_role("radio", name="한국어").click()
    page.get_by_role("button", name="백업하기").click()
    pattern = pick_google_account(page.context, other)
    enter_pin_and_confirm(page, "backup-dialog", PIN, label="PIN 번호", confirm="확인")
    alert = page.get_by_test_id("backup-dialog").get_by_role("alert")
    answer_popups_until(page, other, lambda: alert.count() > 0)
    expect(alert).to_have_text(
        f"백업 실패: 로그인한 Google 계정이 아닙니다. {email} 계정을 선택한 뒤 다시 시도해 주세요.")
    for account in (email, other):
        assert DriveApi(app_server.base_url, account).file_id(backup_name(address)) is None
    assert me(page)["hasBackup"] is False
    page.context.unroute(pattern)
    page.get_by_test_id("backup-dialog").get_by_role("button", name="취소").click()
    page.get_by_role("radio", name="English").click()
    # The server has saved the language once the page reads in it: backup_from_settings loads
    # /settings again, and a load before the save came back in Korean (a CI run found no "Back up").
    expect(page.get_by_role("button", name="Back up")).to_be_visible()
    backup_from_settings(page, email, PIN)
    assert DriveApi(app_server.base_url, email).file_id(backup_name(address))

    ctx, page2 = new_device(browser, app_server)
    try:
        prompt = sign_in_on_new_device(page2, email)
        pattern = pick_google_account(ctx, other)
        restore_attempt(page2, email, PIN, lambda: prompt.get_by_role("alert").count() > 0)
        expect(prompt.get_by_role("alert")).to_have_text(
            f"This Google account is not the one you signed in with. Choose {email} and try again.")
        assert local_materials(page2, address)["lwrapCt"] is None
        ctx.unroute(pattern)
        done = page2.get_by_role("alertdialog").filter(has_text="Your wallet has been restored.")
        restore_attempt(page2, email, PIN, lambda: done.count() > 0)
        done.get_by_role("button", name="OK").click()
        page2.wait_for_url("**/home**")
        assert local_materials(page2, address)["lwrapCt"] is not None
    finally:
        helpers.close_context(ctx)
