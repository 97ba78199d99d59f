"""services.chain's pure ERC-20 parts (no node): decoding a call's arguments (decode_erc20_call), telling a
call whose data is not exactly its arguments (erc20_call_malformed), and the name and symbol a token gives
itself made safe to show (clean_token_text, applied by token_metadata)."""

from types import SimpleNamespace

import pytest
from eth_abi import encode
from web3.exceptions import ContractLogicError

from wallet_app.errors import AppError
from wallet_app.services import chain as chain_mod
from wallet_app.services.chain import (
    NAME_MAX_CHARS,
    SYMBOL_MAX_CHARS,
    ChainConfig,
    TokenInfo,
    clean_token_text,
    decode_erc20_call,
    erc20_call_malformed,
)

A = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
B = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
MAX = 2**256 - 1
TRANSFER = "0xa9059cbb" + encode(["address", "uint256"], [A, 5]).hex()
TRANSFER_FROM = "0x23b872dd" + encode(["address", "address", "uint256"], [A, B, 5]).hex()
APPROVE = "0x095ea7b3" + encode(["address", "uint256"], [A, MAX]).hex()
INCREASE = "0x39509351" + encode(["address", "uint256"], [A, 7]).hex()
DIRTY_ADDRESS = "0x095ea7b3" + "ff" * 12 + A[2:].lower() + "00" * 31 + "01"


@pytest.mark.parametrize("data, decoded, malformed", [
    (TRANSFER, ("transfer", (A.lower(), 5)), False),
    (TRANSFER_FROM, ("transferFrom", (A.lower(), B.lower(), 5)), False),
    (APPROVE, ("approve", (A.lower(), MAX)), False),
    (INCREASE, ("increaseAllowance", (A.lower(), 7)), False),
    ("0xA9059CBB" + TRANSFER[10:].upper(), ("transfer", (A.lower(), 5)), False),
    # Bytes after the arguments: a Solidity token runs the call with these arguments.
    (APPROVE + "00", ("approve", (A.lower(), MAX)), True),
    (APPROVE + "00" * 32, ("approve", (A.lower(), MAX)), True),
    (TRANSFER + "ff", ("transfer", (A.lower(), 5)), True),
    (TRANSFER_FROM + "00", ("transferFrom", (A.lower(), B.lower(), 5)), True),
    (INCREASE + "0000", ("increaseAllowance", (A.lower(), 7)), True),
    # Fewer bytes, odd hex, not hex, an address with dirty high bytes: no arguments to show.
    (APPROVE[:-2], None, True),
    (APPROVE[:-1], None, True),
    ("0x095ea7b3", None, True),
    (APPROVE + "0", None, True),
    (APPROVE + "zz", None, True),
    (DIRTY_ADDRESS, None, True),
    # Not an ERC-20 call: neither decoded nor malformed.
    ("0xdeadbeef" + APPROVE[10:] + "00", None, False),
    ("0x", None, False),
    ("", None, False),
    (None, None, False),
    (b"\x09\x5e\xa7\xb3", None, False),
])
def test_decode_and_malformed(data, decoded, malformed):
    result = decode_erc20_call(data)
    if result is not None:  # addresses as eth_abi returns them (lowercase)
        result = (result[0], tuple(a.lower() if isinstance(a, str) else a for a in result[1]))
    assert result == decoded
    assert erc20_call_malformed(data) is malformed


@pytest.mark.parametrize("text, limit, cleaned", [
    ("USDC", SYMBOL_MAX_CHARS, "USDC"),
    ("US\u202eCD", SYMBOL_MAX_CHARS, "USCD"),  # RIGHT-TO-LEFT OVERRIDE (Cf)
    ("\u2066USDC\u2069", SYMBOL_MAX_CHARS, "USDC"),  # isolates (Cf)
    ("\u200bUS\u200cD\u200dC\ufeff", SYMBOL_MAX_CHARS, "USDC"),  # zero-width characters, BOM (Cf)
    ("USDC\x00\x00\x00", SYMBOL_MAX_CHARS, "USDC"),  # NUL padding of a bytes32 symbol (Cc)
    ("US\nDC\r\t\x1b[31m", SYMBOL_MAX_CHARS, "USDC[31m"),  # line breaks, tab, ESC (Cc)
    ("US\u2028DC\u2029", SYMBOL_MAX_CHARS, "USDC"),  # line and paragraph separators
    ("\u00adUSDC\u061c", SYMBOL_MAX_CHARS, "USDC"),  # soft hyphen, Arabic letter mark (Cf)
    ("  USDC  ", SYMBOL_MAX_CHARS, "USDC"),
    # Default_Ignorable_Code_Point that are no Cf: drawn as nothing, "tUSD" looked like tUSD (an audit)
    ("tUSD\u034f", SYMBOL_MAX_CHARS, "tUSD"),  # COMBINING GRAPHEME JOINER (Mn)
    ("tUSD\ufe0f", SYMBOL_MAX_CHARS, "tUSD"),  # VARIATION SELECTOR-16 (Mn)
    ("tU\ufe00SD\U000e0100", SYMBOL_MAX_CHARS, "tUSD"),  # variation selectors 1 and 17 (Mn)
    ("tUSD\u3164", SYMBOL_MAX_CHARS, "tUSD"),  # HANGUL FILLER (Lo)
    ("\u115ftU\u1160SD\uffa0", SYMBOL_MAX_CHARS, "tUSD"),  # Hangul choseong/jungseong/halfwidth fillers (Lo)
    ("tUSD\u17b4\u17b5", SYMBOL_MAX_CHARS, "tUSD"),  # Khmer inherent vowels (Mn)
    ("tU\u180bS\u180fD", SYMBOL_MAX_CHARS, "tUSD"),  # Mongolian free variation selectors (Mn)
    ("tUSD\U000e0041\U000e007f", SYMBOL_MAX_CHARS, "tUSD"),  # tag characters (Cf)
    ("tUSD\U0001bca0\U0001d173", SYMBOL_MAX_CHARS, "tUSD"),  # shorthand format control, musical beam (Cf)
    ("tUSD\ufff0\u2065", SYMBOL_MAX_CHARS, "tUSD"),  # unassigned, default ignorable (Cn)
    ("tU\u0378SD\U0010fffe", SYMBOL_MAX_CHARS, "tUSD"),  # unassigned, a noncharacter (Cn)
    ("ᄀ한국토큰ᅡ", NAME_MAX_CHARS, "ᄀ한국토큰ᅡ"),  # Hangul syllables and jamo that are drawn stay
    ("USDĆ", SYMBOL_MAX_CHARS, "USDĆ"),  # a letter with its mark (the copycat check reads it)
    ("\u202e", SYMBOL_MAX_CHARS, ""),
    ("", SYMBOL_MAX_CHARS, ""),
    (None, SYMBOL_MAX_CHARS, ""),
    ("USD₮0", SYMBOL_MAX_CHARS, "USD₮0"),  # visible symbols stay
    ("테스트 토큰", NAME_MAX_CHARS, "테스트 토큰"),
    ("Wrapped Ether", NAME_MAX_CHARS, "Wrapped Ether"),
    ("S" * 40, SYMBOL_MAX_CHARS, "S" * 32),
    ("N" * 100, NAME_MAX_CHARS, "N" * 64),
    ("\u200b" * 100 + "USDC", SYMBOL_MAX_CHARS, "USDC"),  # cut after the hidden characters are gone
    ("A" * 31 + " B", SYMBOL_MAX_CHARS, "A" * 31),  # no trailing space left by the cut
])
def test_clean_token_text(text, limit, cleaned):
    assert clean_token_text(text, limit) == cleaned


CHAIN = ChainConfig(31337, "Dev", "http://127.0.0.1:1", "0x" + "11" * 20, None, "ETH", "Ether", 18, None, ())
TOKEN = "0x" + "22" * 20


def _answers(monkeypatch, name: str, symbol: str, decimals: int = 6) -> None:
    """token_metadata's reads: a contract at TOKEN answering name(), symbol() and decimals()."""
    node = SimpleNamespace(eth=SimpleNamespace(get_code=lambda address: b"\x60\x80"))
    monkeypatch.setattr(chain_mod, "web3_for", lambda chain: node)
    answers = [(True, encode(["string"], [name])), (True, encode(["string"], [symbol])),
               (True, decimals.to_bytes(32, "big"))]
    monkeypatch.setattr(chain_mod, "_aggregate", lambda chain, calls: answers)


@pytest.mark.parametrize("name, symbol, info", [
    ("Newbl Test USD", "tUSD", TokenInfo(TOKEN, "tUSD", "Newbl Test USD", 6)),
    ("USD\u202eCoin", "\u200bUSDC\u202e", TokenInfo(TOKEN, "USDC", "USDCoin", 6)),
    ("N" * 200, "S" * 200, TokenInfo(TOKEN, "S" * 32, "N" * 64, 6)),
    ("\u2066\u2069", "X\x00", TokenInfo(TOKEN, "X", "X", 6)),  # a name that is all hidden: the symbol
])
def test_token_metadata_shows_no_hidden_characters(monkeypatch, name, symbol, info):
    _answers(monkeypatch, name, symbol)
    found = chain_mod.token_metadata(CHAIN, TOKEN)
    assert (found.token_address.lower(), found.token_symbol, found.token_name, found.token_decimals) == (
        info.token_address, info.token_symbol, info.token_name, info.token_decimals)


def test_a_symbol_of_hidden_characters_only_is_no_erc20(monkeypatch):
    _answers(monkeypatch, "Nothing", "\u202e\u200b\x00")
    with pytest.raises(AppError) as e:
        chain_mod.token_metadata(CHAIN, TOKEN)
    assert e.value.code == "not_erc20"


def _refused(_tx):
    raise ContractLogicError("execution reverted")


@pytest.mark.parametrize("aggregate", [
    lambda _tx: b"",  # no multicall contract at the address on this node
    lambda _tx: b"\xff" * 40,  # not an aggregate3 answer
    lambda _tx: (32).to_bytes(32, "big") + (1).to_bytes(32, "big"),  # one result, then nothing
    _refused,
])
def test_balances_read_each_token_alone_when_the_aggregate_answer_is_unusable(monkeypatch, aggregate):
    """A node whose answer to the one aggregated eth_call is a refusal or does not decode: each
    balance is read again on its own (one batch), as when the aggregate runs out of gas, instead
    of the whole list failing; the native coin with eth_getBalance (a quantity), which needs no
    multicall contract."""
    batches = []

    def batch(calls):
        batches.append([method for method, _ in calls])
        return [{"jsonrpc": "2.0", "id": i,
                 "result": hex(7 + i) if method == "eth_getBalance" else "0x" + (7 + i).to_bytes(32, "big").hex()}
                for i, (method, _) in enumerate(calls)]

    node = SimpleNamespace(eth=SimpleNamespace(call=aggregate), provider=SimpleNamespace(make_batch_request=batch))
    monkeypatch.setattr(chain_mod, "web3_for", lambda chain: node)
    zero = "0x" + "00" * 20
    assert chain_mod.balances(CHAIN, A, [TOKEN, zero]) == {TOKEN: 7, zero: 8}
    assert batches == [["eth_call", "eth_getBalance"]]
