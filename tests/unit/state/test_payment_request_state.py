"""The pure parts of Receive's payment request (state/home.py) and of Send's payment URI filling
(state/send.py): table tests (issue 14 item 5)."""

import pytest

from wallet_app.errors import AppError
from wallet_app.services.eth import ZERO_ADDRESS
from wallet_app.services.payment_uri import parse_transfer_uri
from wallet_app.state.home import receive_request, receive_token_items
from wallet_app.state.send import fields_from_uri
from wallet_app.state.session import texts_for

TUSD = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
OTHER = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
ME = "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB"
CHAINS = [{"chain_id": "31337", "chain_name": "Dev"}, {"chain_id": "84532", "chain_name": "Base Sepolia"}]


def entry(chain_id, address, symbol, decimals, chain_name="Dev"):
    return {"chain_id": chain_id, "chain_name": chain_name, "token_address": address, "token_symbol": symbol,
            "token_name": symbol, "token_decimals": decimals}


TOKENS = [entry(31337, TUSD, "tUSD", 6), entry(31337, ZERO_ADDRESS, "ETH", 18),
          entry(84532, OTHER, "USDC", 6, "Base Sepolia")]


@pytest.mark.parametrize("uri, selected, fields", [
    (f"ethereum:{TUSD}@31337/transfer?address={ME}&uint256=1500000", "",
     {"chain_id": "31337", "token_address": TUSD, "recipient": ME, "amount": "1.5"}),
    # the token as the list spells it; the amount exact, not the 5-decimal balance display
    (f"ethereum:{TUSD.lower()}@31337/transfer?address={ME.lower()}&uint256=1234567", "84532",
     {"chain_id": "31337", "token_address": TUSD, "recipient": ME, "amount": "1.234567"}),
    (f"ethereum:pay-{OTHER}@84532/transfer?address={ME}&uint256=2.5e6", "31337",
     {"chain_id": "84532", "token_address": OTHER, "recipient": ME, "amount": "2.5"}),
    # no amount: left for the user
    (f"ethereum:{TUSD}@31337/transfer?address={ME}", "",
     {"chain_id": "31337", "token_address": TUSD, "recipient": ME, "amount": ""}),
    # no chain id: the selected network, else the first configured
    (f"ethereum:{OTHER}/transfer?address={ME}&uint256=1", "84532",
     {"chain_id": "84532", "token_address": OTHER, "recipient": ME, "amount": "0.000001"}),
    (f"ethereum:{TUSD}/transfer?address={ME}&uint256=1e6", "",
     {"chain_id": "31337", "token_address": TUSD, "recipient": ME, "amount": "1"}),
])
def test_fields_from_uri(uri, selected, fields):
    assert fields_from_uri(uri, CHAINS, TOKENS, selected) == fields


@pytest.mark.parametrize("uri, selected, fields", [
    # an address alone (wallets' Receive QR codes): the recipient; the token and amount stay as chosen
    (f"ethereum:{ME.lower()}", "31337", {"recipient": ME}),
    (f"ethereum:{ME}@31337", "31337", {"recipient": ME}),
    # another network named: that network and its first token, as choosing it in the form does, and
    # no amount: one typed for the token before is not left under another the code chose
    (f"ethereum:{ME}@84532", "31337", {"chain_id": "84532", "token_address": OTHER, "recipient": ME, "amount": ""}),
    (f"ethereum:{ME}@31337", "", {"chain_id": "31337", "token_address": TUSD, "recipient": ME, "amount": ""}),
])
def test_an_address_uri_fills_the_recipient(uri, selected, fields):
    assert fields_from_uri(uri, CHAINS, TOKENS, selected) == fields


def test_an_address_uri_for_an_unsupported_network_is_refused():
    with pytest.raises(AppError) as e:
        fields_from_uri(f"ethereum:{ME}@1", CHAINS, TOKENS, "31337")
    assert (e.value.code, e.value.params) == ("uri_unsupported_chain", {"chain_id": "1"})


@pytest.mark.parametrize("uri, selected, code, en, ko", [
    (f"ethereum:{TUSD}@1/transfer?address={ME}&uint256=1", "31337", "uri_unsupported_chain",
     "This payment request is for a network this wallet does not support (chain ID 1).",
     "이 결제 요청은 이 지갑이 지원하지 않는 네트워크용입니다(체인 번호 1)."),
    (f"ethereum:{OTHER}@31337/transfer?address={ME}&uint256=1", "", "uri_unsupported_token",
     f"This payment request is for a token that is not in your list on Dev ({OTHER}). Add it on Home first.",
     f"이 결제 요청의 토큰({OTHER})이 Dev의 내 토큰 목록에 없습니다. 먼저 홈에서 추가해 주세요."),
    (f"ethereum:{TUSD}/transfer?address={ME}&uint256=1", "84532", "uri_unsupported_token",
     f"This payment request is for a token that is not in your list on Base Sepolia ({TUSD}). Add it on Home first.",
     f"이 결제 요청의 토큰({TUSD})이 Base Sepolia의 내 토큰 목록에 없습니다. 먼저 홈에서 추가해 주세요."),
    (f"ethereum:{ME}@31337?value=1", "", "native_blocked",
     "Sending the native coin is blocked: its decimals are unknown.",
     "네이티브 코인은 소수 자릿수를 알 수 없어 보낼 수 없습니다."),
    (f"ethereum:{TUSD}@31337/approve?address={ME}&uint256=1", "", "uri_unsupported",
     "This payment request is not a token transfer. Only token transfers can be filled in.",
     "이 결제 요청은 토큰 전송이 아닙니다. 토큰 전송 요청만 채울 수 있습니다."),
    (f"ethereum:{TUSD}@31337/transfer?address={ME}&uint256=-5", "", "uri_invalid",
     "This payment request (an ethereum: link or QR code) is not valid.",
     "이 결제 요청(링크 또는 QR 코드)이 올바르지 않습니다."),
])
def test_fields_from_uri_refuses_with_a_clear_message(uri, selected, code, en, ko):
    with pytest.raises(AppError) as e:
        fields_from_uri(uri, CHAINS, TOKENS, selected)
    assert e.value.code == code
    assert texts_for(e.value.spec.key, e.value.params) == {"en": en, "ko": ko}


def test_no_chain_configured_is_an_unsupported_chain():
    with pytest.raises(AppError) as e:
        fields_from_uri(f"ethereum:{TUSD}/transfer?address={ME}&uint256=1", [], [], "")
    assert (e.value.code, e.value.params) == ("uri_unsupported_chain", {"chain_id": "?"})


def test_receive_token_items_leave_out_the_native_coin():
    assert receive_token_items(TOKENS) == [[f"31337:{TUSD}", "tUSD · Dev"], [f"84532:{OTHER}", "USDC · Base Sepolia"]]


@pytest.mark.parametrize("token, amount, uri, params", [
    (None, "5", "", {}),
    (TOKENS[0], "12.5", f"ethereum:{TUSD}@31337/transfer?address={ME}&uint256=12500000",
     {"amount": "12.5", "symbol": "tUSD", "chain": "Dev"}),
    (TOKENS[0], " 0.000001 ", f"ethereum:{TUSD}@31337/transfer?address={ME}&uint256=1",
     {"amount": "0.000001", "symbol": "tUSD", "chain": "Dev"}),
    (TOKENS[0], "", f"ethereum:{TUSD}@31337/transfer?address={ME}", {"amount": "", "symbol": "tUSD", "chain": "Dev"}),
    (TOKENS[2], "1000000", f"ethereum:{OTHER}@84532/transfer?address={ME}&uint256=1000000000000",
     {"amount": "1000000", "symbol": "USDC", "chain": "Base Sepolia"}),
])
def test_receive_request(token, amount, uri, params):
    assert receive_request(ME.lower(), token, amount) == (uri, params)
    if uri:  # what Send reads back from it
        request = parse_transfer_uri(uri)
        assert (request.token, request.recipient) == (token["token_address"], ME)


@pytest.mark.parametrize("amount, code", [
    ("0", "invalid_amount"), ("0.000", "invalid_amount"), ("-1", "invalid_amount"), ("1e6", "invalid_amount"),
    ("abc", "invalid_amount"), ("1.1234567", "max_decimals"), (str(2**256), "invalid_amount"),
])
def test_receive_request_refuses_a_bad_amount(amount, code):
    with pytest.raises(AppError) as e:
        receive_request(ME, TOKENS[0], amount)
    assert e.value.code == code


ORIGIN = "https://wallet.example.com"
LINK = f"{ORIGIN}/payment?merchant={'0x' + 'ab' * 20}&chain_id=31337&token={'0x' + 'cd' * 20}&amount=1.5"
OPENED = LINK.removeprefix(ORIGIN)


@pytest.mark.parametrize("shown, value, opened", [
    ("", LINK, OPENED),  # pasted into the empty field
    ("", f"  {LINK}\n", OPENED),  # with the blanks a copy brings
    ("0x12", LINK, OPENED),  # pasted over what the field held
    (LINK[:40], LINK, None),  # being typed: Send does not leave midway
    (LINK[:-2], LINK, None),
    (f"{ORIGIN}/payment?m", f"{ORIGIN}/payment?me", None),  # "…/payment?m" read as a link: typed, not opened
    ("", "0x" + "ab" * 20, None),  # an address
    ("0x" + "ab" * 19, "0x" + "ab" * 20, None),
    ("", "https://other.example.com/payment?merchant=0x1", None),  # another site's
    ("", f"{ORIGIN}/sign?tx=abc", None),  # another page of this wallet
    ("", f"{ORIGIN}/payment", None),  # no query
    ("", f"ethereum:{'0x' + 'ab' * 20}", None),
])
def test_pasted_payment_link(shown, value, opened):
    from wallet_app.state.send import pasted_payment_link

    assert pasted_payment_link(shown, value, ORIGIN) == opened
