import json
import os
import select
import signal
import subprocess
import sys
import time

import httpx
import pytest
from eth_account import Account
from web3 import Web3

from tools.ports import free_port
from wallet_app.core.config import REPO_ROOT
from wallet_app.dev.anvil import Anvil, AnvilError

DEV_KEY_1 = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"  # anvil account 1


def test_state_file_keeps_chain_across_restarts(tmp_path):
    state = tmp_path / "state.json"
    receiver = Account.create().address
    with Anvil(port=0, state_file=state) as node:
        w3 = Web3(Web3.HTTPProvider(node.url))
        sender = Account.from_key(DEV_KEY_1)
        signed = sender.sign_transaction({"to": receiver, "value": 12345, "nonce": 0, "gas": 21_000,
                                          "gasPrice": w3.eth.gas_price, "chainId": 31337})
        w3.eth.wait_for_transaction_receipt(w3.eth.send_raw_transaction(signed.raw_transaction), timeout=10)
    assert state.exists()
    with Anvil(port=0, state_file=state) as node:
        assert Web3(Web3.HTTPProvider(node.url)).eth.get_balance(receiver) == 12345
    with Anvil(port=0) as node:  # no state file: a fresh chain
        assert Web3(Web3.HTTPProvider(node.url)).eth.get_balance(receiver) == 0


def test_stop_frees_the_port_and_busy_port_is_refused(anvil_node):
    with pytest.raises(AnvilError, match="in use"):
        Anvil(port=anvil_node.port).start()
    node = Anvil(port=0).start()
    proc, url = node.proc, node.url
    node.stop()
    assert proc.returncode is not None and node.proc is None
    with pytest.raises(httpx.TransportError):
        httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}, timeout=2)
    node.stop()  # idempotent


def test_cli_deploys_and_stops_on_sigterm(tmp_path):
    port = free_port()
    cmd = [sys.executable, "-m", "wallet_app.dev.anvil", "--port", str(port), "--fresh", "--deploy",
           "--deployments-dir", str(tmp_path)]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline, lines = time.monotonic() + 45, []
        while not any(line.startswith("deployed:") for line in lines):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(lines)
            if select.select([proc.stdout], [], [], 1)[0]:
                lines.append(proc.stdout.readline())
        deployed = json.loads(lines[-1].removeprefix("deployed:"))
        assert json.loads((tmp_path / "deployments-31337.json").read_text()) == deployed
        assert len(Web3(Web3.HTTPProvider(f"http://127.0.0.1:{port}")).eth.get_code(deployed["payment"])) > 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    with pytest.raises(httpx.TransportError):  # anvil went with it
        httpx.post(f"http://127.0.0.1:{port}", json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"}, timeout=2)
