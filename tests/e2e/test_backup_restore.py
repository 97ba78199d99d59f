"""Issue 5 in Chromium at 390x844: back up from /settings to the Drive stand-in, restore on a
new device through the device check (wrong PIN first), tampered and foreign files, a server
that says hasBackup without a file, and no secret in anything our server receives or logs."""

import re

from eth_account import Account
from eth_account.messages import encode_defunct
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.drive_api import DriveApi, backup_name
from tests.e2e.flows import PIN, create_wallet, local_materials, me, new_email, sign_in
from tests.e2e.flows_backup import backup_from_settings, restore_attempt, storage
from tests.e2e.leaks import LeakRecorder, phrase_patterns, phrase_windows
from tests.e2e.vault_py import backup_key, unwrap

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


def sign_in_on_new_device(page, email):
    """A device without the wallet: sign in, land on /home, get the restore prompt."""
    page.goto("/")
    sign_in(page, email)
    page.wait_for_url("**/home**")
    prompt = page.get_by_test_id("restore-dialog")
    expect(prompt).to_contain_text("You signed in on a new device.")
    expect(prompt).to_contain_text("A backup restore is required.")
    return prompt


def test_backup_then_restore_on_new_device(page, browser, app_server, screenshot, browser_issues):
    recorder = LeakRecorder(app_server.base_url).attach(page.context)
    email = new_email("backup")
    address = create_wallet(page, email)

    page.goto("/settings")
    expect(page.locator("#last-backup")).to_have_text("-")
    assert me(page)["hasBackup"] is False
    backup_from_settings(page, email, PIN)

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
        expect(failed).to_contain_text("Recovery failed: Backup owner mismatch")
        assert storage(page2) == before
        # The choice: cancel stays here; the prompt is gone for this page load.
        expect(failed.get_by_role("button", name="Cancel")).to_be_visible()
        failed.get_by_role("button", name="Cancel").click()
        expect(failed).to_have_count(0)
        expect(page2).to_have_url(re.compile(r"/home"))

        # A broken header line, and then continuing to onboarding.
        drive.replace(file_id, b"z" + good[1:])
        page2.goto("/activity")
        restore_attempt(page2, email, PIN, lambda: failed.count() > 0)
        expect(failed).to_contain_text("Recovery failed: Invalid backup header")
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
        expect(notice).to_contain_text("No backup file on Google Drive. Redirecting to onboarding.")
        assert storage(page2) == {} or not any(k.startswith(address) for k in storage(page2))
        notice.get_by_role("button", name="OK").click()
        page2.wait_for_url("**/onboarding**")
    finally:
        helpers.close_context(ctx)
