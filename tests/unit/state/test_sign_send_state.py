"""/sign's summary and the texts /send's alerts show (pure parts of state/sign.py and state/session.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from web3.exceptions import Web3RPCError

from tests.conftest import run_async
from wallet_app.errors import AppError
from wallet_app.services import chain as chain_svc
from wallet_app.services import transfers, txpreview
from wallet_app.services.txlink import decode_tx, encode_tx
from wallet_app.state.session import texts_for
from wallet_app.state.sign import summarize

TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
TRANSFER_DATA = ("0xa9059cbb" + "00" * 12 + RECIPIENT[2:].lower() + format(12_500_000, "064x"))
TX = {"chain_id": "31337", "to": TOKEN, "data": TRANSFER_DATA, "value": "0", "nonce": "3",
      "gas_limit": "51234", "gas_price": "1000000000"}
SENDER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
ERC20 = {"chain_id": 31337, "token_address": TOKEN, "token_symbol": "tUSD", "token_name": "Test USD",
         "token_decimals": 6}


def test_summary_of_a_known_transfer_and_of_other_calls():
    tx = decode_tx(encode_tx(TX))
    assert summarize(tx, [ERC20]) == {"kind": "transfer", "token_symbol": "tUSD", "token_name": "Test USD",
                                      "token_address": TOKEN, "recipient": RECIPIENT, "amount": "12.5",
                                      "token_decimals": "6"}
    # Unknown token, other chain, other selector, value attached: 'other'.
    assert summarize(tx, [])["kind"] == "other"
    assert summarize({**tx, "chain_id": "1"}, [ERC20])["kind"] == "other"
    assert summarize({**tx, "data": "0x095ea7b3" + tx["data"][10:]}, [ERC20])["kind"] == "other"
    assert summarize({**tx, "value": "1"}, [ERC20])["kind"] == "other"
    assert summarize({**tx, "data": "0x"}, [ERC20])["kind"] == "other"


@pytest.mark.parametrize("error, en, ko", [
    (AppError("max_decimals", decimals=6), "max 6 decimal places", "소수점 이하 최대 6자리"),
    (AppError("invalid_amount"), "invalid amount", "잘못된 금액"),
    (AppError("invalid_tx"), "invalid transaction", "잘못된 거래"),
    (AppError("expired"), "The payment request has expired. Please try again.",
     "결제 요청이 만료되었습니다. 다시 시도해 주세요."),
])
def test_an_error_shows_its_registry_text_with_params_and_no_code(error, en, ko):
    texts = texts_for(error.spec.key, error.params)
    assert texts == {"en": en, "ko": ko}


def _drive(handler, state, *args) -> list:
    """Runs a Reflex handler's own generator on `state` (a stand-in holding what it reads) to its end."""

    async def run() -> list:
        return [update async for update in handler.fn(state, *args)]

    return run_async(run())


class _Page(SimpleNamespace):
    async def _require_user(self):
        return SimpleNamespace(id=1, address=SENDER)

    def _fail(self, error, prefix=""):
        self.failed = error.code
        return "alert"


def test_an_unexpected_failure_of_the_build_leaves_next_usable(monkeypatch, caplog):
    """A node's JSON-RPC refusal (no AppError) while building left Next on 'Building…' until a reload."""
    from wallet_app.state.send import SendState

    def refused(*args):
        raise Web3RPCError("rate limited", rpc_response={"error": {"code": -32005, "message": "over quota"}})

    monkeypatch.setattr(transfers, "build_transfer", refused)
    page = _Page(building=False, chain_id="31337", recipient=SENDER, amount="1",
                 _selected_token=lambda: {"token_address": "0x" + "11" * 20, "token_decimals": 6})
    assert _drive(SendState.submit, page) == [None, "alert"]
    assert (page.building, page.failed) == (False, "rpc_unavailable")


def test_an_unexpected_failure_of_the_submit_leaves_confirm_usable(monkeypatch, caplog):
    from wallet_app.state.sign import SignState

    def broken(*args):
        raise RuntimeError("database gone for a moment")

    monkeypatch.setattr(transfers, "submit_signed", broken)
    monkeypatch.setattr(txpreview, "matches", lambda decoded, tx: True)
    monkeypatch.setattr(chain_svc, "decode_raw_tx", lambda raw: None)
    page = _Page(ready=True, blocked=False, submitting=False, done=False, pin_open=True, tx={}, replace_id="",
                 simulation="ok", _fails_now=lambda user: False)
    assert _drive(SignState.signed, page, "0x" + "ab" * 60) == [None, "alert"]
    assert (page.submitting, page.done, page.failed) == (False, False, "internal_error")


@pytest.mark.parametrize("simulation, fails_now, failed, submitted", [
    ("ok", True, "sign_fails_now", False),  # the balance changed after the preview: not broadcast
    ("ok", False, None, True),
    ("unavailable", True, "sign_fails_now", False),
    ("reverted", True, None, True),  # expected to fail, acknowledged: signed anyway, as the person chose
])
def test_a_link_that_would_fail_now_is_not_broadcast(monkeypatch, simulation, fails_now, failed, submitted):
    from wallet_app.state.sign import SignState

    sent = []
    monkeypatch.setattr(transfers, "submit_signed", lambda *a: sent.append(a) or {"tx_hash": "0x" + "cd" * 32})
    monkeypatch.setattr(txpreview, "matches", lambda decoded, tx: True)
    monkeypatch.setattr(chain_svc, "decode_raw_tx", lambda raw: None)
    page = _Page(ready=True, blocked=False, submitting=False, done=False, pin_open=True, tx={}, replace_id="",
                 simulation=simulation, _fails_now=lambda user: fails_now, failed=None,
                 _show_dialog=lambda *a, **k: None)
    _drive(SignState.signed, page, "0x" + "ab" * 60)
    assert (page.failed, bool(sent), page.done, page.submitting) == (failed, submitted, submitted, False)


@pytest.mark.parametrize("typed, note", [
    (RECIPIENT, "recipient_first_time"),
    (f"  {RECIPIENT.lower()} ", "recipient_first_time"),  # trimmed, any case
    (RECIPIENT[:-1] + "D", "recipient_first_time"),  # a bad checksum has the shape (Submit refuses it)
    (SENDER, ""),  # in the history
    (TOKEN, "recipient_token_contract"),
    (RECIPIENT[:-1], ""),  # 39 hex: no note yet
    ("0x" + RECIPIENT[2:] + "0", ""),
    ("", ""),
])
def test_the_recipient_note_waits_for_an_address_shape(typed, note):
    from wallet_app.state.send import SendState

    page = SimpleNamespace(recipient=typed, _known=[SENDER.lower()], _tokens=[ERC20], recipient_note="?")
    SendState._note_recipient(page)
    assert page.recipient_note == note


def test_send_reads_the_fields_less_what_no_one_sees(monkeypatch):
    """A recipient pasted with a zero-width space in it, or typed in an IME's full-width mode, and
    a full-width amount: they looked right and were refused as malformed ('Invalid recipient
    address', 'amount format error: invalid amount'). The transfer is built for the address and
    amount the person saw (services.typed)."""
    from wallet_app.state.send import SendState

    built = []
    monkeypatch.setattr(transfers, "build_transfer", lambda *args: built.append(args[2:]) or TX)
    for recipient, amount in (
        (f"\u200b{RECIPIENT[:12]}\u200b{RECIPIENT[12:]}\ufeff", "１２．５"),
        ("0X" + RECIPIENT[2:].upper().translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)}), "\u200b12.5"),
    ):
        page = _Page(building=False, chain_id="31337", recipient=recipient, amount=amount, failed="",
                     _selected_token=lambda: ERC20)
        updates = _drive(SendState.submit, page)
        assert page.failed == "" and built[-1] == (TOKEN, RECIPIENT, "12500000"), (recipient, updates)
    page = _Page(building=False, chain_id="31337", recipient="\u200b", amount="1", _selected_token=lambda: ERC20)
    assert _drive(SendState.submit, page) == ["alert"]
    assert page.failed == "need_recipient"


def test_a_speed_ups_pending_fee_on_an_op_stack_chain_has_its_l1_fee(monkeypatch):
    """/sign shows a speed-up's network fee next to the pending transaction's, 'at the same (full)
    precision' to show the +10%. On an OP-stack chain (Base Sepolia) the new fee had the L1 data
    fee in it, the pending one only gas x price: there, where the L1 fee is most of a fee, the
    speed-up looked many times dearer than the send it replaces."""
    import dataclasses

    from wallet_app.models import Activity
    from wallet_app.services import pending, tokens
    from wallet_app.services.chain import ChainConfig
    from wallet_app.state.sign import SignState

    l1 = 7 * 10**12
    op = ChainConfig(84532, "Base Sepolia", "http://127.0.0.1:1", "0x" + "00" * 20, None, "ETH", "Ether", 18, None,
                     (), l1_fee_oracle="0x420000000000000000000000000000000000000F")
    old_price = 10**9
    fields = {**{k: TX[k] for k in ("to", "data", "value", "gas_limit")}, "from": SENDER.lower(),
              "gas_price": str(old_price), "chain_id": op.chain_id, "nonce": 3}
    row = Activity(id=7, user_id=1, chain_id=op.chain_id, tx_hash="0x" + "ab" * 32, nonce=3, status="submitted")
    monkeypatch.setattr(pending, "_pending_entry", lambda user, activity_id: pending.Pending(row, fields, op, [row]))
    monkeypatch.setattr(tokens, "get_chain", lambda chain_id: op)
    monkeypatch.setattr(tokens, "user_tokens", lambda user: [])
    monkeypatch.setattr(chain_svc, "l1_fee", lambda chain, tx: l1 if chain.l1_fee_oracle else 0)
    speed_up = {**TX, "chain_id": str(op.chain_id), "gas_price": str(pending.bump(old_price))}

    async def preview(user, chain, tx, replacing=False):
        return dataclasses.replace(txpreview.describe(tx, chain, None, l1), simulation="ok"), None

    monkeypatch.setattr(txpreview, "load", preview)
    page = _Page(_page_again=False, ready=False, router=SimpleNamespace(url=SimpleNamespace(
        query_parameters={"tx": encode_tx(speed_up), "replace": "7"})))
    run_async(SignState.load.fn(page))
    assert page.ready
    limit = int(TX["gas_limit"])
    assert page.fee == pending.fee_text(op, limit, pending.bump(old_price), l1)
    assert page.fee_was == pending.fee_text(op, limit, old_price, l1)  # was fee_text(op, limit, old_price)
