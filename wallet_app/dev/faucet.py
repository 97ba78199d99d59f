"""Dev faucet: a newly registered address gets gas and test tokens on the local dev chains.

Registered by wallet_app.dev.install() as an address hook (core.extensions); it acts only in
development mode (DEV_MODE) and only for chains whose RPC is on loopback (never a
real network). It runs in a background thread so registration stays quick, and
a failure is only logged: registration must not fail because of the faucet. A node that is
gone (stopped at shutdown) is one log line, not a traceback; stop() cancels the sends that
have not started.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from wallet_app.core.config import get_settings

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_workers: list[threading.Thread] = []
_workers_lock = threading.Lock()
# One sender at a time (one deployer key, one nonce sequence); the waiting ones see stop(). The
# thread lock within this process, a file lock next to the deployments across the workers.
_send_lock = threading.Lock()
_stopping = threading.Event()


def is_loopback_rpc(rpc_url: str) -> bool:
    try:
        return urlsplit(rpc_url).hostname in LOOPBACK_HOSTS
    except ValueError:
        return False


def _targets() -> tuple[list[tuple[int, str]], object]:
    """(chain_id, rpc_url) of the loopback dev chains and the deployments dir, read now, in the
    caller's thread (the settings may change before a background thread would read them)."""
    settings = get_settings()
    if not settings.dev_mode:
        return [], None
    from wallet_app.services.chain import get_chains

    try:
        chains = [(c.chain_id, c.rpc_url) for c in get_chains() if is_loopback_rpc(c.rpc_url)]
    except Exception:
        log.exception("dev faucet: cannot load chains")
        chains = []
    return chains, settings.deployments_dir


@contextlib.contextmanager
def _across_workers(deployments_dir) -> Iterator[None]:
    Path(deployments_dir).mkdir(parents=True, exist_ok=True)
    with open(Path(deployments_dir) / "faucet.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def _fund(address: str, chains: list[tuple[int, str]], deployments_dir) -> dict[int, list[str]]:
    from contracts.deploy import fund

    funded: dict[int, list[str]] = {}
    for chain_id, rpc_url in chains:
        with _send_lock, _across_workers(deployments_dir):
            if _stopping.is_set():
                break
            try:
                funded[chain_id] = fund(rpc_url, address, deployments_dir)
                log.info("dev faucet: funded %s on chain %s", address, chain_id)
            except OSError as e:  # requests' connection errors are OSErrors: the node is not there
                log.warning(
                    "dev faucet: chain %s at %s does not answer (%s); %s not funded",
                    chain_id,
                    rpc_url,
                    type(e).__name__,
                    address,
                )
            except Exception:
                log.exception("dev faucet: funding %s on chain %s failed", address, chain_id)
    return funded


def fund_now(address: str) -> dict[int, list[str]]:
    """Funds `address` on every loopback dev chain; returns {chain_id: tx hashes}. Chains that
    fail are logged and skipped. Does nothing outside development."""
    chains, deployments_dir = _targets()
    return _fund(address, chains, deployments_dir)


def on_address_registered(address: str) -> threading.Thread | None:
    """The address hook (accounts.set_address, through core.extensions); returns the worker thread
    (tests may join it), or None when there is nothing to fund (outside development)."""
    chains, deployments_dir = _targets()
    if not chains:
        return None
    return _spawn(address, chains, deployments_dir)


def _spawn(address: str, chains: list[tuple[int, str]], deployments_dir) -> threading.Thread:
    worker = threading.Thread(target=_fund, args=(address, chains, deployments_dir), name="dev-faucet", daemon=True)
    with _workers_lock:
        _workers[:] = [w for w in _workers if w.is_alive()]
        _workers.append(worker)
    worker.start()
    return worker


def wait_idle(timeout: float = 60.0) -> bool:
    """Waits for running faucet threads (tests, shutdown); False if some are still running."""
    with _workers_lock:
        workers = list(_workers)
    for w in workers:
        w.join(timeout)
    return not any(w.is_alive() for w in workers)


def stop(timeout: float = 30.0) -> bool:
    """Before the dev chain stops: the sends not yet started are cancelled, the one under way is
    waited for. False if a worker is still running after `timeout`. Funding works again after."""
    _stopping.set()
    try:
        return wait_idle(timeout)
    finally:
        _stopping.clear()
