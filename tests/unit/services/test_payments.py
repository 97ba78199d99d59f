"""Pure parts of payments and the relayer: table tests, no chain (amounts and addresses: test_eth.py)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils import keccak

from wallet_app.errors import AppError
from wallet_app.services import payments, relayer
from wallet_app.services.chain import ChainConfig, TokenInfo
from wallet_app.state.session import texts_for


@pytest.mark.parametrize("value, ok", [
    ("0x" + "Ab" * 32, True), ("0x" + "a" * 63, False), ("ab" * 32, False), ("0x" + "g" * 64, False), (5, False),
])
def test_parse_payment_id(value, ok):
    if ok:
        assert payments.parse_payment_id(value) == value.lower()
    else:
        with pytest.raises(AppError) as e:
            payments.parse_payment_id(value)
        assert e.value.code == "invalid_payment_id"


@pytest.mark.parametrize("sig, reason", [
    ("Expired()", "expired"), ("Replayed()", "replayed"), ("BadSigner()", "bad_signer"),
    ("ERC20InsufficientAllowance(address,uint256,uint256)", "insufficient_allowance"),
    ("ERC20InsufficientBalance(address,uint256,uint256)", "insufficient_balance"),
    ("Nope()", "reverted"),
])
def test_revert_reason(sig, reason):
    data = "0x" + keccak(text=sig)[:4].hex() + "00" * 32
    assert relayer.revert_reason(data) == reason
    assert relayer.revert_reason({"data": data}) == reason


@pytest.mark.parametrize("data", [None, "", "0x", "0x1234", 42])
def test_revert_reason_without_data(data):
    assert relayer.revert_reason(data) == "reverted"


@pytest.mark.parametrize("old, current, expected", [
    (100, 1, 126), (100, 500, 500), (1, 1, 2), (10**9, 10**9, 1_250_000_001),
])
def test_bumped_gas_price_beats_old_by_a_quarter_and_current(old, current, expected):
    assert relayer.bumped_gas_price(old, current) == expected


@pytest.mark.parametrize("old, current, cap, expected", [
    (100, 100, 1000, 126),  # room: the usual +25%
    (100, 500, 300, 300),  # the node's price is above the cap: the cap
    (100, 100, 120, 120),  # less than +25% but more than the +10% nodes require
    (100, 100, 110, None),  # +10% exactly is not enough: no replacement
    (100, 100, 50, None),  # a cap below the old price
])
def test_bumped_gas_price_stays_under_the_cap(old, current, cap, expected):
    assert relayer.bumped_gas_price(old, current, cap) == expected


@pytest.mark.parametrize("absolute, multiple, current, expected", [
    (10**12, 3.0, 10**9, 3 * 10**9), (2 * 10**9, 3.0, 10**9, 2 * 10**9), (10**12, 1.2, 10, 12),
])
def test_gas_price_cap_is_the_lower_of_the_two(absolute, multiple, current, expected):
    chain = ChainConfig(1, "c", "http://127.0.0.1:1", "0x" + "11" * 20, None, "ETH", "Ether", 18, None, (),
                        max_gas_price_wei=absolute, max_gas_price_multiple=multiple)
    assert relayer.gas_price_cap(chain, current) == expected


def test_recover_pay_signer():
    acct = Account.create()
    contract = "0x" + "11" * 20
    message = {"merchant": "0x" + "22" * 20, "token": "0x" + "33" * 20, "from": acct.address, "amount": 10,
               "paymentRef": "0x" + "44" * 32, "deadline": 1_900_000_000}
    typed = payments.pay_typed_data(31337, contract, message)
    sig = Account.sign_message(encode_typed_data(full_message=typed), acct.key).signature
    assert payments.recover_pay_signer(31337, contract, message, sig) == acct.address
    assert payments.recover_pay_signer(1, contract, message, sig) != acct.address  # domain binds the chain
    assert payments.recover_pay_signer(31337, contract, {**message, "amount": 11}, sig) != acct.address
    assert payments.recover_pay_signer(31337, contract, message, b"\0" * 65) is None


@pytest.mark.parametrize("code, status, en, ko", [
    ("token_not_payable", 400, "This token cannot be used for payments.", "이 토큰으로는 결제할 수 없습니다."),
    ("payment_quota_exceeded", 429, "Too many payment requests. Please try again in an hour.",
     "결제 요청이 너무 많습니다. 한 시간 뒤에 다시 시도해 주세요."),
])
def test_relayer_limit_errors_show_their_text_on_the_payment_page(code, status, en, ko):
    """/payment's state stops the flow with _fail(error): the dialog shows texts_for(spec.key)."""
    error = AppError(code)
    assert error.spec.status == status
    assert texts_for(error.spec.key, error.params) == {"en": en, "ko": ko}


@pytest.mark.parametrize("times, limit, retry_after", [
    ([], 3, None),
    ([100, 200], 3, None),
    ([100, 200, 300], 3, 100 + 3600 - 1000),  # the oldest leaving makes room for one
    ([100, 200, 300, 400], 3, 200 + 3600 - 1000),  # over the limit (lowered since): two must leave
    ([100], 1, 2700),
    ([999 - 3600 + 1], 1, 1),  # leaves within the second: still at least 1
])
def test_check_quota_retry_after(times, limit, retry_after):
    if retry_after is None:
        payments.check_quota(times, limit, 3600, 1000, "payment_quota_exceeded", "quotes")
        return
    with pytest.raises(AppError) as e:
        payments.check_quota(times, limit, 3600, 1000, "payment_quota_exceeded", "quotes")
    assert (e.value.code, e.value.params) == ("payment_quota_exceeded", {"retry_after": retry_after})


@pytest.mark.parametrize("times, limit, retry_after", [
    ([100, 200], 2, None),  # one of them is this transaction's own: room for it
    ([100, 200, 300], 2, 100 + 3600 - 1000),  # the same refusal as before the write
    ([100], 0, 100 + 3600 - 1000),
])
def test_check_quota_counted_again_after_the_write(times, limit, retry_after):
    if retry_after is None:
        payments.check_quota(times, limit, 3600, 1000, "payment_quota_exceeded", "quotes", written=1)
        return
    with pytest.raises(AppError) as e:
        payments.check_quota(times, limit, 3600, 1000, "payment_quota_exceeded", "quotes", written=1)
    assert (e.value.code, e.value.params) == ("payment_quota_exceeded", {"retry_after": retry_after})


@pytest.mark.parametrize("amount, deadline, sig", [
    (1, 1, b"\x00" * 65), (2**256 - 1, 2**48 - 1, b"\xff" * 65), (1_234_567, 1_700_000_000, bytes(range(65))),
])
def test_pay_call_is_what_web3_encodes(amount, deadline, sig):
    """relayer.pay_call encodes with eth_abi directly (fast); byte for byte web3's Contract.encode_abi."""
    from wallet_app.services.chain import contract
    from wallet_app.services.eth import checksum

    merchant, token, owner = (Account.create().address for _ in range(3))
    pid = "0x" + keccak(text=f"{amount}").hex()
    struct = (checksum(merchant), checksum(token), checksum(owner), amount, bytes.fromhex(pid[2:]), deadline)
    expected = contract("NewblPayment2").encode_abi("pay", [struct, sig])
    assert relayer.pay_call(merchant.lower(), token, owner.lower(), amount, pid, deadline, sig) == expected


_MESSAGE = {"merchant": "0x" + "22" * 20, "token": "0x" + "33" * 20, "from": "0x" + "aB" * 20, "amount": 10,
            "paymentRef": "0x" + "44" * 32, "deadline": 1_900_000_000}


@pytest.mark.parametrize("chain_id, contract, changes", [
    (31337, "0x" + "11" * 20, {}),
    (1, "0x" + "Ab" * 20, {"amount": 0, "deadline": 0}),
    (2**64, "0x" + "00" * 20, {"amount": 2**256 - 1, "deadline": 2**48 - 1, "paymentRef": "0x" + "ff" * 32}),
    (11155111, "0x" + "fE" * 20, {"merchant": "0x" + "00" * 20, "from": "0x" + "Ff" * 20}),
])
def test_pay_signable_is_what_eth_account_encodes(chain_id, contract, changes):
    message = {**_MESSAGE, **changes}
    expected = encode_typed_data(full_message=payments.pay_typed_data(chain_id, contract, message))
    assert payments.pay_signable(chain_id, contract, message) == expected


@pytest.mark.parametrize("changes", [
    {"amount": 2**256}, {"amount": -1}, {"amount": "10"}, {"deadline": 2**48}, {"paymentRef": "0x" + "44" * 31},
    {"merchant": "0x" + "22" * 19}, {"token": "0x" + "zz" * 20},
])
def test_pay_signable_refuses_what_the_types_cannot_hold(changes):
    with pytest.raises(ValueError):
        payments.pay_signable(31337, "0x" + "11" * 20, {**_MESSAGE, **changes})


def test_payable_token_info_is_looked_up_once_per_token_and_one_token_never_waits_on_another(monkeypatch):
    """A burst of executes that miss the cache together reads the token once; while that read
    hangs (a slow node), executes of another token, cached already, answer at once."""
    chain = ChainConfig(1, "c", "http://127.0.0.1:1", "0x" + "11" * 20, None, "ETH", "Ether", 18, None, ())
    slow, cached = "0x" + "aa" * 20, "0x" + "bb" * 20
    monkeypatch.setattr(payments, "_payable_infos", {})
    monkeypatch.setattr(payments, "_payable_info_locks", {})
    reading, release, reads = threading.Event(), threading.Event(), []

    def token_info(_user, _chain, token):
        reads.append(token)
        if token == slow:
            reading.set()
            assert release.wait(10)
        return TokenInfo(token, "T", "Token", 6)

    monkeypatch.setattr(payments.tokens, "token_info", token_info)
    assert payments._payable_token_info(None, chain, cached).token_address == cached
    with ThreadPoolExecutor(4) as pool:
        waiting = [pool.submit(payments._payable_token_info, None, chain, slow) for _ in range(3)]
        assert reading.wait(10)
        # The slow token's read is in progress: the cached one answers without waiting for it.
        assert pool.submit(payments._payable_token_info, None, chain, cached).result(timeout=5).token_address == cached
        assert not any(f.done() for f in waiting)
        release.set()
        assert [f.result(timeout=10).token_address for f in waiting] == [slow] * 3
    assert reads == [cached, slow]  # one read per token, however many executes asked


@pytest.mark.parametrize("spent, budget, reached", [
    (0, None, False), (10**30, None, False),  # no budget (null in the chains file)
    (0, 1, False), (999, 1000, False),
    (1000, 1000, True),  # reached: no room left
    (1001, 1000, True),  # past it (queued payments still went, a price rose)
])
def test_budget_reached(spent, budget, reached):
    assert relayer.budget_reached(spent, budget) is reached


@pytest.mark.parametrize("gas, price, cost", [
    (0, 10**9, 0), (21_000, 2 * 10**9, 42 * 10**12), (300_000, 500 * 10**9, 15 * 10**16),
    (300_000, 10**15, 2**63 - 1),  # more than BIGINT holds: kept at its largest, over any budget
])
def test_gas_cost_fits_the_column(gas, price, cost):
    assert relayer.gas_cost(gas, price) == cost
