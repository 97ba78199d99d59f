import pytest

from wallet_app.api.deps import origin_allowed
from wallet_app.services import accounts

A = "0x" + "ab" * 20


@pytest.mark.parametrize(
    "value,expected",
    [
        (A, A),
        ("0x" + "AB" * 20, A),
        ("0x" + "aB" * 20, A),
        ("0X" + "ab" * 20, ValueError),
        ("0x" + "ab" * 19 + "a", ValueError),
        ("0x" + "ab" * 20 + "\n", ValueError),
        ("0x" + "zz" * 20, ValueError),
        ("", ValueError),
        (None, ValueError),
        (0x1234, ValueError),
    ],
)
def test_normalize_address(value, expected):
    if expected is ValueError:
        with pytest.raises(ValueError):
            accounts.normalize_address(value)
    else:
        assert accounts.normalize_address(value) == expected


@pytest.mark.parametrize("value,ok", [("ko", True), ("en", True), ("KO", False), ("ko-KR", False), ("", False), (None, False)])
def test_normalize_locale(value, ok):
    if ok:
        assert accounts.normalize_locale(value) == value
    else:
        with pytest.raises(ValueError):
            accounts.normalize_locale(value)


PUBLIC = "http://localhost:3000"


@pytest.mark.parametrize(
    "method,origin,fetch_site,allowed",
    [
        ("GET", "https://evil.example", "cross-site", True),  # reads are not checked
        ("POST", PUBLIC, "same-origin", True),
        ("POST", PUBLIC + "/", None, True),
        ("PATCH", "HTTP://LOCALHOST:3000", None, True),
        ("POST", "https://evil.example", None, False),
        ("DELETE", "null", None, False),
        ("PUT", "http://localhost:3001", None, False),
        ("POST", "http://localhost", None, False),
        ("POST", None, None, True),  # non-browser client
        ("POST", None, "same-origin", True),
        ("POST", None, "none", True),
        ("POST", None, "cross-site", False),
        ("POST", None, "same-site", False),
    ],
)
def test_origin_allowed(method, origin, fetch_site, allowed):
    assert origin_allowed(method, origin, fetch_site, PUBLIC) is allowed


def test_login_user_creates_once_and_keeps_stored_locale(db):
    first = accounts.login_user("sub-9", "old@example.com", "ko")
    again = accounts.login_user("sub-9", "new@example.com", "en")
    assert again.id == first.id
    assert again.locale == "ko" and again.email == "new@example.com"
    with pytest.raises(ValueError):
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
    with pytest.raises(ValueError):
        accounts.set_address(user.id, "0x123")
    with pytest.raises(accounts.NotFound):
        accounts.set_locale(999, "ko")
