"""keyring.js re-checks in real Chromium (issue 11 item 5): the /payment approve and the Pay typed
data are signed only when they equal what the page showed and the bundle's chains table says;
a good payload's signature equals eth-account's, every tampered field is refused with
REQUEST_MISMATCH before the PIN is even tried; a deadline out of range of the page's clock, all
else as shown, with CLOCK_OFF."""

from __future__ import annotations

import time

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data

from jshelpers import ABANDON, fails, new_wallet, ok
from pyhelpers import private_key

CHAIN_ID = 31337
CONTRACT = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
MERCHANT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
OTHER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
UNITS = 2_500_000
CHAINS = {str(CHAIN_ID): {"payment_contract": CONTRACT, "native_symbol": "ETH", "native_decimals": 18},
          "31338": {"payment_contract": None, "native_symbol": "ETH", "native_decimals": 18}}
EXPECT = {"chainId": CHAIN_ID, "merchant": MERCHANT, "token": TOKEN, "units": str(UNITS)}
PAY_TYPES = [
    {"name": "merchant", "type": "address"}, {"name": "token", "type": "address"},
    {"name": "from", "type": "address"}, {"name": "amount", "type": "uint256"},
    {"name": "paymentRef", "type": "bytes32"}, {"name": "deadline", "type": "uint48"},
]
MISMATCH = ("REQUEST_MISMATCH", "The request does not match what you confirmed.")
CLOCK_OFF = ("CLOCK_OFF", "The payment deadline is not within 10 minutes ahead of this device's clock")


def approve_data(spender: str, amount: int) -> str:
    return "0x095ea7b3" + spender[2:].lower().rjust(64, "0") + f"{amount:064x}"


APPROVE = {"chain_id": str(CHAIN_ID), "to": TOKEN, "data": approve_data(CONTRACT, UNITS), "value": "0",
           "nonce": "3", "gas_limit": "60000", "gas_price": "1000000000"}


def sign_approve(owner, tx, expect=EXPECT, chains=CHAINS):
    """checkApprove on the request, then signs that same request: what the approve PIN dialog does."""
    body = """const r = nb.keyring.legacyTxRequest(a.tx);
              const shown = nb.keyring.checkApprove(r, a.expect, a.chains);
              const raw = await nb.keyring.signTxRequest(a.owner, '123456', r);
              return [shown.spender, shown.amount.toString(), raw];"""
    return {"owner": owner, "tx": tx, "expect": expect, "chains": chains}, body


def test_good_approve_signs_exactly_what_was_checked(page):
    owner = new_wallet(page)["address"]
    arg, body = sign_approve(owner, APPROVE)
    spender, amount, raw = ok(page, body, arg)
    assert (spender, amount) == (CONTRACT, str(UNITS))
    expected = Account.sign_transaction({
        "chainId": CHAIN_ID, "to": TOKEN, "data": APPROVE["data"], "value": 0, "nonce": 3, "gas": 60000,
        "gasPrice": 1_000_000_000}, private_key(ABANDON))
    assert raw == "0x" + expected.raw_transaction.hex().removeprefix("0x")


@pytest.mark.parametrize("name, patch, expect, chains", [
    ("unlimited amount", {"data": approve_data(CONTRACT, 2**256 - 1)}, EXPECT, CHAINS),
    ("more than the payment", {"data": approve_data(CONTRACT, UNITS + 1)}, EXPECT, CHAINS),
    ("less than the payment", {"data": approve_data(CONTRACT, UNITS - 1)}, EXPECT, CHAINS),
    ("other spender", {"data": approve_data(OTHER, UNITS)}, EXPECT, CHAINS),
    ("other function (transfer)", {"data": "0xa9059cbb" + approve_data(CONTRACT, UNITS)[10:]}, EXPECT, CHAINS),
    ("extra calldata", {"data": approve_data(CONTRACT, UNITS) + "00"}, EXPECT, CHAINS),
    ("other token", {"to": OTHER}, EXPECT, CHAINS),
    ("native value", {"value": "1"}, EXPECT, CHAINS),
    ("other chain id", {"chain_id": "1"}, EXPECT, CHAINS),
    ("chain without a payment contract", {"chain_id": "31338"}, {**EXPECT, "chainId": 31338}, CHAINS),
    ("chain not in the table", {}, EXPECT, {}),
])
def test_tampered_approve_is_refused(page, name, patch, expect, chains):
    owner = new_wallet(page)["address"]
    arg, body = sign_approve(owner, {**APPROVE, **patch}, expect, chains)
    r = fails(page, body, arg)
    assert (r["code"], r["message"]) == MISMATCH, name


def pay_typed(owner: str, deadline: int | None = None) -> dict:
    return {
        "domain": {"name": "NewblPayment2", "version": "1", "chainId": CHAIN_ID, "verifyingContract": CONTRACT},
        "types": {"Pay": [dict(f) for f in PAY_TYPES]},
        "message": {"merchant": MERCHANT, "token": TOKEN, "from": owner, "amount": str(UNITS),
                    "paymentRef": "0x" + "ab" * 32, "deadline": deadline or int(time.time()) + 300},
    }


SIGN_PAY = "return nb.keyring.signPay(a.owner, '123456', a.typed, a.expect, a.chains);"


def test_good_pay_signature_equals_eth_account(page):
    owner = new_wallet(page)["address"]
    typed = pay_typed(owner)
    sig = ok(page, SIGN_PAY, {"owner": owner, "typed": typed, "expect": EXPECT, "chains": CHAINS})
    message = {**typed["message"], "amount": UNITS, "paymentRef": bytes.fromhex("ab" * 32)}
    signable = encode_typed_data(domain_data=typed["domain"], message_types={"Pay": PAY_TYPES}, message_data=message)
    assert sig == "0x" + Account.sign_message(signable, private_key(ABANDON)).signature.hex().removeprefix("0x")


def _set(typed: dict, path: str, value) -> dict:
    """`typed` with `path` set to `value`; "now+N" / "now-N" is that many seconds from now."""
    if isinstance(value, str) and value.startswith("now"):
        value = int(time.time()) + int(value[3:])
    part, key = path.split(".")
    typed[part][key] = value
    return typed


# A minute clear of the limits: Python's clock is read before the page's (the exact edges are
# test_deadline_edges_against_a_fixed_now).
DEADLINES_OUT_OF_RANGE = [("message.deadline", "now+660"), ("message.deadline", "now-60")]


@pytest.mark.parametrize("path, value", [
    ("domain.name", "NewblPayment3"),
    ("domain.version", "2"),
    ("domain.chainId", 1),
    ("domain.chainId", "31337x"),
    ("domain.verifyingContract", OTHER),
    ("domain.salt", "0x" + "00" * 32),
    ("message.merchant", OTHER),
    ("message.token", OTHER),
    ("message.amount", str(UNITS + 1)),
    ("message.amount", str(2**256 - 1)),
    ("message.from", OTHER),
    ("types.Pay", list(reversed(PAY_TYPES))),
    ("types.Other", [{"name": "x", "type": "uint256"}]),
])
def test_tampered_pay_is_refused(page, path, value):
    owner = new_wallet(page)["address"]
    typed = _set(pay_typed(owner), path, value)
    r = fails(page, SIGN_PAY, {"owner": owner, "typed": typed, "expect": EXPECT, "chains": CHAINS})
    assert (r["code"], r["message"]) == MISMATCH, path


@pytest.mark.parametrize("expect, chains", [
    ({**EXPECT, "chainId": 1}, CHAINS),  # the link's chain differs from the typed data's
    ({**EXPECT, "merchant": OTHER}, CHAINS),
    ({**EXPECT, "units": "0"}, CHAINS),
    (EXPECT, {str(CHAIN_ID): {**CHAINS[str(CHAIN_ID)], "payment_contract": OTHER}}),  # the bundle's table decides
    (EXPECT, {}),
])
def test_pay_checked_against_the_page_and_the_table(page, expect, chains):
    owner = new_wallet(page)["address"]
    r = fails(page, SIGN_PAY, {"owner": owner, "typed": pay_typed(owner), "expect": expect, "chains": chains})
    assert (r["code"], r["message"]) == MISMATCH


def test_tx_summary_is_decoded_from_the_request(page):
    tx = {**APPROVE, "to": MERCHANT.lower(), "data": "0x", "value": "1500000000000000000"}
    got = ok(page, """const s = nb.keyring.txSummary(nb.keyring.legacyTxRequest(a.tx), a.chains);
                      return [s.to, s.value.toString(), s.nativeSymbol, s.nativeDecimals];""",
             {"tx": tx, "chains": CHAINS})
    assert got == [MERCHANT, "1500000000000000000", "ETH", 18]


# ---------------------------------------------------------------- gasless payments: the Permit (issue 14)

PERMIT_TYPES = [
    {"name": "owner", "type": "address"}, {"name": "spender", "type": "address"},
    {"name": "value", "type": "uint256"}, {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]


def permit_typed(owner: str, deadline: int | None = None) -> dict:
    return {
        "domain": {"name": "Newbl Test USD", "version": "1", "chainId": CHAIN_ID, "verifyingContract": TOKEN},
        "types": {"Permit": [dict(f) for f in PERMIT_TYPES]},
        "message": {"owner": owner, "spender": CONTRACT, "value": str(UNITS), "nonce": "4",
                    "deadline": deadline or int(time.time()) + 300},
    }


SIGN_BOTH = "return nb.keyring.signPermitAndPay(a.owner, '123456', a.permit, a.pay, a.expect, a.chains);"


def test_good_permit_and_pay_are_signed_with_one_unlock_as_eth_account_does(page):
    owner = new_wallet(page)["address"]
    deadline = int(time.time()) + 300
    permit, pay = permit_typed(owner, deadline), pay_typed(owner, deadline)
    got = ok(page, SIGN_BOTH, {"owner": owner, "permit": permit, "pay": pay, "expect": EXPECT, "chains": CHAINS})
    message = {**permit["message"], "value": UNITS, "nonce": 4}
    signable = encode_typed_data(domain_data=permit["domain"], message_types={"Permit": PERMIT_TYPES},
                                 message_data=message)
    key = private_key(ABANDON)
    assert got["permit_signature"] == "0x" + Account.sign_message(signable, key).signature.hex().removeprefix("0x")
    pay_message = {**pay["message"], "amount": UNITS, "paymentRef": bytes.fromhex("ab" * 32)}
    signable = encode_typed_data(domain_data=pay["domain"], message_types={"Pay": PAY_TYPES}, message_data=pay_message)
    assert got["signature"] == "0x" + Account.sign_message(signable, key).signature.hex().removeprefix("0x")


@pytest.mark.parametrize("path, value", [
    ("domain.verifyingContract", OTHER),  # another token's permit
    ("domain.chainId", 1),
    ("domain.name", ""),
    ("domain.salt", "0x" + "00" * 32),
    ("message.owner", OTHER),
    ("message.spender", OTHER),  # someone else may spend
    ("message.value", str(UNITS + 1)),  # more than the payment
    ("message.value", str(2**256 - 1)),  # unlimited
    ("message.nonce", "-1"),
    ("message.extra", "1"),
    ("types.Permit", list(reversed(PERMIT_TYPES))),
])
def test_tampered_permit_is_refused(page, path, value):
    owner = new_wallet(page)["address"]
    permit = _set(permit_typed(owner), path, value)
    r = fails(page, SIGN_BOTH, {"owner": owner, "permit": permit, "pay": pay_typed(owner), "expect": EXPECT,
                                "chains": CHAINS})
    assert (r["code"], r["message"]) == MISMATCH, path


def test_a_good_permit_does_not_carry_a_tampered_pay(page):
    owner = new_wallet(page)["address"]
    pay = _set(pay_typed(owner), "message.merchant", OTHER)
    r = fails(page, SIGN_BOTH, {"owner": owner, "permit": permit_typed(owner), "pay": pay, "expect": EXPECT,
                                "chains": CHAINS})
    assert (r["code"], r["message"]) == MISMATCH


@pytest.mark.parametrize("deadline", DEADLINES_OUT_OF_RANGE)
@pytest.mark.parametrize("which", ["pay", "permit"])
def test_a_deadline_out_of_range_alone_is_clock_off(page, which, deadline):
    """All else as shown: the phone's clock and the server's disagree, and the user is told so."""
    owner = new_wallet(page)["address"]
    permit, pay = permit_typed(owner), pay_typed(owner)
    _set(permit if which == "permit" else pay, *deadline)
    arg = {"owner": owner, "permit": permit, "pay": pay, "expect": EXPECT, "chains": CHAINS}
    r = fails(page, SIGN_BOTH, arg)
    assert (r["code"], r["message"]) == CLOCK_OFF
    if which == "pay":
        r = fails(page, SIGN_PAY, {**arg, "typed": pay})
        assert (r["code"], r["message"]) == CLOCK_OFF


@pytest.mark.parametrize("clock_in, tampered_in", [("pay", "pay"), ("permit", "permit"), ("permit", "pay"),
                                                   ("pay", "permit")])
def test_a_tampered_field_is_a_mismatch_whatever_the_deadline(page, clock_in, tampered_in):
    """CLOCK_OFF only when nothing else differs: a tampered field beside a deadline out of range,
    in the same typed data or the other one, is REQUEST_MISMATCH."""
    owner = new_wallet(page)["address"]
    typed = {"permit": permit_typed(owner), "pay": pay_typed(owner)}
    _set(typed[clock_in], *DEADLINES_OUT_OF_RANGE[0])
    _set(typed[tampered_in], "message.owner" if tampered_in == "permit" else "message.merchant", OTHER)
    arg = {"owner": owner, **typed, "expect": EXPECT, "chains": CHAINS}
    r = fails(page, SIGN_BOTH, arg)
    assert (r["code"], r["message"]) == MISMATCH
    if clock_in == tampered_in == "pay":
        r = fails(page, SIGN_PAY, {**arg, "typed": typed["pay"]})
        assert (r["code"], r["message"]) == MISMATCH


NOW = 1_800_000_000


@pytest.mark.parametrize("ahead, signed", [(-1, False), (0, False), (1, True), (600, True), (601, False)])
@pytest.mark.parametrize("check", ["checkPayTyped", "checkPermitTyped"])
def test_deadline_edges_against_a_fixed_now(page, check, ahead, signed):
    """A deadline is in the future and at most 10 minutes ahead of the page's clock, to the second."""
    owner = OTHER  # no key is needed: the check comes before the PIN
    typed = (pay_typed if check == "checkPayTyped" else permit_typed)(owner, NOW + ahead)
    body = f"nb.keyring.{check}(a.typed, a.expect, a.owner, a.chains, a.now); return true;"
    arg = {"owner": owner, "typed": typed, "expect": EXPECT, "chains": CHAINS, "now": NOW}
    if signed:
        assert ok(page, body, arg) is True
    else:
        r = fails(page, body, arg)
        assert (r["code"], r["message"]) == CLOCK_OFF


@pytest.mark.parametrize("after, signed", [(299, True), (300, False)])
def test_signing_checks_the_deadline_against_the_instant_the_dialog_checked_it(page, after, signed):
    """The PIN dialog (wallet.jsx) signs with the instant its checks ran when it opened, not the
    page's clock at the PIN: whether the time ran out meanwhile is the server's to say. An hour
    ago here, with the deadline 5 minutes after it: signed when it is still ahead of that instant."""
    owner = new_wallet(page)["address"]
    then = int(time.time()) - 3600
    permit, pay = permit_typed(owner, then + 300), pay_typed(owner, then + 300)
    arg = {"owner": owner, "permit": permit, "pay": pay, "typed": pay, "expect": EXPECT, "chains": CHAINS,
           "now": then + after}
    both = "return nb.keyring.signPermitAndPay(a.owner, '123456', a.permit, a.pay, a.expect, a.chains, a.now);"
    one = "return nb.keyring.signPay(a.owner, '123456', a.typed, a.expect, a.chains, a.now);"
    if signed:
        assert ok(page, both, arg)["signature"] == ok(page, one, arg)
    else:
        for body in (both, one):
            r = fails(page, body, arg)
            assert (r["code"], r["message"]) == CLOCK_OFF


# ---------------------------------------------------------------- Permit2 and other permits (an audit)
# The only typed data the wallet signs are /payment's Pay and the token's EIP-2612 Permit for the
# chain's payment contract (no link, personal_sign or other typed data reaches a signer): a Permit2
# signature (the drainer's favourite), a DAI-style permit, or a Permit dressed up as shown, in the
# place of the payment's permit, is refused before the PIN.

PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
PERMIT2_DOMAIN = {"name": "Permit2", "chainId": CHAIN_ID, "verifyingContract": PERMIT2}
MAX160 = str(2**160 - 1)
DETAILS = [{"name": "token", "type": "address"}, {"name": "amount", "type": "uint160"},
           {"name": "expiration", "type": "uint48"}, {"name": "nonce", "type": "uint48"}]
PERMITTED = [{"name": "token", "type": "address"}, {"name": "amount", "type": "uint256"}]
FAR = 2**48 - 1


def _permit2_single(domain: dict) -> dict:
    return {"domain": domain, "types": {
        "PermitSingle": [{"name": "details", "type": "PermitDetails"}, {"name": "spender", "type": "address"},
                         {"name": "sigDeadline", "type": "uint256"}],
        "PermitDetails": DETAILS},
        "message": {"details": {"token": TOKEN, "amount": MAX160, "expiration": FAR, "nonce": 0},
                    "spender": OTHER, "sigDeadline": FAR}}


def _permit2_transfer(domain: dict, witness: bool = False, batch: bool = False) -> dict:
    primary = ("PermitBatchWitnessTransferFrom" if batch else "PermitWitnessTransferFrom") if witness else (
        "PermitBatchTransferFrom" if batch else "PermitTransferFrom")
    fields = [{"name": "permitted", "type": "TokenPermissions[]" if batch else "TokenPermissions"},
              {"name": "spender", "type": "address"}, {"name": "nonce", "type": "uint256"},
              {"name": "deadline", "type": "uint256"}]
    types = {primary: fields, "TokenPermissions": PERMITTED}
    permitted = {"token": TOKEN, "amount": str(2**256 - 1)}
    message = {"permitted": [permitted] if batch else permitted, "spender": OTHER, "nonce": 0, "deadline": FAR}
    if witness:
        fields.append({"name": "witness", "type": "Order"})
        types["Order"] = [{"name": "recipient", "type": "address"}]
        message["witness"] = {"recipient": OTHER}
    return {"domain": domain, "types": types, "message": message}


def _permit2_batch(domain: dict) -> dict:
    return {"domain": domain, "types": {
        "PermitBatch": [{"name": "details", "type": "PermitDetails[]"}, {"name": "spender", "type": "address"},
                        {"name": "sigDeadline", "type": "uint256"}],
        "PermitDetails": DETAILS},
        "message": {"details": [{"token": TOKEN, "amount": MAX160, "expiration": FAR, "nonce": 0}],
                    "spender": OTHER, "sigDeadline": FAR}}


def _dai_permit(owner: str, domain: dict) -> dict:
    return {"domain": domain, "types": {"Permit": [
        {"name": "holder", "type": "address"}, {"name": "spender", "type": "address"},
        {"name": "nonce", "type": "uint256"}, {"name": "expiry", "type": "uint256"},
        {"name": "allowed", "type": "bool"}]},
        "message": {"holder": owner, "spender": CONTRACT, "nonce": 0, "expiry": 0, "allowed": True}}


def _with(typed: dict, **changes) -> dict:
    return {**typed, **changes}


def _types(typed: dict, **changes) -> dict:
    return {**typed, "types": {**typed["types"], **changes}}


def _renamed(fields: list[dict], old: str, new: str) -> list[dict]:
    return [{**f, "name": new} if f["name"] == old else f for f in fields]


@pytest.mark.parametrize("name", [
    "PermitSingle", "PermitSingle, the token's domain", "PermitBatch", "PermitTransferFrom",
    "PermitBatchTransferFrom", "PermitWitnessTransferFrom", "PermitBatchWitnessTransferFrom",
    "DAI permit", "DAI permit, Permit2's domain", "Permit on Permit2's domain", "Permit on Permit2 as the token",
    "Permit and an unused type", "Permit with a nested type", "Permit, look-alike type name",
    "Permit, look-alike field name", "Permit for Permit2 as the spender", "Permit of 2^160 - 1",
    "Permit, far deadline", "Permit of another chain",
])
def test_permit2_and_other_permits_are_refused_in_the_payments_place(page, name):
    owner = new_wallet(page)["address"]
    good = permit_typed(owner)
    token_domain = good["domain"]
    cases = {
        "PermitSingle": _permit2_single(PERMIT2_DOMAIN),
        "PermitSingle, the token's domain": _permit2_single(token_domain),
        "PermitBatch": _permit2_batch(PERMIT2_DOMAIN),
        "PermitTransferFrom": _permit2_transfer(PERMIT2_DOMAIN),
        "PermitBatchTransferFrom": _permit2_transfer(PERMIT2_DOMAIN, batch=True),
        "PermitWitnessTransferFrom": _permit2_transfer(PERMIT2_DOMAIN, witness=True),
        "PermitBatchWitnessTransferFrom": _permit2_transfer(PERMIT2_DOMAIN, witness=True, batch=True),
        "DAI permit": _dai_permit(owner, token_domain),
        "DAI permit, Permit2's domain": _dai_permit(owner, PERMIT2_DOMAIN),
        "Permit on Permit2's domain": _with(good, domain=PERMIT2_DOMAIN),
        "Permit on Permit2 as the token": _with(good, domain={**token_domain, "verifyingContract": PERMIT2}),
        "Permit and an unused type": _types(good, PermitDetails=DETAILS),
        "Permit with a nested type": _with(_types(good, Permit=[*PERMIT_TYPES, {"name": "d", "type": "PermitDetails"}],
                                                  PermitDetails=DETAILS),
                                           message={**good["message"], "d": {"token": TOKEN, "amount": MAX160,
                                                                             "expiration": FAR, "nonce": 0}}),
        "Permit, look-alike type name": _with(good, types={"P\u0435rmit": PERMIT_TYPES}),  # a Cyrillic e
        "Permit, look-alike field name": _with(
            _types(good, Permit=_renamed(PERMIT_TYPES, "spender", "sp\u0435nder")),
            message={**{k: v for k, v in good["message"].items() if k != "spender"}, "sp\u0435nder": CONTRACT}),
        "Permit for Permit2 as the spender": _with(good, message={**good["message"], "spender": PERMIT2}),
        "Permit of 2^160 - 1": _with(good, message={**good["message"], "value": MAX160}),
        "Permit, far deadline": _with(good, message={**good["message"], "deadline": FAR}),
        "Permit of another chain": _with(good, domain={**token_domain, "chainId": 1}),
    }
    r = fails(page, SIGN_BOTH, {"owner": owner, "permit": cases[name], "pay": pay_typed(owner), "expect": EXPECT,
                                "chains": CHAINS})
    assert (r["code"], r["message"]) == (CLOCK_OFF if name == "Permit, far deadline" else MISMATCH), name


@pytest.mark.parametrize("extra", [
    {"primaryType": "EIP712Domain"},
    {"primaryType": "PermitSingle"},
    {"types": {"EIP712Domain": [{"name": "name", "type": "string"}, {"name": "chainId", "type": "uint256"},
                                {"name": "verifyingContract", "type": "address"}],
               "Permit": [dict(f) for f in PERMIT_TYPES]}},
])
def test_what_the_checks_ignore_changes_nothing_signed(page, extra):
    """A primaryType, or an EIP712Domain type other than the domain's fields, is not what is signed:
    the signature is eth-account's over the domain and the Permit as the checks saw them."""
    owner = new_wallet(page)["address"]
    deadline = int(time.time()) + 300
    permit = {**permit_typed(owner, deadline), **extra}
    got = ok(page, SIGN_BOTH, {"owner": owner, "permit": permit, "pay": pay_typed(owner, deadline), "expect": EXPECT,
                               "chains": CHAINS})
    good = permit_typed(owner, deadline)
    signable = encode_typed_data(domain_data=good["domain"], message_types={"Permit": PERMIT_TYPES},
                                 message_data={**good["message"], "value": UNITS, "nonce": 4})
    signature = "0x" + Account.sign_message(signable, private_key(ABANDON)).signature.hex().removeprefix("0x")
    assert got["permit_signature"] == signature
    assert Account.recover_message(signable, signature=got["permit_signature"]) == owner
