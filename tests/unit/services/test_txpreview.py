"""The /sign decoder and refusals (services.txpreview): selectors, amounts, the unlimited threshold,
the native value, unknown calls, malformed ERC-20 calls, unlisted tokens, the fee, and the refusal rules."""

from dataclasses import replace

import pytest
from eth_abi import encode

from wallet_app.i18n import CATALOGUES
from wallet_app.services.chain import ChainConfig, TokenInfo, erc20_call_selectors
from wallet_app.services.eth import checksum
from wallet_app.services.txpreview import (
    UNLIMITED,
    Line,
    balance_changes,
    counterparty,
    describe,
    fee_outdated,
    label_token,
    matches,
    nonce_refusal,
    refusal,
    shown_approval,
    token_of,
)
from wallet_app.state.sign import line_texts

TOKEN = TokenInfo("0x5FbDB2315678afecb367f032d93F642f64180aa3", "tUSD", "Newbl Test USD", 6)
CHAIN = ChainConfig(31337, "Newbl Dev (anvil)", "http://127.0.0.1:1", "0x" + "11" * 20, None, "ETH", "Ether", 18,
                    None, (TOKEN,))
A = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
ZERO = "0x" + "00" * 20
B = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"


def call(name: str, types: list[str], args: list) -> str:
    sel = next(s for s, n in erc20_call_selectors().items() if n == name)
    return sel + encode(types, args).hex()


def approve(spender: str, units: int) -> str:
    return call("approve", ["address", "uint256"], [spender, units])


# Each ERC-20 call with well-formed arguments, to which the malformed cases add or remove bytes.
WELL_FORMED = {
    "transfer": call("transfer", ["address", "uint256"], [A, 1]),
    "transferFrom": call("transferFrom", ["address", "address", "uint256"], [A, B, 1]),
    "approve": approve(A, 2**256 - 1),
    "increaseAllowance": call("increaseAllowance", ["address", "uint256"], [A, 2**256 - 1]),
    "increaseApproval": call("increaseApproval", ["address", "uint256"], [A, 2**256 - 1]),
    "setApprovalForAll": call("setApprovalForAll", ["address", "bool"], [A, True]),
    "permit2Approve": call("permit2Approve", ["address", "address", "uint160", "uint48"],
                           [TOKEN.token_address, A, 2**160 - 1, 2**48 - 1]),
}
NFT = "0x" + "71" * 20  # an ERC-721 collection
PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3"


def for_all(operator: str, approved) -> str:
    return call("setApprovalForAll", ["address", "bool"], [operator, approved])


def permit2_approve(token: str, spender: str, units: int, expiration: int) -> str:
    return call("permit2Approve", ["address", "address", "uint160", "uint48"], [token, spender, units, expiration])


def permit2_line(amount: str, expiration: str, contract: str = PERMIT2) -> Line:
    """Its line for A as the spender of tUSD; a param starting 'sign_' is a catalogue key."""
    params = {"spender": A, "amount": amount, "symbol": "tUSD", "contract": contract, "expiration": expiration}
    return Line("sign_line_permit2_approve", params,
                keyed=tuple(k for k in ("amount", "expiration") if params[k].startswith("sign_")))
DIRTY_ADDRESS = "0x095ea7b3" + "ff" * 12 + A[2:].lower() + "00" * 31 + "01"  # approve, high bytes of the address set


def called(data: str) -> str:
    """The contract an ERC20_CALLS call is made on in these tests: Permit2 for its approve, else the token."""
    return PERMIT2 if data.startswith("0x87517c45") else TOKEN.token_address


def tx(data="0x", value="0", gas_limit="50000", gas_price="1000000000", to=TOKEN.token_address) -> dict[str, str]:
    return {"chain_id": "31337", "to": to, "data": data, "value": value, "nonce": "0", "gas_limit": gas_limit,
            "gas_price": gas_price}


def test_selectors_are_the_erc20_ones():
    assert erc20_call_selectors() == {"0xa9059cbb": "transfer", "0x23b872dd": "transferFrom", "0x095ea7b3": "approve",
                           "0x39509351": "increaseAllowance", "0xd73dd623": "increaseApproval",
                           "0xa22cb465": "setApprovalForAll", "0x87517c45": "permit2Approve"}


@pytest.mark.parametrize("data, lines, warnings, selector", [
    (call("transfer", ["address", "uint256"], [A, 12_500_000]),
     [Line("sign_line_transfer", {"amount": "12.5", "symbol": "tUSD", "recipient": A})], [], ""),
    (call("transferFrom", ["address", "address", "uint256"], [A, B, 1]),
     [Line("sign_line_transfer_from", {"amount": "0.000001", "symbol": "tUSD", "owner": A, "recipient": B})], [], ""),
    (call("approve", ["address", "uint256"], [A, 5_000_000]),
     [Line("sign_line_approve", {"spender": A, "amount": "5", "symbol": "tUSD"})], [], ""),
    # increaseAllowance adds to the allowance: its own words.
    (call("increaseAllowance", ["address", "uint256"], [A, 1_234_567]),
     [Line("sign_line_increase_allowance", {"spender": A, "amount": "1.234567", "symbol": "tUSD"})], [], ""),
    # Just below the threshold (2^128): a (huge) number, no warning.
    (approve(A, 2**128 - 1),
     [Line("sign_line_approve", {"spender": A, "amount": f"{(2**128 - 1) // 10**6:,}.{(2**128 - 1) % 10**6:06d}",
                                 "symbol": "tUSD"})], [], ""),
    *[(approve(A, units),
       [Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))],
       [Line("sign_warn_unlimited")], "")
      for units in (2**128, 10**60, 2**254, 2**255, 2**256 - 1)],
    (call("increaseAllowance", ["address", "uint256"], [A, 2**256 - 1]),
     [Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))],
     [Line("sign_warn_unlimited")], ""),
    (call("increaseAllowance", ["address", "uint256"], [A, 2**128]),
     [Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))],
     [Line("sign_warn_unlimited")], ""),
    ("0xdeadbeef", [Line("sign_line_call", {"selector": "0xdeadbeef"})], [Line("sign_warn_unknown")], "0xdeadbeef"),
    # A known selector is never an unknown 'Contract call'. Bytes after the arguments (the token still
    # runs the call): decoded from the head, unlimited warning included, and the malformed warning.
    (WELL_FORMED["approve"] + "00",
     [Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))],
     [Line("sign_warn_unlimited"), Line("sign_warn_malformed_call", {"function": "approve"})], ""),
    (WELL_FORMED["increaseAllowance"] + "00" * 32,
     [Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))],
     [Line("sign_warn_unlimited"), Line("sign_warn_malformed_call", {"function": "increaseAllowance"})], ""),
    (WELL_FORMED["transfer"] + "ff",
     [Line("sign_line_transfer", {"amount": "0.000001", "symbol": "tUSD", "recipient": A})],
     [Line("sign_warn_malformed_call", {"function": "transfer"})], ""),
    (WELL_FORMED["transferFrom"] + "00",
     [Line("sign_line_transfer_from", {"amount": "0.000001", "symbol": "tUSD", "owner": A, "recipient": B})],
     [Line("sign_warn_malformed_call", {"function": "transferFrom"})], ""),
    # Fewer bytes than the arguments, or arguments that do not decode: named, warned, selector shown.
    (WELL_FORMED["transfer"][:-2],
     [Line("sign_line_malformed_call", {"function": "transfer"})],
     [Line("sign_warn_malformed_call", {"function": "transfer"})], "0xa9059cbb"),
    ("0x095ea7b3",
     [Line("sign_line_malformed_call", {"function": "approve"})],
     [Line("sign_warn_malformed_call", {"function": "approve"})], "0x095ea7b3"),
    (DIRTY_ADDRESS,
     [Line("sign_line_malformed_call", {"function": "approve"})],
     [Line("sign_warn_malformed_call", {"function": "approve"})], "0x095ea7b3"),
    ("0x", [Line("sign_line_native", {"amount": "0", "symbol": "ETH"})], [], ""),
    # increaseApproval: increaseAllowance's name in older tokens (it read 'Contract call', found by an audit).
    (call("increaseApproval", ["address", "uint256"], [A, 1_234_567]),
     [Line("sign_line_increase_allowance", {"spender": A, "amount": "1.234567", "symbol": "tUSD"})], [], ""),
    (WELL_FORMED["increaseApproval"],
     [Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))],
     [Line("sign_warn_unlimited")], ""),
    # setApprovalForAll (ERC-721, ERC-1155): the contract's tokens, whatever its decimals (the NFT has none).
    (for_all(A, True), [Line("sign_line_approve_all", {"operator": A, "contract": TOKEN.token_address})],
     [Line("sign_warn_unlimited")], ""),
    (for_all(A, False), [Line("sign_line_revoke_all", {"operator": A, "contract": TOKEN.token_address})], [], ""),
    (for_all(A, True) + "00", [Line("sign_line_approve_all", {"operator": A, "contract": TOKEN.token_address})],
     [Line("sign_warn_unlimited"), Line("sign_warn_malformed_call", {"function": "setApprovalForAll"})], ""),
    (for_all(A, True)[:-2] + "02",  # a bool of 2: Solidity refuses it
     [Line("sign_line_malformed_call", {"function": "setApprovalForAll"})],
     [Line("sign_warn_malformed_call", {"function": "setApprovalForAll"})], "0xa22cb465"),
])
def test_decoded_lines(data, lines, warnings, selector):
    p = describe(tx(data), CHAIN, TOKEN)
    assert (p.lines, p.warnings, p.selector) == (lines, warnings, selector)
    assert p.chain_name == "Newbl Dev (anvil)"


@pytest.mark.parametrize("data, lines, warnings, selector", [
    # Permit2's approve(token, spender, amount, expiration) on Permit2: `token` is the token it names.
    (permit2_approve(TOKEN.token_address, A, 5_000_000, 1_767_225_600),
     [permit2_line("5", "2026-01-01 00:00 UTC")], [], ""),
    (permit2_approve(TOKEN.token_address, A, 5_000_000, 253402300799), [permit2_line("5", "9999-12-31 23:59 UTC")],
     [], ""),
    (permit2_approve(TOKEN.token_address, A, 5_000_000, 253402300800), [permit2_line("5", "sign_expires_never")],
     [], ""),
    (permit2_approve(TOKEN.token_address, A, 2**128 - 1, 0),
     [permit2_line(f"{(2**128 - 1) // 10**6:,}.{(2**128 - 1) % 10**6:06d}", "sign_expires_at_once")], [], ""),
    (WELL_FORMED["permit2Approve"], [permit2_line("sign_unlimited", "sign_expires_never")],
     [Line("sign_warn_unlimited")], ""),
    (permit2_approve(TOKEN.token_address, A, 2**128, 0), [permit2_line("sign_unlimited", "sign_expires_at_once")],
     [Line("sign_warn_unlimited")], ""),
    (WELL_FORMED["permit2Approve"] + "00", [permit2_line("sign_unlimited", "sign_expires_never")],
     [Line("sign_warn_unlimited"), Line("sign_warn_malformed_call", {"function": "permit2Approve"})], ""),
])
def test_permit2_approve_lines(data, lines, warnings, selector):
    p = describe(tx(data, to=PERMIT2), CHAIN, TOKEN)
    assert (p.lines, p.warnings, p.selector) == (lines, warnings, selector)


# Permit2's approve selector on any other contract (here a token's, an NFT's, an account's): that
# contract's own function, an unknown call; its lines named it Permit2's approve of the token in its
# arguments (found by an audit), a malformed one refused as if it were.
@pytest.mark.parametrize("to", [TOKEN.token_address, NFT, A, PERMIT2.lower().replace("0x00", "0x01")])
@pytest.mark.parametrize("data", [WELL_FORMED["permit2Approve"], permit2_approve(TOKEN.token_address, A, 5, 0),
                                  WELL_FORMED["permit2Approve"] + "00", "0x87517c45"])
def test_permit2_approve_selector_elsewhere_is_an_unknown_call(to, data):
    link = tx(data, to=to)
    p = describe(link, CHAIN, TOKEN)
    assert (p.lines, p.warnings, p.selector) == (
        [Line("sign_line_call", {"selector": "0x87517c45"})], [Line("sign_warn_unknown")], "0x87517c45")
    assert refusal(link, CHAIN, 10**9, 10**18, 3) is None
    assert (counterparty(link), token_of(link), shown_approval(link, B)) == (to, None, None)


def test_native_value_is_its_own_line_whatever_the_data():
    approve = call("approve", ["address", "uint256"], [A, UNLIMITED])
    p = describe(tx(approve, value=str(15 * 10**17)), CHAIN, TOKEN)
    assert p.lines[-1] == Line("sign_line_native", {"amount": "1.5", "symbol": "ETH"})
    assert p.lines[0].key == "sign_line_approve" and p.warnings == [Line("sign_warn_unlimited")]
    p = describe(tx("0xdeadbeef", value="1"), CHAIN, None)
    assert [x.key for x in p.lines] == ["sign_line_call", "sign_line_native"]
    assert p.lines[1].params["amount"] == "0.000000000000000001"


def test_a_malformed_token_call_on_no_token_is_still_called_malformed():
    p = describe(tx(WELL_FORMED["approve"] + "00"), CHAIN, None)
    assert p.lines == [Line("sign_line_call", {"selector": "0x095ea7b3"})]
    assert p.warnings == [Line("sign_warn_unknown"), Line("sign_warn_malformed_call", {"function": "approve"})]


def test_approval_for_all_needs_no_token():
    p = describe(tx(for_all(A, True), to=NFT), CHAIN, None)
    assert p.lines == [Line("sign_line_approve_all", {"operator": A, "contract": checksum(NFT)})]
    assert p.warnings == [Line("sign_warn_unlimited")] and p.selector == ""


def test_a_token_call_on_no_token_is_a_contract_call():
    data = call("approve", ["address", "uint256"], [A, UNLIMITED])
    p = describe(tx(data), CHAIN, None)
    assert p.lines == [Line("sign_line_call", {"selector": "0x095ea7b3"})] and p.warnings == [Line("sign_warn_unknown")]


@pytest.mark.parametrize("gas_limit, gas_price, fee", [
    ("21000", "1000000000", "0.000021 ETH"),  # was "0.00002 ETH": truncated, shown below what it costs
    ("50000", "2000000000", "0.0001 ETH"),
    ("51234", "2000000000", "0.00011 ETH"),  # 0.000102468: rounded up, never down ("0.0001 ETH")
    ("21000", "10000000", "0.00000021 ETH"),  # an L2's fee: was "0 ETH"
    ("1000000", str(10**15), "1,000 ETH"),
])
def test_fee_is_gas_limit_times_gas_price_in_the_native_coin(gas_limit, gas_price, fee):
    assert describe(tx(gas_limit=gas_limit, gas_price=gas_price), CHAIN, TOKEN).fee == fee


def test_an_l1_data_fee_is_part_of_the_fee_shown_and_of_what_the_balance_must_pay():
    """An OP-stack chain (Base) charges the L1 data fee on top of gas x price: 21,000 gas at 0.01 gwei
    is 0.00000021 ETH, the L1 fee 0.00005 ETH; the preview showed the first alone."""
    link = tx(gas_limit="21000", gas_price=str(10**7))
    assert describe(link, CHAIN, TOKEN, l1_fee=5 * 10**13).fee == "0.000051 ETH"  # 0.00005021, rounded up
    assert refusal(link, CHAIN, 10**7, 21000 * 10**7 + 5 * 10**13, 3, None, 5 * 10**13) is None
    error = refusal(link, CHAIN, 10**7, 21000 * 10**7 + 5 * 10**13 - 1, 3, None, 5 * 10**13)
    assert (error and error.code) == "fee_unaffordable"


@pytest.mark.parametrize("kwargs, node_price, balance, code", [
    ({}, 10**9, 10**18, None),
    ({"gas_price": str(3 * 10**9)}, 10**9, 10**18, None),  # exactly 3x: allowed
    ({"gas_price": str(3 * 10**9 + 1)}, 10**9, 10**18, "fee_too_high"),
    ({"gas_price": str(10**15)}, 10**9, 10**30, "fee_too_high"),
    ({"value": str(10**18 - 50000 * 10**9)}, 10**9, 10**18, None),  # fee + value == balance
    ({"value": str(10**18 - 50000 * 10**9 + 1)}, 10**9, 10**18, "fee_unaffordable"),
    ({}, 10**9, 50000 * 10**9 - 1, "fee_unaffordable"),
    ({"to": "0x" + "00" * 20}, 10**9, 10**18, "sign_no_recipient"),
    # ERC-20 calls: exactly their arguments, or refused (a trailing byte still runs the call).
    # (Permit2's approve on Permit2: on any other contract it is not one, and none is refused.)
    *[({"data": data, "to": called(data)}, 10**9, 10**18, None) for data in WELL_FORMED.values()],
    *[({"data": data + "00", "to": called(data)}, 10**9, 10**18, "invalid_tx") for data in WELL_FORMED.values()],
    *[({"data": data + "00" * 32, "to": called(data)}, 10**9, 10**18, "invalid_tx")
      for data in WELL_FORMED.values()],
    *[({"data": data[:-2], "to": called(data)}, 10**9, 10**18, "invalid_tx") for data in WELL_FORMED.values()],
    ({"data": WELL_FORMED["approve"].upper().replace("0X", "0x") + "00"}, 10**9, 10**18, "invalid_tx"),
    ({"data": "0x095ea7b3"}, 10**9, 10**18, "invalid_tx"),
    ({"data": DIRTY_ADDRESS}, 10**9, 10**18, "invalid_tx"),
    ({"data": "0xdeadbeef00"}, 10**9, 10**18, None),  # not an ERC-20 selector: an unknown call, warned
])
def test_refusals(kwargs, node_price, balance, code):
    error = refusal(tx(**kwargs), CHAIN, node_price, balance, 3)
    assert (error and error.code) == code
    if code == "fee_unaffordable":
        assert error.params == {"symbol": "ETH"}


@pytest.mark.parametrize("gas_price, base_fee, code", [
    (10**9, None, None),  # a chain without a base fee (no EIP-1559)
    (10**9, 10**9, None),  # exactly the base fee: mined, with no tip
    (10**9, 10**9 + 1, "fee_outdated"),  # the fee rose since the link was built
    (2 * 10**9, 6 * 10**9, "fee_outdated"),
    (2 * 10**9, 0, None),
])
def test_a_gas_price_below_the_next_base_fee_is_refused(gas_price, base_fee, code):
    error = refusal(tx(gas_price=str(gas_price)), CHAIN, gas_price, 10**18, 3, base_fee)
    assert (error and error.code) == code
    assert (fee_outdated(gas_price, base_fee) and "fee_outdated") == code


def test_line_texts_in_both_languages():
    line = Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))
    assert line_texts(line) == {"en": f"Approve {A} to spend unlimited tUSD",
                                "ko": f"{A}이(가) 무제한 tUSD을(를) 쓸 수 있도록 승인"}
    assert line_texts(Line("sign_line_native", {"amount": "1.5", "symbol": "ETH"}))["en"] == "Sends 1.5 ETH"
    assert line_texts(Line("sign_warn_unknown"))["en"] == "Unknown function: check that you trust this site."
    assert line_texts(Line("sign_warn_unlimited"))["en"] == (
        "Unlimited approval: this address can take all of this token.")
    assert line_texts(Line("sign_line_call", {"selector": "0xdeadbeef"}))["en"] == "Contract call"


@pytest.mark.parametrize("line, en, ko", [
    (Line("sign_line_increase_allowance", {"spender": A, "amount": "5", "symbol": "tUSD"}),
     f"Allow {A} to spend 5 tUSD more, on top of its current allowance",
     f"{A}이(가) 기존 승인액에 더해 5 tUSD을(를) 더 쓸 수 있도록 승인"),
    (Line("sign_line_malformed_call", {"function": "approve"}), "Malformed approve call", "형식이 잘못된 approve 호출"),
    (Line("sign_warn_malformed_call", {"function": "approve"}),
     "The data of this approve call is not exactly its arguments, so it cannot be signed.",
     "이 approve 호출의 데이터가 인수와 정확히 일치하지 않아 서명할 수 없습니다."),
    (permit2_line("sign_unlimited", "sign_expires_never", PERMIT2),
     f"Approve {A} to spend unlimited tUSD through the Permit2 contract {PERMIT2}, until it is revoked (no expiry)",
     f"{A}이(가) Permit2 컨트랙트 {PERMIT2}를 통해 만료 없이 취소할 때까지 무제한 tUSD을(를) 쓸 수 있도록 승인"),
    (permit2_line("5", "sign_expires_at_once", PERMIT2),
     f"Approve {A} to spend 5 tUSD through the Permit2 contract {PERMIT2}, until the end of the block it is mined in",
     f"{A}이(가) Permit2 컨트랙트 {PERMIT2}를 통해 처리되는 블록이 끝날 때까지 5 tUSD을(를) 쓸 수 있도록 승인"),
    (permit2_line("5", "2026-01-01 00:00 UTC", PERMIT2),
     f"Approve {A} to spend 5 tUSD through the Permit2 contract {PERMIT2}, until 2026-01-01 00:00 UTC",
     f"{A}이(가) Permit2 컨트랙트 {PERMIT2}를 통해 2026-01-01 00:00 UTC까지 5 tUSD을(를) 쓸 수 있도록 승인"),
    (Line("sign_line_approve_all", {"operator": A, "contract": PERMIT2}),
     f"Approve {A} to take all of your tokens at {PERMIT2}",
     f"{A}이(가) {PERMIT2}에 있는 내 토큰을 모두 가져갈 수 있도록 승인"),
    (Line("sign_line_revoke_all", {"operator": A, "contract": PERMIT2}),
     f"Revoke the approval of {A} for all of your tokens at {PERMIT2}",
     f"{A}이(가) {PERMIT2}에 있는 내 토큰을 모두 가져갈 수 있는 승인 취소"),
    (Line("sign_warn_gain"),
     "Amounts coming in are only what a simulation gave: the contract can pay differently, or nothing, "
     "when the transaction is mined.",
     "들어오는 금액은 시뮬레이션 결과일 뿐입니다: 거래가 실제로 처리될 때 컨트랙트가 다르게 지급하거나 "
     "지급하지 않을 수 있습니다."),
    (Line("sign_warn_unknown_token", {"token": "0xABcD…1234"}),
     "Unknown token 0xABcD…1234: it is not on your token list, so the name and symbol it gives itself are not shown.",
     "알 수 없는 토큰 0xABcD…1234: 내 토큰 목록에 없어 토큰이 스스로 밝힌 이름과 기호를 표시하지 않습니다."),
])
def test_new_line_texts_in_both_languages(line, en, ko):
    assert line_texts(line) == {"en": en, "ko": ko}


# A contract of the attacker's that calls itself USDC (6 decimals), on no list.
FAKE = TokenInfo("0xabcdef0123456789abcdef0123456789abcd1234", "USDC", "USD Coin", 6)
NATIVE = CHAIN.native_token()
LISTED = {TOKEN.token_address.lower(), NATIVE.token_address.lower()}
OTHER = TokenInfo("0x" + "11" * 20, "tUSD", "Newbl Test USD", 0)  # another contract borrowing a listed symbol
UNKNOWN_FAKE = Line("sign_warn_unknown_token", {"token": "0xABcD…1234"})


@pytest.mark.parametrize("info, listed, shown, warning", [
    (TOKEN, LISTED, TOKEN, None),
    (NATIVE, LISTED, NATIVE, None),
    (FAKE, LISTED, TokenInfo(FAKE.token_address, "0xABcD…1234", "0xABcD…1234", 6), UNKNOWN_FAKE),
    # On the user's own list: its symbol (addresses compared whatever their case).
    (FAKE, LISTED | {FAKE.token_address}, FAKE, None),
    (replace(FAKE, token_address=checksum(FAKE.token_address)), LISTED | {FAKE.token_address},
     replace(FAKE, token_address=checksum(FAKE.token_address)), None),
])
def test_label_token(info, listed, shown, warning):
    assert label_token(info, listed) == (shown, warning)


@pytest.mark.parametrize("changes, infos, texts, warnings", [
    # The fake-swap preview: tUSD out, 'USDC' in from the attacker's own contract.
    ({TOKEN.token_address.lower(): -12_500_000, FAKE.token_address: 1_000 * 10**6},
     {TOKEN.token_address.lower(): TOKEN, FAKE.token_address: FAKE},
     ["-12.5 tUSD", "+1,000 0xABcD…1234"], [UNKNOWN_FAKE]),
    ({ZERO: -(10**18)}, {ZERO: NATIVE}, ["-1 ETH"], []),
    # Two unlisted tokens: a warning each.
    ({FAKE.token_address: 1, OTHER.token_address: -2}, {FAKE.token_address: FAKE, OTHER.token_address: OTHER},
     ["+0.000001 0xABcD…1234", "-2 0x1111…1111"],
     [UNKNOWN_FAKE, Line("sign_warn_unknown_token", {"token": "0x1111…1111"})]),
    ({B.lower(): 5}, {B.lower(): None}, [], []),  # not an ERC-20: left out
])
def test_balance_changes_name_unlisted_tokens_by_address(changes, infos, texts, warnings):
    assert balance_changes(changes, infos, LISTED) == (texts, warnings)


@pytest.mark.parametrize("data, to, who", [
    (call("transfer", ["address", "uint256"], [A, 1]), TOKEN.token_address, A),
    (call("approve", ["address", "uint256"], [A, UNLIMITED]), TOKEN.token_address, A),
    (call("transferFrom", ["address", "address", "uint256"], [A, B, 1]), TOKEN.token_address, B),
    ("0xdeadbeef", B, B),
    ("0x", B, B),
    ("0x", "0x" + "00" * 20, None),
    # A trailing byte does not hide the spender or the recipient.
    (WELL_FORMED["approve"] + "00", TOKEN.token_address, A),
    (WELL_FORMED["transferFrom"] + "00", TOKEN.token_address, B),
    # The spender or operator, not the token's or NFT's contract (found by an audit).
    (WELL_FORMED["increaseApproval"], TOKEN.token_address, A),
    (for_all(A, True), NFT, A),
    (for_all(A, False), NFT, A),
    (permit2_approve(TOKEN.token_address, A, 1, 0), PERMIT2, A),
    (permit2_approve(B, A, 1, 0) + "00", PERMIT2, A),
])
def test_counterparty(data, to, who):
    assert counterparty(tx(data, to=to)) == who


@pytest.mark.parametrize("data, to, token", [
    (WELL_FORMED["transfer"], TOKEN.token_address, TOKEN.token_address),
    (WELL_FORMED["increaseApproval"], TOKEN.token_address, TOKEN.token_address),
    (permit2_approve(B.lower(), A, 1, 0), PERMIT2, B),  # the token it names, not Permit2
    (permit2_approve(ZERO, A, 1, 0), PERMIT2, None),  # not the native coin
    (for_all(A, True), NFT, None),  # no token to look up: its line names the contract
    ("0xdeadbeef", TOKEN.token_address, None),
    ("0x", TOKEN.token_address, None),
])
def test_token_of(data, to, token):
    assert token_of(tx(data, to=to)) == token


def test_matches_only_the_transaction_of_the_link():
    from eth_account import Account

    from wallet_app.services.chain import decode_raw_tx

    key = Account.create().key
    link = tx(call("approve", ["address", "uint256"], [A, 5]), value="7", gas_price="2000000000")

    def signed(**changes):
        fields = {"chainId": 31337, "to": TOKEN.token_address, "data": link["data"], "value": 7, "nonce": 0,
                  "gas": 50000, "gasPrice": 2_000_000_000, **changes}
        return decode_raw_tx(Account.sign_transaction(fields, key).raw_transaction)

    assert matches(signed(), link)
    for changes in [{"chainId": 1}, {"to": B}, {"data": call("approve", ["address", "uint256"], [A, UNLIMITED])},
                    {"value": 8}, {"nonce": 1}, {"gas": 50001}, {"gasPrice": 2_000_000_001}]:
        assert not matches(signed(**changes), link), changes


# ---------------------------------------------------------------- _reads with its reads stubbed


@pytest.fixture
def reads(monkeypatch):
    """_reads on stubbed reads: the user's list holds tUSD; FAKE answers like an ERC-20 ('USDC');
    the simulation's answer is set by the test. Returns a function: (tx, changes) -> (Preview, refusal)."""
    from types import SimpleNamespace

    from wallet_app.services import txpreview
    from wallet_app.services.txpreview import Simulation

    infos = {TOKEN.token_address.lower(): TOKEN, FAKE.token_address: FAKE, ZERO: NATIVE}
    monkeypatch.setattr(txpreview.tokens, "user_tokens",
                        lambda user: [{"chain_id": 31337, "token_address": TOKEN.token_address}])
    monkeypatch.setattr(txpreview.tokens, "token_info", lambda user, chain, address: infos.get(address.lower()))
    monkeypatch.setattr(txpreview.activity, "known_counterparties", lambda user: [A.lower()])
    monkeypatch.setattr(txpreview.chain_svc, "fee_prices", lambda chain: (10**9, 10**9 // 2))
    monkeypatch.setattr(txpreview.chain_svc, "balances", lambda chain, owner, tokens: {ZERO: 10**18})
    monkeypatch.setattr(txpreview.chain_svc, "l1_fee", lambda chain, link: 0)
    monkeypatch.setattr(txpreview.accounts, "hit", lambda kind, user: None)
    owner = SimpleNamespace(address=B)

    def run(link, changes):
        monkeypatch.setattr(txpreview, "simulate", lambda chain, who, t, as_sent: Simulation("ok", changes))
        monkeypatch.setattr(txpreview.chain_svc, "transaction_count", lambda chain, who, block: int(link["nonce"]))
        return txpreview._reads(owner, CHAIN, link, False)

    return run


def test_reads_the_fake_swap_shows_the_unlisted_token_by_its_address(reads):
    preview, refused = reads(tx("0xdeadbeef", to=A), {TOKEN.token_address.lower(): -12_500_000,
                                                      FAKE.token_address: 1_000 * 10**6})
    assert preview.changes == ["-12.5 tUSD", "+1,000 0xABcD…1234"]
    assert preview.warnings == [Line("sign_warn_unknown"), UNKNOWN_FAKE, Line("sign_warn_gain")]
    assert refused is None


@pytest.mark.parametrize("changes, shown, gain", [
    ({ZERO: 10**17}, ["+0.1 ETH"], True),  # what a contract pays back may be paid in the simulation only
    ({ZERO: -(10**17)}, ["-0.1 ETH"], False),
    ({ZERO: -(10**17), TOKEN.token_address.lower(): 1}, ["-0.1 ETH", "+0.000001 tUSD"], True),
    ({B.lower(): 5}, [], False),  # not an ERC-20: not shown, nor warned of
])
def test_reads_a_gain_is_the_simulations_word_only(reads, changes, shown, gain):
    preview, _ = reads(tx("0xdeadbeef", to=A), changes)
    assert preview.changes == shown
    assert preview.warnings == [Line("sign_warn_unknown"), *([Line("sign_warn_gain")] if gain else [])]


def test_reads_a_call_to_an_unlisted_token_names_it_by_its_address_once(reads):
    preview, refused = reads(tx(call("transfer", ["address", "uint256"], [A, 10**6]), to=FAKE.token_address),
                             {FAKE.token_address: -(10**6)})
    assert preview.lines == [Line("sign_line_transfer", {"amount": "1", "symbol": "0xABcD…1234", "recipient": A})]
    assert preview.changes == ["-1 0xABcD…1234"]
    assert preview.warnings == [UNKNOWN_FAKE]
    assert refused is None


def test_reads_an_approve_with_a_trailing_byte_is_decoded_warned_and_refused(reads):
    preview, refused = reads(tx(approve(A, 2**256 - 1) + "00"), {})  # A: in the history, no first-time note
    assert preview.lines == [
        Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))]
    assert preview.warnings == [Line("sign_warn_unlimited"), Line("sign_warn_malformed_call", {"function": "approve"})]
    assert preview.selector == "" and preview.changes == [] and preview.simulation == "ok"
    assert refused is not None and refused.code == "invalid_tx"
    from wallet_app.state.session import texts_for

    assert texts_for(refused.spec.key, refused.params) == {"en": "invalid transaction", "ko": "잘못된 거래"}


def test_reads_an_approval_for_all_is_checked_against_its_operator(reads, monkeypatch):
    """The recipient check looked at the NFT's contract (a first time), not the operator; and no token
    is looked up for it."""
    from wallet_app.services import txpreview

    looked_up = []
    monkeypatch.setattr(txpreview.tokens, "token_info", lambda user, chain, address: looked_up.append(address))
    preview, refused = reads(tx(for_all(A, True), to=NFT), {})  # A: in the history
    assert preview.lines == [Line("sign_line_approve_all", {"operator": A, "contract": checksum(NFT)})]
    assert preview.warnings == [Line("sign_warn_unlimited")] and looked_up == [] and refused is None
    stranger = checksum("0x" + "ad" * 20)
    preview, _ = reads(tx(for_all(stranger, True), to=NFT), {})
    assert preview.warnings == [Line("sign_warn_unlimited"), Line("recipient_first_time")]


def test_reads_a_permit2_approve_names_its_token_and_is_checked_against_its_spender(reads):
    data = permit2_approve(FAKE.token_address, A, 10**6, 0)
    preview, refused = reads(tx(data, to=PERMIT2), {})
    assert preview.lines == [Line("sign_line_permit2_approve", {
        "spender": A, "amount": "1", "symbol": "0xABcD…1234", "contract": PERMIT2,
        "expiration": "sign_expires_at_once"}, keyed=("expiration",))]
    assert preview.warnings == [UNKNOWN_FAKE] and refused is None


def test_reads_permit2s_approve_on_another_contract_is_an_unknown_call_to_it(reads, monkeypatch):
    """A link calling its own contract with Permit2's approve selector, a known spender and a listed
    token in the arguments read "Approve A to spend 1 tUSD through the Permit2 contract <it>" with no
    warning at all; what that contract does is its own (an allowance the user gave it spent, say)."""
    from wallet_app.services import txpreview

    looked_up = []
    monkeypatch.setattr(txpreview.tokens, "token_info", lambda user, chain, address: looked_up.append(address))
    contract = checksum("0x" + "ad" * 20)
    preview, refused = reads(tx(permit2_approve(TOKEN.token_address, A, 10**6, 0), to=contract), {})
    assert preview.lines == [Line("sign_line_call", {"selector": "0x87517c45"})]
    assert preview.warnings == [Line("sign_warn_unknown"), Line("recipient_first_time")]
    assert preview.selector == "0x87517c45" and looked_up == [] and refused is None


@pytest.mark.parametrize("nonce, mined, pending_count, code", [
    (5, 5, 5, None),  # the account's next
    (4, 5, 5, "sign_nonce_used"),
    (5, 5, 7, "sign_nonce_pending"),  # a pending transaction holds it: would replace it unseen
    (6, 5, 7, "sign_nonce_pending"),
    (7, 5, 7, None),  # after the pending ones
    (8, 5, 7, "sign_nonce_ahead"),
    (0, 0, 0, None),
    (1, 0, 0, "sign_nonce_ahead"),
])
def test_nonce_refusals(nonce, mined, pending_count, code):
    error = nonce_refusal(nonce, mined, pending_count)
    assert (error.code if error else None) == code


def test_nonce_refusal_texts():
    en = CATALOGUES["en"]
    assert en["err_sign_nonce_pending"] == (
        "A transaction of yours with the same nonce is still pending: signing this one would replace it. "
        "Speed it up or cancel it on Activity instead."
    )
    assert all(CATALOGUES[lang][f"err_sign_nonce_{k}"] for lang in ("en", "ko") for k in ("used", "pending", "ahead"))


def test_a_preview_over_its_rate_limit_reads_nothing_and_is_refused(monkeypatch):
    """Each /sign load reads the chain about six times and simulates the link's call (and looks up
    up to 10 tokens): a page load is an event any socket can send 20 times a second. Over the
    sign_preview limit it reads nothing, and the page shows the limit's message, no PIN dialog."""
    from types import SimpleNamespace

    from tests.conftest import run_async
    from wallet_app.errors import AppError
    from wallet_app.services import txpreview

    counted = []

    def limited(kind, user):
        counted.append(kind)
        raise AppError("rate_limited", retry_after=1)

    def no_read(*args):
        raise AssertionError("read the chain over the limit")

    monkeypatch.setattr(txpreview.accounts, "hit", limited)
    for name in ("fee_prices", "balances", "transaction_count"):
        monkeypatch.setattr(txpreview.chain_svc, name, no_read)
    monkeypatch.setattr(txpreview, "simulate", no_read)
    monkeypatch.setattr(txpreview.tokens, "user_tokens", no_read)
    preview, refused = run_async(txpreview.load(SimpleNamespace(id=1, address=B), CHAIN, tx("0x", to=A)))
    assert counted == ["sign_preview"] and refused is not None and refused.code == "rate_limited"


def test_reads_the_fee_and_the_refusal_count_the_chains_l1_fee(reads, monkeypatch):
    from wallet_app.services import txpreview

    link = tx("0x", to=A, value=str(10**18 - 50000 * 10**9), gas_price=str(10**9))
    preview, refused = reads(link, {})
    assert (preview.fee, preview.l1_fee, refused) == ("0.00005 ETH", 0, None)
    monkeypatch.setattr(txpreview.chain_svc, "l1_fee", lambda chain, t: 10**12 if t is link else -1)
    preview, refused = reads(link, {})
    assert (preview.fee, preview.l1_fee, refused and refused.code) == ("0.000051 ETH", 10**12, "fee_unaffordable")


@pytest.mark.parametrize("balance, base_fee, l1, code", [
    (50000 * 10**9, 10**9, 0, None),  # exactly gas x price
    (50000 * 10**9 - 1, 10**9, 0, "fee_unaffordable"),
    (50000 * 10**9, 10**9, 1, "fee_unaffordable"),  # an L1 data fee on top
    (10**18, 10**9 + 1, 0, "fee_outdated"),
    (10**18, None, 0, None),
])
def test_fee_refusal_of_a_transaction_built_a_moment_ago(monkeypatch, balance, base_fee, l1, code):
    from wallet_app.services import txpreview

    monkeypatch.setattr(txpreview.chain_svc, "balances", lambda chain, owner, tokens: {ZERO: balance})
    monkeypatch.setattr(txpreview.chain_svc, "next_base_fee", lambda chain: base_fee)
    monkeypatch.setattr(txpreview.chain_svc, "l1_fee", lambda chain, t: l1)
    error = txpreview.fee_refusal(CHAIN, B, tx(call("approve", ["address", "uint256"], [A, 5])))
    assert (error and error.code) == code
