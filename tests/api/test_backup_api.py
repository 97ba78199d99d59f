"""/api/v1/backup/info and /backup/touch through the real app and SQLite; /me follows touch."""

import time

import pytest
from sqlmodel import select

from wallet_app.core.db import get_session
from wallet_app.errors import AppError
from wallet_app.models import User
from wallet_app.services import backups

ME = "/api/v1/me"
INFO = "/api/v1/backup/info"
TOUCH = "/api/v1/backup/touch"
ADDR = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"


def test_touch_sets_has_backup_and_time(client, login):
    login()
    assert client.post("/api/v1/me/address", json={"address": ADDR}).status_code == 200
    assert client.get(INFO).json() == {"last_backup_at": None}
    assert client.get(ME).json()["hasBackup"] is False

    before = int(time.time())
    resp = client.post(TOUCH)
    after = int(time.time())
    assert resp.status_code == 200, resp.text
    assert resp.json()["hasBackup"] is True
    stamp = resp.json()["last_backup_at"]
    assert before <= stamp <= after
    assert client.get(INFO).json() == {"last_backup_at": stamp}
    assert client.get(ME).json() == {"address": ADDR.lower(), "locale": "ko", "hasBackup": True}

    # A new address starts without a backup again (backups are per address).
    other = "0x" + "ab" * 20
    assert client.post("/api/v1/me/address", json={"address": other}).json()["hasBackup"] is False
    assert client.get(INFO).json() == {"last_backup_at": None}


def test_touch_names_the_wallet_it_backed_up(client, login):
    """A backup that took its time while another tab replaced the account's wallet is not the new
    wallet's: told it was, the account showed a backup it does not have, and a new device found
    no file for it. The specification's touch without a body keeps working."""
    login()
    assert client.post("/api/v1/me/address", json={"address": ADDR}).status_code == 200
    other = "0x" + "ab" * 20
    for body, answer in [
        ({"address": other}, (409, {"detail": "backup_not_current"})),
        ({"address": "0x12"}, (400, {"detail": "invalid_address"})),
        ({}, (422, {"detail": "invalid_request"})),
    ]:
        resp = client.post(TOUCH, json=body)
        assert (resp.status_code, resp.json()) == answer, body
        assert client.get(ME).json()["hasBackup"] is False
    for body in ({"address": ADDR}, {"address": ADDR.lower()}, None):
        resp = client.post(TOUCH, json=body)
        assert resp.status_code == 200 and resp.json()["hasBackup"] is True, body


def test_touch_is_per_user(client, login):
    login("alice@example.com")
    client.post("/api/v1/me/address", json={"address": ADDR})
    assert client.post(TOUCH).status_code == 200
    client.cookies.clear()
    login("bob@example.com")
    assert client.get(INFO).json() == {"last_backup_at": None}
    assert client.get(ME).json()["hasBackup"] is False


def test_touch_without_address_is_409(client, login):
    login()
    resp = client.post(TOUCH)
    assert resp.status_code == 409 and resp.json() == {"detail": "no_address"}
    assert client.get(ME).json()["hasBackup"] is False


def test_401_without_session(client):
    assert client.get(INFO).status_code == 401
    assert client.post(TOUCH).status_code == 401
    client.cookies.set("nb_session", "forged")
    assert client.get(INFO).status_code == 401
    assert client.post(TOUCH).status_code == 401


def test_touch_from_foreign_origin_is_refused(client, login):
    login()
    client.post("/api/v1/me/address", json={"address": ADDR})
    resp = client.post(TOUCH, headers={"Origin": "https://evil.example"})
    assert resp.status_code == 403
    assert client.get(INFO).json() == {"last_backup_at": None}


def test_service_functions(client, login):
    login()
    client.post("/api/v1/me/address", json={"address": ADDR})
    with get_session() as db:
        uid = db.exec(select(User)).one().id
    assert backups.info(uid) == {"last_backup_at": None}
    out = backups.touch(uid)
    assert out["hasBackup"] is True and backups.info(uid) == {"last_backup_at": out["last_backup_at"]}
    for call in (backups.info, backups.touch):
        with pytest.raises(AppError) as e:
            call(uid + 100)
        assert e.value.code == "not_authenticated"
