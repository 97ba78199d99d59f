"""dev.install(api): the development stand-ins come in through one call, only in development."""

import pytest
from eth_account import Account
from starlette.testclient import TestClient

from tests.api.conftest import make_api
from wallet_app import dev
from wallet_app.core import extensions
from wallet_app.core.config import get_settings
from wallet_app.dev import faucet, merchant
from wallet_app.services import google, relayer

DEV_PATHS = ("/dev-idp/.well-known/openid-configuration", "/dev-idp/gsi/client", "/dev-drive/drive/v3/files")


@pytest.fixture
def google_mode(db, monkeypatch):
    monkeypatch.setenv("GOOGLE_CLIENT_ID", "1234-test.apps.googleusercontent.com")
    monkeypatch.setenv("GOOGLE_CLIENT_SECRET", "secret")
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


def test_outside_development_nothing_of_dev_is_there(google_mode):
    with TestClient(make_api()) as client:
        for path in DEV_PATHS:
            assert client.get(path).status_code == 404
    assert extensions.merchant_link() == "" and extensions.relayer_key() is None
    assert google.issuer() == "https://accounts.google.com"
    with pytest.raises(RuntimeError, match="RELAYER_PRIVATE_KEY"):
        relayer.relayer_account()


def test_outside_development_the_configured_relayer_key_is_used(google_mode, monkeypatch):
    key = Account.create()
    monkeypatch.setenv("RELAYER_PRIVATE_KEY", key.key.hex())
    get_settings.cache_clear()
    assert relayer.relayer_account().address == key.address


def test_installed_stand_ins_stay_silent_once_google_is_configured(google_mode):
    dev.install(make_api())  # e.g. one process serving both settings (the tests)
    assert extensions.merchant_link() == "" and extensions.relayer_key() is None
    assert google.issuer() == "https://accounts.google.com"
    assert google.browser_client_id() == "1234-test.apps.googleusercontent.com"
    with pytest.raises(RuntimeError):
        relayer.relayer_account()


def test_in_development_one_call_installs_everything(chain_env, client):
    assert client.get(DEV_PATHS[0]).json()["issuer"] == "http://testserver/dev-idp"
    assert client.get(DEV_PATHS[1]).status_code == 200
    assert client.get(DEV_PATHS[2]).status_code == 401  # the Drive stand-in asks for its token
    assert relayer.relayer_account().address == Account.from_key(dev.DEV_RELAYER_KEY).address
    assert google.issuer() == "http://testserver/dev-idp"
    assert google.gsi_script_url() == "/dev-idp/gsi/client"
    link = extensions.merchant_link()
    assert link.startswith(f"/payment?merchant={merchant.DEV_MERCHANT}&chain_id=31337&token=0x") and \
        link.endswith("&amount=1.5")
    assert faucet.on_address_registered in extensions._address_hooks

