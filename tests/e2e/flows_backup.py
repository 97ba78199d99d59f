"""Backup and restore steps for the e2e tests: back up from /settings, answer the restore
prompt, read localStorage. The Drive stand-in from Python: tests/e2e/drive_api.py; the files
decrypted independently: tests/e2e/vault_py.py; the secret-leak recorder: tests/e2e/leaks.py."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.flows import answer_popups_until


def enter_pin_and_confirm(page: Page, dialog_id: str, pin: str) -> None:
    dialog = page.get_by_test_id(dialog_id)
    field = dialog.get_by_label("PIN")
    field.fill(pin)
    dialog.get_by_role("button", name="Confirm").click()


def backup_from_settings(page: Page, email: str, pin: str) -> None:
    page.goto("/settings")
    page.get_by_role("button", name="Back up").click()
    enter_pin_and_confirm(page, "backup-dialog", pin)
    done = page.get_by_role("alertdialog").filter(has_text="Backup completed.")
    answer_popups_until(page, email, lambda: done.count() > 0 or _dialog_error(page, "backup-dialog"))
    assert not _dialog_error(page, "backup-dialog"), _dialog_error(page, "backup-dialog")
    done.get_by_role("button", name="OK").click()
    expect(done).to_have_count(0)


def _dialog_error(page: Page, dialog_id: str) -> str:
    alert = page.get_by_test_id(dialog_id).get_by_role("alert")
    return alert.inner_text() if alert.count() else ""


def restore_attempt(page: Page, email: str, pin: str, until) -> None:
    """Type the PIN in the restore prompt and wait for `until()` (an outcome)."""
    enter_pin_and_confirm(page, "restore-dialog", pin)
    answer_popups_until(page, email, until)


def storage(page: Page) -> dict:
    return page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")
