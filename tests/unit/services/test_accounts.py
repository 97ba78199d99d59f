import pytest

from wallet_app.core import extensions
from wallet_app.errors import AppError
from wallet_app.services import accounts


@pytest.mark.parametrize("value,ok", [("ko", True), ("en", True), ("KO", False), ("ko-KR", False), ("", False),
                                      (None, False)])
def test_normalize_locale(value, ok):
    if ok:
        assert accounts.normalize_locale(value) == value
    else:
        with pytest.raises(AppError) as e:
            accounts.normalize_locale(value)
        assert e.value.code == "invalid_locale"


def test_login_user_creates_once_and_keeps_stored_locale(db):
    first = accounts.login_user("sub-9", "old@example.com", "ko")
    again = accounts.login_user("sub-9", "new@example.com", "en")
    assert again.id == first.id
    assert again.locale == "ko" and again.email == "new@example.com"
    with pytest.raises(AppError):
        accounts.login_user("sub-10", "x@example.com", "fr")


def test_set_address_resets_backup_state_only_when_address_changes(db):
    from wallet_app.core.db import get_session
    from wallet_app.models import User

    user = accounts.login_user("sub-3", "c@example.com", "en")
    accounts.set_address(user.id, "0x" + "AA" * 20)
    with get_session() as s:
        row = s.get(User, user.id)
        row.has_backup, row.last_backup_at = True, 1_700_000_000
        s.add(row)
        s.commit()
    same = accounts.set_address(user.id, "0x" + "aa" * 20)
    assert same.has_backup is True and same.last_backup_at == 1_700_000_000
    other = accounts.set_address(user.id, "0x" + "bb" * 20)
    assert other.address == "0x" + "bb" * 20 and other.has_backup is False and other.last_backup_at is None
    assert accounts.me_payload(other) == {"address": "0x" + "bb" * 20, "locale": "en", "hasBackup": False}
    with pytest.raises(AppError) as e:
        accounts.set_address(user.id, "0x123")
    assert e.value.code == "invalid_address"
    with pytest.raises(AppError) as e:
        accounts.set_locale(999, "ko")
    assert e.value.code == "not_authenticated"


def test_set_address_tells_the_address_hooks_of_a_new_address_only(db):
    heard: list[str] = []
    extensions.add_address_hook(heard.append)
    extensions.add_address_hook(lambda _address: 1 / 0)  # a failing hook never fails a registration
    user = accounts.login_user("sub-4", "d@example.com", "en")
    accounts.set_address(user.id, "0x" + "CC" * 20)
    accounts.set_address(user.id, "0x" + "cc" * 20)
    assert heard == ["0x" + "cc" * 20]


A, B, C = "0x" + "aa" * 20, "0x" + "bb" * 20, "0x" + "cc" * 20


@pytest.mark.parametrize(
    "before,replaces,new,after",
    [
        (None, None, B, B),  # the specification's call, without `replaces`: as before
        (A, None, B, B),
        (None, "", B, B),  # a new account's page
        (A, A, B, B),  # the replacement the page confirmed
        (A, A.upper().replace("0X", "0x"), B, B),  # any case
        (B, "", B, B),  # the same wallet again (the page's websocket after its POST): nothing to refuse
        (A, "", B, "wallet_changed"),  # a page left on /onboarding since before the account had a wallet
        (A, C, B, "wallet_changed"),  # the account's wallet changed since the page loaded
        (A, "0x12", B, "invalid_address"),
    ],
)
def test_set_address_replaces_only_the_wallet_the_page_knew(db, before, replaces, new, after):
    user = accounts.login_user("sub-5", "e@example.com", "en")
    if before:
        accounts.set_address(user.id, before)
    if after.startswith("0x"):
        assert accounts.set_address(user.id, new, replaces).address == after
    else:
        with pytest.raises(AppError) as e:
            accounts.set_address(user.id, new, replaces)
        assert e.value.code == after
        assert accounts.load_user(user.id).address == before
