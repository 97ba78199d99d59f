"""Shared fixtures: settings pointed at a throw-away database, and a migrated database.

TEST_DATABASE=pg (`make test-pg`, `make test-scale`) runs them on a private PostgreSQL server
(tools/pgserver.py, one per run, data in a temp dir): every test gets its own database there.
Otherwise SQLite files. TEST_REDIS=1 (`make test-scale`) gives every test REDIS_URL on one
private Redis (tools/redisserver.py) for the run, flushed before each test.
"""

import asyncio
import http.server
import json
import os
import re
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis
from eth_account import Account
from sqlalchemy import create_engine
from web3 import Web3

from contracts.deploy import DEV_DEPLOYER_KEY, deploy, fund
from tests.rate_limits_env import GENEROUS_LIMITS
from tools.pgserver import shared_temp_server
from tools.redisserver import RedisServer
from wallet_app.core import extensions
from wallet_app.core.config import REPO_ROOT, get_settings
from wallet_app.dev.anvil import Anvil
from wallet_app.services.chain import get_chain, load_chains

# Importing Reflex states reads rxconfig.py, hence the settings, before any fixture runs: the
# test process itself is in development mode (production refuses to load without Google).
# Set, not defaulted: a developer's shell or .env must not switch the tests to real Google.
os.environ.update(DEV_MODE="1", PUBLIC_BASE_URL="http://localhost", GOOGLE_CLIENT_ID="", GOOGLE_CLIENT_SECRET="",
                  RELAYER_PRIVATE_KEY="")
get_settings.cache_clear()


@pytest.fixture(autouse=True)
def production_extensions():
    """Each test starts and ends with the production defaults of core.extensions (a test that
    builds the app in development mode calls dev.install itself)."""
    extensions.reset()
    yield
    extensions.reset()


@pytest.fixture(scope="session")
def dev_idp_key_file(tmp_path_factory):
    # One RSA key for the whole run (generating one per test is slow).
    return tmp_path_factory.mktemp("dev-idp") / "dev-idp-key.json"


ON_PG = os.environ.get("TEST_DATABASE", "sqlite") == "pg"
needs_pg = pytest.mark.skipif(not ON_PG, reason="PostgreSQL only: TEST_DATABASE=pg (make test-pg)")


def run_async(coro):
    """asyncio.run on a thread of its own: a session's Playwright (sync API) keeps an event loop
    running on the main thread, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def run_unlocked_as(monkeypatch, state_class: type, user: object) -> None:
    """`state_class`'s events run outside Reflex, signed in as `user`: `async with self` (a
    background step's hold on the tab's state) a no-op that lets exceptions through."""

    async def enter(self):
        return self

    async def leave(self, *exc):
        return None

    async def signed_in(self):
        return user

    monkeypatch.setattr(state_class, "__aenter__", enter, raising=False)
    monkeypatch.setattr(state_class, "__aexit__", leave, raising=False)
    monkeypatch.setattr(state_class, "_require_user", signed_in)


def use_env(monkeypatch, **env: object) -> None:
    """Settings from these environment variables (each value as a string): set for the test, and
    the cached settings dropped."""
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def pg_server():
    """The run's private PostgreSQL server (TEST_DATABASE=pg only)."""
    if not ON_PG:
        pytest.skip("PostgreSQL only: TEST_DATABASE=pg (make test-pg)")
    return shared_temp_server()  # the e2e app servers' too; stopped at exit


ON_REDIS = os.environ.get("TEST_REDIS") == "1"


@pytest.fixture(scope="session")
def run_redis():
    """TEST_REDIS=1: the run's private Redis (the e2e app servers' state, the API tests' shared
    keys); None otherwise."""
    if not ON_REDIS:
        yield None
        return
    with RedisServer() as server:
        yield server


@pytest.fixture
def test_database(request, tmp_path):
    """(DATABASE_URL, its PostgreSQL database name or None): a new database for this test, empty,
    or on PostgreSQL for a test that uses `db` a copy of the migrated template, made ahead
    (template_copies)."""
    if not ON_PG:
        yield f"sqlite:///{tmp_path / 'test.db'}", None
        return
    server = request.getfixturevalue("pg_server")
    if "db" in request.fixturenames:
        url, name = request.getfixturevalue("template_copies").take()
    else:
        name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50] + f"_{os.getpid()}"
        server.drop_database(name)  # a rerun of the same test
        url = server.create_database(name)
    yield url, name
    server.drop_database(name)  # FORCE: also ends connections a test's engine still pools


class TemplateCopies:
    """Copies of the migrated template database made one ahead, in a thread: CREATE DATABASE ...
    TEMPLATE waits on two checkpoints (0.1-0.35 s here), and about 300 tests of the API suite each
    waited for one (and first for an empty database that was then dropped)."""

    def __init__(self, server, template: str):
        self.server, self.template = server, template
        self.made = 0
        self.maker = ThreadPoolExecutor(1, thread_name_prefix="template-copies")
        self.next = self._make()

    def _make(self):
        self.made += 1
        name = f"copy_{os.getpid()}_{self.made}"
        return name, self.maker.submit(self.server.create_database, name, template=self.template)

    def take(self) -> tuple[str, str]:
        """(DATABASE_URL, name) of a new copy, nobody connected to it; the next one is begun."""
        name, made = self.next
        self.next = self._make()
        return made.result(), name


@pytest.fixture(scope="session")
def template_copies(pg_server, migrated_template):
    copies = TemplateCopies(pg_server, migrated_template)
    yield copies
    copies.maker.shutdown(wait=True)


@pytest.fixture
def settings_env(tmp_path, monkeypatch, dev_idp_key_file, test_database, run_redis):
    """Settings for one test: a new empty database (SQLite in tmp_path, or PostgreSQL with
    TEST_DATABASE=pg), development mode (DEV_MODE=1), origin http://localhost (development
    refuses a non-loopback origin).

    Set more variables with monkeypatch.setenv, then call get_settings.cache_clear().
    """
    monkeypatch.setenv("DATABASE_URL", test_database[0])
    monkeypatch.setenv("PUBLIC_BASE_URL", "http://localhost")
    monkeypatch.setenv("DEV_MODE", "1")
    # Empty, not unset: a developer's .env must not switch tests to real Google or a real key.
    monkeypatch.setenv("GOOGLE_CLIENT_ID", "")
    monkeypatch.setenv("GOOGLE_CLIENT_SECRET", "")
    monkeypatch.setenv("RELAYER_PRIVATE_KEY", "")
    monkeypatch.setenv("DEV_IDP_KEY_FILE", str(dev_idp_key_file))
    # No deployments here: the dev faucet and chain reads never reach a developer's own node
    # (chain_env points them at the test anvil).
    monkeypatch.setenv("DEPLOYMENTS_DIR", str(tmp_path / "no-deployments"))
    for name, value in GENEROUS_LIMITS.items():  # only the tests of the limits meet one (they set their own)
        monkeypatch.setenv(name, value)
    if run_redis:  # database 1: the e2e app servers of the same run keep theirs in 0
        url = run_redis.url.rsplit("/", 1)[0] + "/1"
        redis.Redis.from_url(url).flushdb()
        monkeypatch.setenv("REDIS_URL", url)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


PRODUCTION_ORIGIN = "https://wallet.test"
PRODUCTION_CLIENT_ID = "1234-test.apps.googleusercontent.com"
PRODUCTION_CLIENT_SECRET = "test-secret"


@pytest.fixture
def production_env(settings_env, monkeypatch):
    """settings_env switched to production (DEV_MODE off): a Google client, a fresh relayer key
    (.relayer_private_key), origin https://wallet.test. Yields the settings."""
    monkeypatch.setenv("DEV_MODE", "0")
    monkeypatch.setenv("PUBLIC_BASE_URL", PRODUCTION_ORIGIN)
    monkeypatch.setenv("GOOGLE_CLIENT_ID", PRODUCTION_CLIENT_ID)
    monkeypatch.setenv("GOOGLE_CLIENT_SECRET", PRODUCTION_CLIENT_SECRET)
    monkeypatch.setenv("RELAYER_PRIVATE_KEY", Account.create().key.hex())
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def migrated_template(request, tmp_path_factory):
    """A database migrated to head by Alembic once per run; tests get copies (faster): a SQLite
    file, or with TEST_DATABASE=pg a PostgreSQL template database (its name)."""
    from wallet_app.core.db import upgrade_schema

    if ON_PG:
        server = request.getfixturevalue("pg_server")
        name = f"template_{os.getpid()}"
        engine = create_engine(server.create_database(name))
        upgrade_schema(engine)
        engine.dispose()  # CREATE DATABASE ... TEMPLATE needs no one connected to it
        return name
    path = tmp_path_factory.mktemp("db-template") / "template.db"
    engine = create_engine(f"sqlite:///{path}")
    upgrade_schema(engine)
    engine.dispose()
    return path


@pytest.fixture
def db(settings_env, request, tmp_path, test_database, migrated_template):
    """A fresh, migrated database at settings.database_url; yields its engine."""
    from wallet_app.core.db import get_engine

    if not test_database[1]:  # on PostgreSQL test_database made it a copy of the template
        shutil.copy(migrated_template, tmp_path / "test.db")
    yield get_engine()
    get_engine().dispose()


# ---------------------------------------------------------------- a real anvil (fresh, in memory, free port)
# with the contracts deployed, for the whole session (used by tests/contracts and tests/api).

@pytest.fixture(scope="session")
def anvil_node():
    with Anvil(port=0, start_timeout=20) as node:
        yield node


@pytest.fixture(scope="session")
def deployments_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("deployments")


@pytest.fixture(scope="session")
def deployed(anvil_node, deployments_dir) -> dict:
    return deploy(anvil_node.url, deployments_dir)


@pytest.fixture(scope="session")
def chains_file(anvil_node, tmp_path_factory) -> Path:
    """chains.dev.json as shipped, pointed at the test node."""
    entries = json.loads((REPO_ROOT / "chains.dev.json").read_text())
    for e in entries:
        e["rpc_url"] = anvil_node.url
    path = tmp_path_factory.mktemp("config") / "chains.json"
    path.write_text(json.dumps(entries))
    return path


@pytest.fixture(scope="session")
def chain(deployed, chains_file, deployments_dir):
    return get_chain(31337, load_chains(chains_file, deployments_dir))


@pytest.fixture(scope="session")
def w3(anvil_node) -> Web3:
    return Web3(Web3.HTTPProvider(anvil_node.url, request_kwargs={"timeout": 10}))


@pytest.fixture
def funded(anvil_node, deployed, deployments_dir):
    """A new account with 1 ETH and 1,000 of each test token from the dev faucet."""
    acct = Account.create()
    fund(anvil_node.url, acct.address, deployments_dir)
    return acct


@pytest.fixture(scope="session")
def deployer():
    return Account.from_key(DEV_DEPLOYER_KEY)


@pytest.fixture(scope="session")
def send_tx(w3):
    """send_tx(acct, to, data, value): signs a legacy transaction locally, sends it, returns the receipt."""
    return lambda acct, to, data="0x", value=0: _send(w3, acct, to, data, value)


def _send(w3: Web3, acct, to: str, data: str, value: int) -> dict:
    tx = {"to": to, "data": data, "value": value, "chainId": w3.eth.chain_id, "gasPrice": w3.eth.gas_price,
          "nonce": w3.eth.get_transaction_count(acct.address, "pending")}
    tx["gas"] = w3.eth.estimate_gas({**tx, "from": acct.address})
    signed = acct.sign_transaction(tx)
    return w3.eth.wait_for_transaction_receipt(w3.eth.send_raw_transaction(signed.raw_transaction), timeout=30)


@pytest.fixture
def chain_env(settings_env, chains_file, deployments_dir, deployed, monkeypatch):
    """settings_env pointed at the test anvil (CHAINS_FILE, DEPLOYMENTS_DIR)."""
    from wallet_app.services import chain as chain_svc

    monkeypatch.setenv("CHAINS_FILE", str(chains_file))
    monkeypatch.setenv("DEPLOYMENTS_DIR", str(deployments_dir))
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()
    # Later tests (e.g. tests/contracts wrapping provider.make_request) get fresh web3 clients.
    chain_svc._clients.clear()


@pytest.fixture(scope="session")
def pw():
    """One Playwright driver for the whole run: sync Playwright cannot run twice at once in one
    process, and the api, js and e2e tests all drive Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


# 200 answers that are no JSON-RPC answer to a call: a provider's or a proxy's page, JSON of the
# wrong shape, results of the wrong kind.
ODD_BODIES = {
    "html": b"<html><body>Too many requests</body></html>",
    "not-utf8": b"\xff\xfe\x00",
    "empty": b"",
    "object-without-result": b'{"jsonrpc":"2.0","id":0}',
    "null-result": b'{"jsonrpc":"2.0","id":0,"result":null}',
    "bad-hex": b'{"jsonrpc":"2.0","id":0,"result":"0xzz"}',
    "number": b'{"jsonrpc":"2.0","id":0,"result":5}',
    "list": b"[]",
    "string": b'"ok"',
    "error-without-code": b'{"jsonrpc":"2.0","id":0,"error":"busy"}',
}
# A JSON-RPC answer, but a refusal: what a provider says past its request quota.
RATE_LIMITED = b'{"jsonrpc":"2.0","id":0,"error":{"code":-32005,"message":"daily request count exceeded"}}'


@pytest.fixture
def odd_node():
    """A node that answers POST /status/<code> with that status, POST /body/<name> with 200 and
    ODD_BODIES[name] (or RATE_LIMITED for "rate-limited"), and hangs on POST /hang."""
    bodies = {**ODD_BODIES, "rate-limited": RATE_LIMITED}
    release = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers["Content-Length"]))
            path = self.path.split("?")[0]  # a query is where a provider's key may be: ignored
            if path == "/hang":
                release.wait(10)
                return
            status, body = 200, b'{"jsonrpc":"2.0","id":0,"result":"0x1"}'
            if path.startswith("/body/"):
                body = bodies[path.removeprefix("/body/")]
            else:
                status = int(path.rsplit("/", 1)[1])
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    release.set()
    server.shutdown()
