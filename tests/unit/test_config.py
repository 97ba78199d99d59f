"""Settings are checked at load: production is the default, development is explicit and
loopback only; the app refuses to start with one paragraph, not a traceback."""

import os
import subprocess
import sys

import pytest

from wallet_app.core.config import (
    ANVIL_PUBLIC_KEYS,
    BUILDING_ENV,
    REPO_ROOT,
    Settings,
    SettingsError,
    browser_origin,
    get_settings,
    load_settings,
    parse_addresses,
    url_for_logs,
)

KEY = "0x" + "11" * 32
PRODUCTION = {"GOOGLE_CLIENT_ID": "id.apps.googleusercontent.com", "GOOGLE_CLIENT_SECRET": "s",
              "RELAYER_PRIVATE_KEY": KEY, "PUBLIC_BASE_URL": "https://wallet.example.com"}
MODE_VARS = ("TRUSTED_PROXIES", "DEV_MODE", "GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET", "RELAYER_PRIVATE_KEY",
             "PUBLIC_BASE_URL")


@pytest.fixture
def env(monkeypatch, tmp_path):
    """A clean slate for the mode variables (no .env: the cwd is tmp_path); set(**vars) -> load."""
    monkeypatch.chdir(tmp_path)
    for name in MODE_VARS:
        monkeypatch.delenv(name, raising=False)

    def load(**values: str) -> Settings:
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        return load_settings()

    yield load
    get_settings.cache_clear()


@pytest.mark.parametrize("url", ["http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000", "http://localhost"])
def test_development_on_loopback(env, url):
    s = env(DEV_MODE="1", PUBLIC_BASE_URL=url)
    assert s.dev_mode and not s.https


@pytest.mark.parametrize("url, origin", [
    ("https://wallet.example.com", "https://wallet.example.com"),
    ("https://wallet.example.com/", "https://wallet.example.com"),
    ("https://wallet.example.com:8443", "https://wallet.example.com:8443"),
    ("HTTPS://WALLET.example.COM:443/", "https://wallet.example.com"),
    ("http://localhost:80", "http://localhost"),
    ("http://[::1]:3000", "http://[::1]:3000"),
    ("https://wallet.example.com/app", None),
    ("https://wallet.example.com/?x=1", None),
    ("https://wallet.example.com#top", None),
    ("https://a:b@wallet.example.com", None),
    ("https://wallet.example.com:99999", None),
    ("ftp://wallet.example.com", None),
    ("wallet.example.com", None),
])
def test_browser_origin(url, origin):
    assert browser_origin(url) == origin


@pytest.mark.parametrize("url, shown", [
    ("https://mainnet.infura.io/v3/0123456789abcdef", "https://mainnet.infura.io"),  # the key is the path
    ("https://eth-mainnet.g.alchemy.com/v2/KEY?x=1#f", "https://eth-mainnet.g.alchemy.com"),
    ("http://user:secret@127.0.0.1:8545/rpc", "http://127.0.0.1:8545"),
    ("http://[::1]:8545/?apikey=KEY", "http://[::1]:8545"),
    ("https://hooks.example/h/TOKEN", "https://hooks.example"),
    ("https://host:port/KEY", "(a URL that does not parse)"),
])
def test_url_for_logs(url, shown):
    assert url_for_logs(url) == shown


def test_production_with_everything_set(env):
    s = env(**PRODUCTION)
    assert not s.dev_mode and s.https
    assert s.allowed_origins == ("https://wallet.example.com",)


@pytest.mark.parametrize(
    "values,message",
    [
        ({"DEV_MODE": "1", "PUBLIC_BASE_URL": "https://wallet.example.com"},
         "DEV_MODE is on but PUBLIC_BASE_URL (https://wallet.example.com) is not on loopback"),
        ({"DEV_MODE": "true", "PUBLIC_BASE_URL": "http://localhost.evil.example:3000"}, "is not on loopback"),
        ({"DEV_MODE": "1", "PUBLIC_BASE_URL": "http://localhost:3000", "GOOGLE_CLIENT_ID": "x"},
         "DEV_MODE is on and GOOGLE_CLIENT_ID is set"),
        ({}, "GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET, RELAYER_PRIVATE_KEY are not set"),
        ({**PRODUCTION, "RELAYER_PRIVATE_KEY": ""}, "RELAYER_PRIVATE_KEY is not set"),
        ({**PRODUCTION, "GOOGLE_CLIENT_SECRET": ""}, "GOOGLE_CLIENT_SECRET is not set"),
        ({"DEV_MODE": "maybe"}, "DEV_MODE: Input should be a valid boolean"),
        ({**PRODUCTION, "PUBLIC_BASE_URL": "http://wallet.example.com"},
         "PUBLIC_BASE_URL (http://wallet.example.com) is not https"),
        ({**PRODUCTION, "RELAYER_PRIVATE_KEY": "0x1234"}, "RELAYER_PRIVATE_KEY is not a private key"),
        ({**PRODUCTION, "RELAYER_PRIVATE_KEY": ANVIL_PUBLIC_KEYS[1].upper().replace("0X", "")},
         "RELAYER_PRIVATE_KEY is one of anvil's public test keys"),
        ({**PRODUCTION, "RELAYER_PRIVATE_KEY": ANVIL_PUBLIC_KEYS[0]}, "RELAYER_PRIVATE_KEY is one of anvil's public"),
        ({**PRODUCTION, "TRUSTED_PROXIES": "10.0.0.1, nginx"},
         "TRUSTED_PROXIES: not an IP address or CIDR network: 'nginx'; write IP addresses or CIDR networks"),
        ({**PRODUCTION, "MERCHANT_WEBHOOK_URL": "https://shop.example.com/hook"},
         "MERCHANT_WEBHOOK_URL is set but MERCHANT_WEBHOOK_SECRET is missing or shorter than 16 characters"),
        ({**PRODUCTION, "MERCHANT_WEBHOOK_URL": "https://shop.example.com/hook", "MERCHANT_WEBHOOK_SECRET": "short"},
         "MERCHANT_WEBHOOK_SECRET is missing or shorter than 16 characters"),
        ({**PRODUCTION, "MERCHANT_WEBHOOK_URL": "ftp://shop.example.com/hook",
          "MERCHANT_WEBHOOK_SECRET": "0123456789abcdef"}, "MERCHANT_WEBHOOK_URL is not an http(s) URL"),
        ({**PRODUCTION, "MERCHANT_WEBHOOK_URL": "https://shop.example.com/hook", "MERCHANT_WEBHOOK_SECRET": "s" * 16},
         "MERCHANT_WEBHOOK_URL is set but MERCHANT_WEBHOOK_MERCHANTS is empty: name the merchant's own 0x addresses"),
        ({**PRODUCTION, "MERCHANT_WEBHOOK_URL": "https://shop.example.com/hook", "MERCHANT_WEBHOOK_SECRET": "s" * 16,
          "MERCHANT_WEBHOOK_MERCHANTS": f"0x{'ab' * 20}, 0x12"},
         "MERCHANT_WEBHOOK_MERCHANTS: '0x12' is not a 0x address of 40 hex digits; write the merchant's 0x addresses"),
        ({**PRODUCTION, "MERCHANT_WEBHOOK_RETRY_SECONDS": "0"},
         "MERCHANT_WEBHOOK_MAX_ATTEMPTS and MERCHANT_WEBHOOK_RETRY_SECONDS must be at least 1"),
        # The browser's Origin is lowercase without the default port: these refused every websocket.
        ({**PRODUCTION, "PUBLIC_BASE_URL": "https://Wallet.Example.com"},
         "PUBLIC_BASE_URL (https://Wallet.Example.com) is not an origin as browsers send it, which every websocket "
         "and write is checked against: write https://wallet.example.com."),
        ({**PRODUCTION, "PUBLIC_BASE_URL": "https://wallet.example.com:443"}, "write https://wallet.example.com."),
        ({**PRODUCTION, "PUBLIC_BASE_URL": "https://wallet.example.com/app"},
         "write https://host or https://host:port, without a path."),
        ({**PRODUCTION, "PUBLIC_BASE_URL": "https://user@wallet.example.com"}, "without a path."),
        ({"DEV_MODE": "1", "PUBLIC_BASE_URL": "http://localhost:80"}, "write http://localhost."),
    ],
)
def test_refused(env, values, message):
    with pytest.raises(SettingsError) as exc:
        env(**values)
    text = str(exc.value)
    assert text.startswith("Refusing to start: ") and message in text and "\n" not in text
    assert ANVIL_PUBLIC_KEYS[1][2:] not in text.lower()  # a key is never echoed
    if "not set" in message or "not https" in message:
        assert "set DEV_MODE=1 for local development" in text


def test_a_merchant_webhook_with_its_secret_and_merchants(env):
    shop = "0x" + "Ab" * 20
    s = env(**PRODUCTION, MERCHANT_WEBHOOK_URL="https://shop.example.com/hook", MERCHANT_WEBHOOK_SECRET="s" * 16,
            MERCHANT_WEBHOOK_MERCHANTS=f" {shop} ,,0x{'01' * 20}")
    assert s.merchant_webhook_url == "https://shop.example.com/hook"
    assert parse_addresses(s.merchant_webhook_merchants) == {shop.lower(), "0x" + "01" * 20}
    assert "s" * 16 not in repr(s)  # a SecretStr: never printed with the settings


def test_loopback_aliases_only_in_development(env):
    assert env(DEV_MODE="1", PUBLIC_BASE_URL="http://localhost:3000/").allowed_origins == (
        "http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000")
    assert env(DEV_MODE="0", **{**PRODUCTION, "PUBLIC_BASE_URL": "http://localhost:3000"}).allowed_origins == (
        "http://localhost:3000",)


def _start(*cmd: str, **values: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in MODE_VARS}
    return subprocess.run([sys.executable, *cmd], cwd=REPO_ROOT, env={**env, **values}, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize(
    "values,message",
    [
        ({"DEV_MODE": "1", "PUBLIC_BASE_URL": "https://wallet.example.com"}, "is not on loopback"),
        ({"GOOGLE_CLIENT_SECRET": "s", "RELAYER_PRIVATE_KEY": KEY}, "GOOGLE_CLIENT_ID is not set"),
    ],
)
def test_the_app_refuses_to_start(values, message):
    """`python -m wallet_app.serve` (what `make run` and the servers run) and every reflex
    process (it reads rxconfig.py first): a non-zero exit and one paragraph on stderr."""
    for cmd in (["-m", "wallet_app.serve", "--port", "3999"], ["-c", "import rxconfig"]):
        done = _start(*cmd, **values)
        assert done.returncode != 0
        assert done.stderr.startswith("Refusing to start: ") and message in done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_reflex_auto_setters_refuse_to_start():
    """Reflex's implicit set_<var> events would let a browser set any state var."""
    done = _start("-c", "import rxconfig", REFLEX_STATE_AUTO_SETTERS="true", DEV_MODE="1")
    assert done.returncode != 0
    assert done.stderr.startswith("Refusing to start: REFLEX_STATE_AUTO_SETTERS is on")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert _start("-c", "import rxconfig", REFLEX_STATE_AUTO_SETTERS="false", DEV_MODE="1").returncode == 0


def test_make_run_turns_development_on():
    done = _start("-m", "wallet_app.serve", "--dev", "--port", "3999", PUBLIC_BASE_URL="https://wallet.example.com")
    assert done.returncode == 2 and "DEV_MODE is on" in done.stderr
    assert "wallet_app.serve --dev" in (REPO_ROOT / "Makefile").read_text()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10"])
def test_development_refuses_to_listen_off_loopback(host):
    done = _start("-m", "wallet_app.serve", "--dev", "--port", "3999", "--host", host)
    assert done.returncode == 2
    assert done.stderr == f"DEV_MODE is on: refusing to listen on {host}; development serves on loopback only\n"


def test_the_build_needs_no_serving_settings(env):
    from wallet_app import build

    built = build.build_env()  # no mode variables at all (a build machine): refused for serving
    assert {k: built[k] for k in build.BUILD_DEFAULTS} == build.BUILD_DEFAULTS
    assert built[BUILDING_ENV] == "1"
    assert env(**build.BUILD_DEFAULTS).dev_mode  # what reflex export then loads
    env(**PRODUCTION, DEV_MODE="0")
    built = build.build_env()  # valid settings are built with as they are
    assert (built["DEV_MODE"], built["PUBLIC_BASE_URL"], built[BUILDING_ENV]) == (
        "0", PRODUCTION["PUBLIC_BASE_URL"], "1")


@pytest.mark.parametrize("building", [True, False])
def test_the_app_migrates_its_database_when_serving_not_when_built(tmp_path, building):
    """`make build` imports the app to compile its pages (reflex export): the database is left
    alone then (a release built beside the running one must not migrate it under that one)."""
    database = tmp_path / "app.db"
    flag = {BUILDING_ENV: "1"} if building else {}
    done = _start("-c", "import wallet_app.wallet_app", DEV_MODE="1", DATABASE_URL=f"sqlite:///{database}", **flag)
    assert done.returncode == 0, done.stderr
    assert database.exists() is not building


def test_the_app_keeps_what_clients_send_out_of_its_log(tmp_path):
    """A page's error reports are logged by their name alone, and the loggers that quote a
    client's frames cut each line (core.sockets.cut_long_log_lines)."""
    check = (
        "import logging, wallet_app.wallet_app as w; "
        "from wallet_app.state.session import browser_error_logged; "
        "assert w.app.frontend_exception_handler is browser_error_logged; "
        "assert logging.getLogRecordFactory().cuts_lines"
    )
    done = _start("-c", check, DEV_MODE="1", DATABASE_URL=f"sqlite:///{tmp_path / 'app.db'}", **{BUILDING_ENV: "1"})
    assert done.returncode == 0, done.stderr


def test_production_does_not_import_the_development_stand_ins(tmp_path):
    check = "import sys, wallet_app.wallet_app; assert not [m for m in sys.modules if m.startswith('wallet_app.dev')]"
    done = _start("-c", check, DATABASE_URL=f"sqlite:///{tmp_path / 'app.db'}", **PRODUCTION, **{BUILDING_ENV: "1"})
    assert done.returncode == 0, done.stderr


def test_the_app_freezes_its_startup_objects_and_sizes_its_threads_in_each_worker(tmp_path):
    """Lifespan tasks: they run in every worker once the app is up (core.startup)."""
    check = (
        "import wallet_app.wallet_app as w; from wallet_app.core import startup as s; "
        "tasks = w.app.get_lifespan_tasks(); "
        "assert s.freeze_startup_objects in tasks and s.size_handler_threads in tasks, tasks"
    )
    done = _start("-c", check, DEV_MODE="1", DATABASE_URL=f"sqlite:///{tmp_path / 'app.db'}")
    assert done.returncode == 0, done.stderr
