"""The /sign decoder and refusals (services.txpreview): selectors, amounts, the unlimited threshold,
the native value, unknown calls, the fee, and the refusal rules."""

import pytest
from eth_abi import encode

from wallet_app.services.chain import ChainConfig, TokenInfo, erc20_call_selectors
from wallet_app.services.txpreview import (
    UNLIMITED,
    Line,
    counterparty,
    describe,
    matches,
    refusal,
)
from wallet_app.state.sign import line_texts

TOKEN = TokenInfo("0x5FbDB2315678afecb367f032d93F642f64180aa3", "tUSD", "Newbl Test USD", 6)
CHAIN = ChainConfig(31337, "Newbl Dev (anvil)", "http://127.0.0.1:1", "0x" + "11" * 20, None, "ETH", "Ether", 18,
                    None, (TOKEN,))
A = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
B = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"


def call(name: str, types: list[str], args: list) -> str:
    sel = next(s for s, n in erc20_call_selectors().items() if n == name)
    return sel + encode(types, args).hex()


def tx(data="0x", value="0", gas_limit="50000", gas_price="1000000000", to=TOKEN.token_address) -> dict[str, str]:
    return {"chain_id": "31337", "to": to, "data": data, "value": value, "nonce": "0", "gas_limit": gas_limit,
            "gas_price": gas_price}


def test_selectors_are_the_erc20_ones():
    assert erc20_call_selectors() == {"0xa9059cbb": "transfer", "0x23b872dd": "transferFrom", "0x095ea7b3": "approve",
                           "0x39509351": "increaseAllowance"}


@pytest.mark.parametrize("data, lines, warnings, selector", [
    (call("transfer", ["address", "uint256"], [A, 12_500_000]),
     [Line("sign_line_transfer", {"amount": "12.5", "symbol": "tUSD", "recipient": A})], [], ""),
    (call("transferFrom", ["address", "address", "uint256"], [A, B, 1]),
     [Line("sign_line_transfer_from", {"amount": "0.000001", "symbol": "tUSD", "owner": A, "recipient": B})], [], ""),
    (call("approve", ["address", "uint256"], [A, 5_000_000]),
     [Line("sign_line_approve", {"spender": A, "amount": "5", "symbol": "tUSD"})], [], ""),
    (call("increaseAllowance", ["address", "uint256"], [A, 1_234_567]),
     [Line("sign_line_approve", {"spender": A, "amount": "1.234567", "symbol": "tUSD"})], [], ""),
    # Just below the threshold: a (huge) number, no warning.
    (call("approve", ["address", "uint256"], [A, UNLIMITED - 1]),
     [Line("sign_line_approve", {"spender": A, "amount": f"{(UNLIMITED - 1) // 10**6:,}.{(UNLIMITED - 1) % 10**6:06d}",
                                 "symbol": "tUSD"})], [], ""),
    (call("approve", ["address", "uint256"], [A, UNLIMITED]),
     [Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))],
     [Line("sign_warn_unlimited")], ""),
    (call("increaseAllowance", ["address", "uint256"], [A, 2**256 - 1]),
     [Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))],
     [Line("sign_warn_unlimited")], ""),
    ("0xdeadbeef", [Line("sign_line_call", {"selector": "0xdeadbeef"})], [Line("sign_warn_unknown")], "0xdeadbeef"),
    # A known selector with a wrong-length body is not that call.
    (call("transfer", ["address", "uint256"], [A, 1])[:-2],
     [Line("sign_line_call", {"selector": "0xa9059cbb"})], [Line("sign_warn_unknown")], "0xa9059cbb"),
    ("0x", [Line("sign_line_native", {"amount": "0", "symbol": "ETH"})], [], ""),
])
def test_decoded_lines(data, lines, warnings, selector):
    p = describe(tx(data), CHAIN, TOKEN)
    assert (p.lines, p.warnings, p.selector) == (lines, warnings, selector)
    assert p.chain_name == "Newbl Dev (anvil)"


def test_native_value_is_its_own_line_whatever_the_data():
    approve = call("approve", ["address", "uint256"], [A, UNLIMITED])
    p = describe(tx(approve, value=str(15 * 10**17)), CHAIN, TOKEN)
    assert p.lines[-1] == Line("sign_line_native", {"amount": "1.5", "symbol": "ETH"})
    assert p.lines[0].key == "sign_line_approve" and p.warnings == [Line("sign_warn_unlimited")]
    p = describe(tx("0xdeadbeef", value="1"), CHAIN, None)
    assert [x.key for x in p.lines] == ["sign_line_call", "sign_line_native"]
    assert p.lines[1].params["amount"] == "0.000000000000000001"


def test_a_token_call_on_no_token_is_a_contract_call():
    data = call("approve", ["address", "uint256"], [A, UNLIMITED])
    p = describe(tx(data), CHAIN, None)
    assert p.lines == [Line("sign_line_call", {"selector": "0x095ea7b3"})] and p.warnings == [Line("sign_warn_unknown")]


@pytest.mark.parametrize("gas_limit, gas_price, fee", [
    ("21000", "1000000000", "0.00002 ETH"),
    ("50000", "2000000000", "0.0001 ETH"),
    ("1000000", str(10**15), "1,000 ETH"),
])
def test_fee_is_gas_limit_times_gas_price_in_the_native_coin(gas_limit, gas_price, fee):
    assert describe(tx(gas_limit=gas_limit, gas_price=gas_price), CHAIN, TOKEN).fee == fee


@pytest.mark.parametrize("kwargs, node_price, balance, code", [
    ({}, 10**9, 10**18, None),
    ({"gas_price": str(3 * 10**9)}, 10**9, 10**18, None),  # exactly 3x: allowed
    ({"gas_price": str(3 * 10**9 + 1)}, 10**9, 10**18, "fee_too_high"),
    ({"gas_price": str(10**15)}, 10**9, 10**30, "fee_too_high"),
    ({"value": str(10**18 - 50000 * 10**9)}, 10**9, 10**18, None),  # fee + value == balance
    ({"value": str(10**18 - 50000 * 10**9 + 1)}, 10**9, 10**18, "fee_unaffordable"),
    ({}, 10**9, 50000 * 10**9 - 1, "fee_unaffordable"),
    ({"to": "0x" + "00" * 20}, 10**9, 10**18, "sign_no_recipient"),
])
def test_refusals(kwargs, node_price, balance, code):
    error = refusal(tx(**kwargs), CHAIN, node_price, balance, 3)
    assert (error and error.code) == code
    if code == "fee_unaffordable":
        assert error.params == {"symbol": "ETH"}


def test_line_texts_in_both_languages():
    line = Line("sign_line_approve", {"spender": A, "amount": "sign_unlimited", "symbol": "tUSD"}, keyed=("amount",))
    assert line_texts(line) == {"en": f"Approve {A} to spend unlimited tUSD",
                                "ko": f"{A}이(가) 무제한 tUSD을(를) 쓸 수 있도록 승인"}
    assert line_texts(Line("sign_line_native", {"amount": "1.5", "symbol": "ETH"}))["en"] == "Sends 1.5 ETH"
    assert line_texts(Line("sign_warn_unknown"))["en"] == "Unknown function: check that you trust this site."
    assert line_texts(Line("sign_warn_unlimited"))["en"] == (
        "Unlimited approval: this address can take all of this token.")
    assert line_texts(Line("sign_line_call", {"selector": "0xdeadbeef"}))["en"] == "Contract call"


@pytest.mark.parametrize("data, to, who", [
    (call("transfer", ["address", "uint256"], [A, 1]), TOKEN.token_address, A),
    (call("approve", ["address", "uint256"], [A, UNLIMITED]), TOKEN.token_address, A),
    (call("transferFrom", ["address", "address", "uint256"], [A, B, 1]), TOKEN.token_address, B),
    ("0xdeadbeef", B, B),
    ("0x", B, B),
    ("0x", "0x" + "00" * 20, None),
])
def test_counterparty(data, to, who):
    assert counterparty(tx(data, to=to)) == who


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
