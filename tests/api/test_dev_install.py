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
def google_mode(db, production_env):
    return production_env


def test_outside_development_nothing_of_dev_is_there(google_mode):
    with TestClient(make_api()) as client:
        for path in DEV_PATHS:
            assert client.get(path).status_code == 404
    assert extensions.merchant_link() == "" and extensions.relayer_key() is None
    assert google.issuer() == "https://accounts.google.com"


def test_outside_development_the_configured_relayer_key_is_used(google_mode):
    key = google_mode.relayer_private_key.get_secret_value()
    assert relayer.relayer_account().address == Account.from_key(key).address


def test_installed_stand_ins_stay_silent_outside_development(google_mode):
    dev.install(make_api())  # e.g. one process serving both settings (the tests)
    assert extensions.merchant_link() == "" and extensions.relayer_key() is None
    assert google.issuer() == "https://accounts.google.com"
    assert google.browser_client_id() == "1234-test.apps.googleusercontent.com"
    assert relayer.relayer_account().address != Account.from_key(dev.DEV_RELAYER_KEY).address


def test_in_development_one_call_installs_everything(chain_env, client):
    assert client.get(DEV_PATHS[0]).json()["issuer"] == "http://localhost/dev-idp"
    assert client.get(DEV_PATHS[1]).status_code == 200
    assert client.get(DEV_PATHS[2]).status_code == 401  # the Drive stand-in asks for its token
    assert relayer.relayer_account().address == Account.from_key(dev.DEV_RELAYER_KEY).address
    assert google.issuer() == "http://localhost/dev-idp"
    assert google.gsi_script_url() == "/dev-idp/gsi/client"
    link = extensions.merchant_link()
    assert link.startswith(f"/payment?merchant={merchant.DEV_MERCHANT}&chain_id=31337&token=0x") and \
        link.endswith("&amount=1.5")
    assert faucet.on_address_registered in extensions._address_hooks



def test_bench_ceiling_route_only_when_asked_in_development(client, monkeypatch):
    assert client.get(dev.CEILING_PATH).status_code == 404  # not by default
    monkeypatch.setenv("DEV_BENCH_CEILING", "1")
    get_settings.cache_clear()
    with TestClient(make_api()) as asked:
        resp = asked.get(dev.CEILING_PATH)
        assert (resp.status_code, resp.text) == (200, "ok")


def test_bench_ceiling_route_never_outside_development(google_mode, monkeypatch):
    monkeypatch.setenv("DEV_BENCH_CEILING", "1")
    get_settings.cache_clear()
    api = make_api()
    dev.install(api)  # even installed by mistake
    with TestClient(api) as client:
        assert client.get(dev.CEILING_PATH).status_code == 404
