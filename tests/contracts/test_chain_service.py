import pytest
from eth_account import Account
from web3.exceptions import RequestTimedOut

from contracts import artifacts
from contracts.deploy import FAUCET_ETH_WEI, FAUCET_TOKEN_UNITS
from wallet_app.errors import AppError
from wallet_app.services import chain as chain_mod
from wallet_app.services.chain import (
    balances,
    build_erc20_transfer,
    decode_raw_tx,
    submit_raw,
    token_metadata,
    web3_for,
)
from wallet_app.services.eth import ZERO_ADDRESS

ERC20 = artifacts.abi(chain_mod.ERC20)


def token_balance(w3, token, owner):
    return w3.eth.contract(address=token, abi=ERC20).functions.balanceOf(owner).call()


def test_balances_use_one_eth_call_and_match_balance_of(chain, funded, w3, monkeypatch):
    tusd, tkrw = (t.token_address for t in chain.tokens)
    not_a_token = Account.create().address
    client = web3_for(chain)
    seen = []
    real = client.provider.make_request
    monkeypatch.setattr(client.provider, "make_request", lambda m, p: seen.append(m) or real(m, p))

    got = balances(chain, funded.address, [ZERO_ADDRESS, tusd, tkrw.lower(), not_a_token])

    assert seen == ["eth_call"]
    assert got == {
        ZERO_ADDRESS: w3.eth.get_balance(funded.address),
        tusd: token_balance(w3, tusd, funded.address),
        tkrw.lower(): token_balance(w3, tkrw, funded.address),
    }
    assert got[tusd] == FAUCET_TOKEN_UNITS and got[ZERO_ADDRESS] == FAUCET_ETH_WEI
    assert balances(chain, funded.address, []) == {}
    with pytest.raises(AppError) as exc:
        balances(chain, "0xnope", [tusd])
    assert exc.value.code == "invalid_address"


@pytest.fixture(scope="module")
def hostile_tokens(w3, deployed):
    """Two tokens whose balanceOf burns all its gas, one whose balanceOf answers 3 MB, one whose
    name() does, one with 78 decimals."""
    from contracts.deploy import DEV_DEPLOYER_KEY, _deploy_contract

    return [_deploy_contract(w3, DEV_DEPLOYER_KEY, "HostileBalanceToken", mode) for mode in (1, 1, 2, 3, 4)]


def test_a_hostile_token_in_the_list_hides_no_other_balance(chain, funded, w3, hostile_tokens, monkeypatch):
    """A token added to a list is read in the same aggregated eth_call as the others: one whose
    balanceOf burns the call's gas starved the ones after it (left out: no balance shown), one
    with a huge answer made the whole call fail (an error instead of the balances: the list
    empty, for good, as a token cannot be taken off the list)."""
    tusd = chain.tokens[0].token_address
    burner, burner2, bomb, *_ = hostile_tokens
    assert token_metadata(chain, burner).token_symbol == "HOST"  # it can be added
    expected = {tusd: FAUCET_TOKEN_UNITS, ZERO_ADDRESS: FAUCET_ETH_WEI}
    assert balances(chain, funded.address, [burner, burner2, tusd, ZERO_ADDRESS]) == expected
    assert balances(chain, funded.address, [bomb, tusd, ZERO_ADDRESS]) == expected
    # The calls made again alone have a gas limit of their own (not the node's, 30M on anvil, each).
    batches = []
    real = chain_mod.rpc_batch
    monkeypatch.setattr(chain_mod, "rpc_batch", lambda w, calls: batches.append(calls) or real(w, calls))
    assert balances(chain, funded.address, [burner, tusd]) == {tusd: FAUCET_TOKEN_UNITS}
    assert [[c[1][0]["gas"] for c in b] for b in batches] == [[hex(1_000_000)]]


def test_a_token_whose_name_answers_megabytes_is_no_erc20(chain, hostile_tokens):
    """The probe's aggregate ran out of gas copying it: an RPC error, a 500 instead of not_erc20."""
    with pytest.raises(AppError) as exc:
        token_metadata(chain, hostile_tokens[3])
    assert exc.value.code == "not_erc20"


def test_a_token_with_more_decimals_than_uint256_has_digits_is_no_erc20(chain, hostile_tokens):
    """78 decimals: not one whole token fits in a uint256; every balance showed as 0 and amounts
    as up to 255 fractional digits (the check allowed up to 255)."""
    with pytest.raises(AppError) as exc:
        token_metadata(chain, hostile_tokens[4])
    assert exc.value.code == "not_erc20"


def test_build_sign_submit_transfer(chain, funded, w3):
    tusd = chain.tokens[0].token_address
    recipient = Account.create().address
    amount = 12_345_678
    tx = build_erc20_transfer(chain, funded.address.lower(), tusd, recipient, amount)

    assert set(tx) == {"chain_id", "to", "data", "value", "nonce", "gas_limit", "gas_price"}
    assert all(isinstance(v, str) for v in tx.values())
    assert tx["chain_id"] == "31337" and tx["to"] == tusd and tx["value"] == "0"
    assert tx["nonce"] == str(w3.eth.get_transaction_count(funded.address, "pending"))
    assert tx["data"].startswith("0xa9059cbb") and int(tx["gas_limit"]) > 21_000 and int(tx["gas_price"]) > 0

    signed = funded.sign_transaction({
        "chainId": int(tx["chain_id"]), "to": tx["to"], "data": tx["data"], "value": int(tx["value"]),
        "nonce": int(tx["nonce"]), "gas": int(tx["gas_limit"]), "gasPrice": int(tx["gas_price"]),
    })
    raw = "0x" + signed.raw_transaction.hex()
    decoded = decode_raw_tx(raw)
    assert (decoded.sender, decoded.chain_id, decoded.to, decoded.value, decoded.data) == (
        funded.address, 31337, tusd, 0, tx["data"])
    assert decoded.nonce == int(tx["nonce"]) and decoded.gas_limit == int(tx["gas_limit"])

    before = token_balance(w3, tusd, recipient)
    tx_hash = submit_raw(chain, raw, expected_sender=funded.address.lower())
    assert tx_hash == decoded.tx_hash == "0x" + signed.hash.hex()
    receipt = w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)
    assert receipt["status"] == 1
    assert token_balance(w3, tusd, recipient) - before == amount
    assert token_balance(w3, tusd, funded.address) == FAUCET_TOKEN_UNITS - amount


def _signed(acct, chain_id=31337, **overrides):
    tx = {"chainId": chain_id, "to": Account.create().address, "value": 1, "nonce": 0, "gas": 21_000,
          "gasPrice": 10**9, **overrides}
    return "0x" + acct.sign_transaction(tx).raw_transaction.hex()


def test_submit_refuses_before_broadcasting(chain, funded, w3):
    nonce = w3.eth.get_transaction_count(funded.address)
    cases = [
        (_signed(funded), Account.create().address, "sender_mismatch"),
        (_signed(funded, chain_id=1), None, "wrong_chain"),
        (_signed(funded, chain_id=None), None, "wrong_chain"),  # pre-EIP-155 signature
        ("0x" + funded.sign_transaction({"chainId": 31337, "to": funded.address, "value": 1, "nonce": 0,
                                         "gas": 21_000, "maxFeePerGas": 10**9,
                                         "maxPriorityFeePerGas": 1}).raw_transaction.hex(), None, "invalid_raw_tx"),
        ("0xf8", None, "invalid_raw_tx"),
        ("nothex", None, "invalid_raw_tx"),
        ("0x" + "c0", None, "invalid_raw_tx"),
    ]
    for raw, expected_sender, code in cases:
        with pytest.raises(AppError) as exc:
            submit_raw(chain, raw, expected_sender=expected_sender)
        assert exc.value.code == code, raw
    assert w3.eth.get_transaction_count(funded.address) == nonce


def test_node_rejection_is_reported(chain):
    poor = Account.create()  # no ETH for gas
    with pytest.raises(AppError) as exc:
        submit_raw(chain, _signed(poor), expected_sender=poor.address)
    assert exc.value.code == "rejected"


def _funded_account(w3) -> Account:
    """A new account with 0.01 ETH, its funding mined: anvil may answer a send before its block is
    in, and a send from the account then met "insufficient funds" (CI runs, now and then)."""
    account = Account.create()
    fund = w3.eth.send_transaction({"from": w3.eth.accounts[0], "to": account.address, "value": 10**16})
    w3.eth.wait_for_transaction_receipt(fund, timeout=30)
    return account


def _send_answered(monkeypatch, chain, answer):
    """The node's HTTP answer to eth_sendRawTransaction replaced by answer(real_send)."""
    provider = web3_for(chain).provider
    real = provider._make_request

    def make_request(method, data):
        return answer(lambda: real(method, data)) if method == "eth_sendRawTransaction" else real(method, data)

    monkeypatch.setattr(provider, "_make_request", make_request)


def _lost(send):
    raise RequestTimedOut("no answer in time")


def _taken_then_lost(send):
    send()
    raise RequestTimedOut("no answer in time")


def _taken_then_a_page(send):
    send()
    return b"<html>502 Bad Gateway</html>"


@pytest.mark.parametrize("answer", [_taken_then_lost, _taken_then_a_page])
def test_a_send_the_node_took_without_a_readable_answer_is_sent(chain, w3, monkeypatch, answer):
    """Told "not reachable, try again" while the transaction is in the pool, the user would sign
    another one on the next nonce and pay twice: the node is asked whether it holds this one."""
    sender = _funded_account(w3)
    raw = _signed(sender)
    _send_answered(monkeypatch, chain, answer)
    assert submit_raw(chain, raw, expected_sender=sender.address) == decode_raw_tx(raw).tx_hash
    assert w3.eth.wait_for_transaction_receipt(decode_raw_tx(raw).tx_hash, timeout=30)["status"] == 1


def test_a_send_lost_before_the_node_took_it_is_not_reachable(chain, w3, monkeypatch):
    sender = _funded_account(w3)
    _send_answered(monkeypatch, chain, _lost)
    with pytest.raises(AppError) as exc:
        submit_raw(chain, _signed(sender), expected_sender=sender.address)
    assert exc.value.code == "rpc_unavailable"
    assert w3.eth.get_transaction_count(sender.address, "pending") == 0


def _provider_busy(send):
    return b'{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"internal error, please try again"}}'


def _refused_and_unasked(send):
    return b'{"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"insufficient funds for gas"}}'


def test_a_providers_own_trouble_is_not_a_refusal(chain, w3, monkeypatch):
    """"internal error, try again" says nothing of the transaction: maybe in a pool. Told
    "rejected", the user would sign anew on the next nonce (and its entry would be removed)."""
    sender = _funded_account(w3)
    _send_answered(monkeypatch, chain, _provider_busy)
    with pytest.raises(AppError) as exc:
        submit_raw(chain, _signed(sender), expected_sender=sender.address)
    assert exc.value.code == "rpc_unavailable"


def test_a_refusal_the_node_cannot_be_asked_about_is_not_a_refusal(chain, w3, monkeypatch):
    """Refused, then the question whether the node holds the transaction gets no answer: unknown."""
    sender = _funded_account(w3)
    provider = web3_for(chain).provider
    real = provider._make_request

    def make_request(method, data):
        if method == "eth_sendRawTransaction":
            return _refused_and_unasked(None)
        if method == "eth_getTransactionByHash":
            raise RequestTimedOut("no answer in time")
        return real(method, data)

    monkeypatch.setattr(provider, "_make_request", make_request)
    with pytest.raises(AppError) as exc:
        submit_raw(chain, _signed(sender), expected_sender=sender.address)
    assert exc.value.code == "rpc_unavailable"
    monkeypatch.undo()
    _send_answered(monkeypatch, chain, _refused_and_unasked)  # the node answers the question: refused
    with pytest.raises(AppError) as exc:
        submit_raw(chain, _signed(sender), expected_sender=sender.address)
    assert exc.value.code == "rejected"


@pytest.mark.parametrize("automine", [True, False])
def test_the_same_signed_transaction_sent_again_is_sent(chain, w3, automine):
    """A retry of the same signed bytes (the first answer lost, or a second tap) is refused by the
    node: "already known" while it is in the pool, "nonce too low" once mined. Told "rejected",
    the user would sign a new transaction on the next nonce and pay twice."""
    sender = _funded_account(w3)
    raw = _signed(sender)
    tx_hash = decode_raw_tx(raw).tx_hash
    w3.provider.make_request("evm_setAutomine", [automine])
    try:
        assert submit_raw(chain, raw, expected_sender=sender.address) == tx_hash
        assert submit_raw(chain, raw, expected_sender=sender.address) == tx_hash
    finally:
        w3.provider.make_request("evm_setAutomine", [True])
    if not automine:
        w3.provider.make_request("evm_mine", [])
    assert w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)["status"] == 1
    assert w3.eth.get_transaction_count(sender.address) == 1


def test_another_transaction_on_a_spent_nonce_is_still_rejected(chain, w3):
    sender = _funded_account(w3)
    submit_raw(chain, _signed(sender), expected_sender=sender.address)
    with pytest.raises(AppError) as exc:  # nonce 0 again, to another address: not the one mined
        submit_raw(chain, _signed(sender), expected_sender=sender.address)
    assert exc.value.code == "rejected"


def test_build_refuses_bad_input_and_failing_transfer(chain, funded):
    tusd = chain.tokens[0].token_address
    with pytest.raises(AppError) as exc:
        build_erc20_transfer(chain, funded.address, tusd, funded.address, FAUCET_TOKEN_UNITS + 1)
    assert exc.value.code == "estimate_failed"
    for args, code in [
        ((funded.address, ZERO_ADDRESS, funded.address, 1), "invalid_address"),
        ((funded.address, tusd, "0x12", 1), "invalid_address"),
        ((funded.address, tusd, funded.address, 0), "invalid_amount"),
        ((funded.address, tusd, funded.address, -5), "invalid_amount"),
    ]:
        with pytest.raises(AppError) as exc:
            build_erc20_transfer(chain, *args)
        assert exc.value.code == code


def test_token_metadata(chain, deployed):
    info = token_metadata(chain, deployed["tokens"]["tKRW"].lower())
    assert (info.token_address, info.token_symbol, info.token_name, info.token_decimals) == (
        deployed["tokens"]["tKRW"], "tKRW", "Newbl Test KRW", 6)
    native = token_metadata(chain, ZERO_ADDRESS)
    assert (native.token_symbol, native.token_name, native.token_decimals) == ("ETH", "Ether", 18)
    for address, code in [
        (Account.create().address, "not_a_contract"),
        (deployed["multicall"], "not_erc20"),
        (deployed["payment"], "not_erc20"),
        ("0xnot-an-address", "invalid_address"),
    ]:
        with pytest.raises(AppError) as exc:
            token_metadata(chain, address)
        assert exc.value.code == code, address


@pytest.mark.parametrize("symbol", [
    "tUSD\u034f",  # COMBINING GRAPHEME JOINER
    "tUSD\ufe0f",  # VARIATION SELECTOR-16
    "tUSD\u3164",  # HANGUL FILLER
    "\u115ftUSD\u1160\uffa0",  # the other Hangul fillers
    "tUSD\ufff0",  # unassigned
    "tU\u13da\u13a0",  # Cherokee
    "\ua4d4\ua4f4\ua4e2\ua4d3",  # Lisu
])
def test_a_copycat_of_a_configured_token_is_told_apart(chain, w3, symbol):
    """A token naming itself tUSD plus a character drawn as nothing (a mark, a Hangul filler, an
    unassigned one), or in letters of a script the look-alike table did not have, read as the
    configured tUSD and passed the add-token dialog's copycat check (found by an audit)."""
    from contracts.deploy import DEV_DEPLOYER_KEY, _deploy_contract
    from wallet_app.services.tokens import copycat_of, unfamiliar_symbol

    real = chain.tokens[0]
    listed = [{"chain_id": chain.chain_id, "token_address": t.token_address, "token_symbol": t.token_symbol}
              for t in (*chain.tokens, chain.native_token())]
    address = _deploy_contract(w3, DEV_DEPLOYER_KEY, "CopycatToken", symbol, real.token_name + "\u034f")
    info = token_metadata(chain, address)
    assert info.token_name == real.token_name
    assert copycat_of(info.token_symbol, chain.chain_id, address, listed)["token_address"] == real.token_address
    assert info.token_symbol == real.token_symbol or unfamiliar_symbol(info.token_symbol)
