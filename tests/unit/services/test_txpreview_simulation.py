"""Parsing eth_simulateV1 answers (services.txpreview.parse_simulation) with answers recorded from
anvil 1.7.1 (tests/unit/services/recorded/simulate_v1_anvil_1.7.1.json): an ERC-20 transfer, a native
transfer, a reverting call and a node error."""

import json
from pathlib import Path

import pytest

from wallet_app.services.chain import TokenInfo
from wallet_app.services.eth import ZERO_ADDRESS
from wallet_app.services.txpreview import Simulation, change_text, parse_simulation

RECORDED = json.loads((Path(__file__).parent / "recorded" / "simulate_v1_anvil_1.7.1.json").read_text())
OWNER, TUSD, RECIPIENT = RECORDED["owner"], RECORDED["tusd"], RECORDED["recipient"]


def test_erc20_transfer_is_a_token_out():
    assert parse_simulation(RECORDED["transfer"], OWNER) == Simulation("ok", {TUSD.lower(): -12_500_000})
    # Seen from the recipient, the same answer is a token in.
    assert parse_simulation(RECORDED["transfer"], RECIPIENT) == Simulation("ok", {TUSD.lower(): 12_500_000})


def test_native_transfer_is_traced_as_the_native_coin():
    assert parse_simulation(RECORDED["native"], OWNER) == Simulation("ok", {ZERO_ADDRESS: -(10**18)})


def test_revert():
    assert parse_simulation(RECORDED["revert"], OWNER) == Simulation("reverted", {})


@pytest.mark.parametrize("answer", [
    RECORDED["insufficient_funds"],
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}},
    {"jsonrpc": "2.0", "id": 1, "result": []},
    {"jsonrpc": "2.0", "id": 1, "result": [{"calls": [{"status": "0x1", "logs": [{"topics": "x"}]}]}]},
    None,
])
def test_anything_else_is_unavailable(answer):
    assert parse_simulation(answer, OWNER) == Simulation("unavailable", {})


def test_self_transfers_and_other_parties_cancel_out():
    transfer = RECORDED["transfer"]["result"][0]["calls"][0]["logs"][0]
    back = {**transfer, "topics": [transfer["topics"][0], transfer["topics"][2], transfer["topics"][1]]}
    answer = {"result": [{"calls": [{"status": "0x1", "logs": [transfer, back]}]}]}
    assert parse_simulation(answer, OWNER) == Simulation("ok", {})


@pytest.mark.parametrize("units, text", [(-12_500_000, "-12.5 tUSD"), (1, "+0.000001 tUSD"),
                                         (-10**12, "-1,000,000 tUSD")])
def test_change_text_in_the_token_units(units, text):
    assert change_text(units, TokenInfo(TUSD, "tUSD", "Newbl Test USD", 6)) == text
