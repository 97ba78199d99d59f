"""services.relayer._node_now: the node's state a follow pass starts from, read in one JSON-RPC
batch; a node's error or a malformed answer is a Web3RPCError (the pass then changes nothing)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from web3.exceptions import Web3RPCError

from wallet_app.services.relayer import _node_now

ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
GOOD = [
    {"result": "0x2a"},
    {"result": "0x2c"},
    {"result": {"timestamp": "0x6560b8c0", "number": "0x9"}},
    {"result": "0x3b9aca00"},
]


def node(answers: object) -> SimpleNamespace:
    asked: list = []

    def make_batch_request(calls):
        asked.append(calls)
        return answers

    return SimpleNamespace(provider=SimpleNamespace(make_batch_request=make_batch_request), asked=asked)


def test_the_four_reads_are_one_batch_in_order():
    w3 = node(GOOD)
    assert _node_now(w3, ADDRESS) == (42, 44, 0x6560B8C0, 1_000_000_000, 9)
    assert w3.asked == [
        [
            ("eth_getTransactionCount", [ADDRESS, "latest"]),
            ("eth_getTransactionCount", [ADDRESS, "pending"]),
            ("eth_getBlockByNumber", ["latest", False]),
            ("eth_gasPrice", []),
        ]
    ]


@pytest.mark.parametrize(
    "answers",
    [
        [GOOD[0], GOOD[1], GOOD[2], {"error": {"code": -32000, "message": "busy"}}],  # one call refused
        [GOOD[0], GOOD[1], {"result": None}, GOOD[3]],  # no latest block
        [GOOD[0], GOOD[1], {"result": {"number": "0x9"}}, GOOD[3]],  # a block without its timestamp
        [GOOD[0], GOOD[1], {"result": {"timestamp": "0x6560b8c0"}}, GOOD[3]],  # nor its number
        [GOOD[0], {"result": "pending"}, GOOD[2], GOOD[3]],  # not a quantity
        GOOD[:3],  # an answer short
        {"error": {"code": -32600, "message": "batch refused"}},  # the whole batch refused
    ],
)
def test_an_error_or_a_malformed_answer_is_a_node_error(answers):
    with pytest.raises(Web3RPCError):
        _node_now(node(answers), ADDRESS)
