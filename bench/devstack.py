"""What the API benchmarks share: development mode on a throw-away SQLite file in WAL mode, a
chains file pointing at their own anvil with the contracts deployed, and the dev sign-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def use_dev_environment(tmp: Path, port: int = 80, database_url: str | None = None, **extra: str) -> None:
    """Settings for a server on 127.0.0.1:port in development mode, with its files in tmp (and
    its SQLite database, unless database_url is given); `extra`: more variables."""
    from wallet_app.core.config import get_settings

    origin = "http://127.0.0.1" if port == 80 else f"http://127.0.0.1:{port}"  # as browsers send it (config)
    os.environ.update({
        "DATABASE_URL": database_url or f"sqlite:///{tmp / 'bench.db'}", "PUBLIC_BASE_URL": origin,
        "DEV_MODE": "1", "GOOGLE_CLIENT_ID": "", "GOOGLE_CLIENT_SECRET": "", "RELAYER_PRIVATE_KEY": "",
        "DEV_IDP_KEY_FILE": str(tmp / "idp-key.json"),
        "DEPLOYMENTS_DIR": str(tmp), "CHAINS_FILE": str(tmp / "chains.json"),
        **extra,
    })
    get_settings.cache_clear()


def write_chains_file(tmp: Path, rpc_urls: dict[int, str]) -> None:
    """tmp/chains.json: chains.dev.json's chain once per chain id, at its node's rpc_url, without
    the relayer's hourly gas budget (the benches measure its throughput: rounds of hundreds of
    payments in one hour would reach the default)."""
    base = json.loads((REPO / "chains.dev.json").read_text())[0]
    chains = [{**base, "chain_id": cid, "chain_name": f"Bench {cid}", "rpc_url": url,
               "relayer_max_spend_wei_per_hour": None}
              for cid, url in rpc_urls.items()]
    (tmp / "chains.json").write_text(json.dumps(chains))


def deploy_dev_chain(tmp: Path, rpc_url: str) -> dict:
    """chains.dev.json pointed at rpc_url, the contracts deployed, the schema migrated; returns
    the deployments."""
    from contracts.deploy import deploy
    from wallet_app.core.db import get_engine, upgrade_schema

    write_chains_file(tmp, {31337: rpc_url})
    deployed = deploy(rpc_url, tmp)
    upgrade_schema()
    if get_engine().dialect.name != "sqlite":
        return deployed
    with get_engine().connect() as conn:
        # WAL (kept in the file): many clients polling would otherwise starve SQLite writers past
        # the 5 s busy timeout (readers block a rollback-journal commit).
        conn.exec_driver_sql("PRAGMA journal_mode=WAL")
    return deployed


def sign_in(client, email: str, address: str | None = None) -> None:
    """The development sign-in through the API (login attempt, ID token with its nonce), then the
    wallet address when given. client: an httpx.Client on /api/v1."""
    from wallet_app.dev import idp

    nonce = client.post("/auth/login-attempt").json()["nonce"]
    token = idp.issue_id_token(email, nonce=nonce)
    client.post("/auth/google", json={"id_token": token, "locale": "en"}).raise_for_status()
    if address:
        client.post("/me/address", json={"address": address}).raise_for_status()


@contextmanager
def dev_stack(prefix: str, database_url: str | None = None) -> Iterator[tuple[int, object, dict]]:
    """A fresh anvil with the contracts deployed, development settings for a server on a free
    port, files in a new temp folder (a SQLite database there unless database_url is given):
    yields (port, node, deployments)."""
    from tools.ports import free_port
    from wallet_app.dev.anvil import Anvil

    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    with Anvil(port=0, start_timeout=20) as node:
        port = free_port()  # after anvil has its port, so the two cannot pick the same one
        use_dev_environment(tmp, port, database_url)
        yield port, node, deploy_dev_chain(tmp, node.url)


def api_factory():
    """The API as in development (dev sign-in, anvil's relayer key), for granian (--factory)."""
    import httpx

    from wallet_app.api import build_api
    from wallet_app.core.startup import freeze_startup_objects
    from wallet_app.services import google

    api = build_api()
    install_dev_without_faucet(api)
    google.set_transport(httpx.ASGITransport(app=api))  # dev ID tokens are verified against itself
    freeze_startup_objects()  # as the app's lifespan does in production (wallet_app.py)
    return api


def install_dev_without_faucet(api) -> None:
    """The development stand-ins (sign-in, anvil's relayer key) but not the faucet: the benches fund
    their users themselves, and the faucet's sends for each registered address (a thread of the
    API) would still be running, and mining, in the timed phase."""
    from wallet_app import dev
    from wallet_app.core import extensions
    from wallet_app.dev import faucet

    dev.install(api)
    extensions.remove_address_hook(faucet.on_address_registered)


@contextmanager
def api_process(port: int, start_timeout: float = 60.0, workers: int = 1) -> Iterator[str]:
    """The API in its own process on 127.0.0.1:port, served as in production (reflex run --env
    prod: granian, one worker without Redis; `workers` with REDIS_URL set), with this process's
    settings; yields its /api/v1 base URL, and stops it on exit."""
    import httpx

    server = subprocess.Popen([sys.executable, "-m", "granian", "--interface", "asgi", "--factory", "--host",
                               "127.0.0.1", "--port", str(port), "--workers", str(workers), "--log-level", "warning",
                               "bench.devstack:api_factory"], cwd=REPO)
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        end = time.monotonic() + start_timeout
        while True:
            try:
                if httpx.get(f"{base}/me").status_code == 401:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > end:
                raise RuntimeError("the API did not start")
            time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
