"""The merchant link builder (services.merchant_links): the app's own reader (state.payment.read_link)
accepts what it builds, and both refuse what they must."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import parse_qsl, urlsplit

import pytest

from wallet_app.errors import AppError
from wallet_app.services.chain import ChainConfig
from wallet_app.services.merchant_links import order_ref, own_payment_path, parse_ref, payment_link
from wallet_app.state.payment import link_params, read_link

RELAYER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
MERCHANT = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
REF = "0x" + "ab" * 32
CHAIN = ChainConfig(31337, "Anvil", "http://127.0.0.1:1", "0x" + "11" * 20, RELAYER, "ETH", "Ether", 18, None, ())


def params_of(link: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(link).query, keep_blank_values=True))


@pytest.mark.parametrize("kwargs, expected", [
    (dict(amount="1.5"), dict(amount="1.5", ref="")),
    (dict(amount=2), dict(amount="2", ref="")),
    (dict(amount=Decimal("0.000001")), dict(amount="0.000001", ref="")),
    (dict(amount=" 10.25 ", ref=REF.upper().replace("0X", "0x")), dict(amount="10.25", ref=REF)),
    (dict(amount="1", ref=order_ref("order-42"), lang="ko"), dict(amount="1", ref=order_ref("order-42"))),
    (dict(amount="1", merchant=MERCHANT.lower(), token=TOKEN.lower()), dict(amount="1", ref="")),
])
def test_the_page_reads_what_the_builder_builds(kwargs, expected):
    args = {"merchant": MERCHANT, "token": TOKEN, **kwargs}
    link = payment_link("https://wallet.example.com/", args.pop("merchant"), 31337, args.pop("token"),
                        args.pop("amount"), **args)
    assert link.startswith("https://wallet.example.com/payment?merchant=")
    got = read_link(params_of(link), [CHAIN])
    assert got.problem == ""
    assert (got.merchant, got.chain, got.token, got.amount, got.ref) == (
        MERCHANT, CHAIN, TOKEN, expected["amount"], expected["ref"])
    assert params_of(link).get("lang") == kwargs.get("lang")


def test_the_dev_merchant_links_shape_is_kept():
    assert payment_link("", MERCHANT, "31337", TOKEN, "1.5") == (
        f"/payment?merchant={MERCHANT}&chain_id=31337&token={TOKEN}&amount=1.5")


@pytest.mark.parametrize("change, code", [
    (dict(merchant="0x12"), "invalid_merchant"),
    (dict(merchant="0x" + "0" * 40), "invalid_merchant"),
    (dict(merchant=MERCHANT.replace("F", "f", 1)), "bad_checksum"),
    (dict(chain_id="0x7a69"), "unsupported_chain"),
    (dict(chain_id=0), "unsupported_chain"),
    (dict(token="tUSD"), "invalid_token"),
    (dict(amount="0"), "invalid_amount"),
    (dict(amount="0.000"), "invalid_amount"),
    (dict(amount="-1"), "invalid_amount"),
    (dict(amount="1e3"), "invalid_amount"),
    (dict(amount="1,000"), "invalid_amount"),
    (dict(amount="1."), "invalid_amount"),
    (dict(amount=True), "invalid_amount"),
    (dict(amount=1.5), "invalid_amount"),  # a float's digits are not the merchant's: write "1.5"
    (dict(ref="0x1234"), "invalid_payment_id"),
    (dict(ref="ab" * 32), "invalid_payment_id"),
    (dict(ref="order-42"), "invalid_payment_id"),
    (dict(lang="fr"), "invalid_locale"),
])
def test_the_builder_refuses(change, code):
    args = {"merchant": MERCHANT, "chain_id": 31337, "token": TOKEN, "amount": "1.5", **change}
    with pytest.raises(AppError) as e:
        payment_link("", args.pop("merchant"), args.pop("chain_id"), args.pop("token"), args.pop("amount"), **args)
    assert e.value.code == code


@pytest.mark.parametrize("ref, problem", [
    ("0x1234", "err_invalid_payment_id"),
    ("0x" + "g" * 64, "err_invalid_payment_id"),
    ("0x" + "ab" * 33, "err_invalid_payment_id"),
    ("  ", ""),  # blank: a link without a ref
    (REF, ""),
])
def test_the_page_refuses_a_bad_ref(ref, problem):
    params = params_of(payment_link("", MERCHANT, 31337, TOKEN, "1.5")) | {"ref": ref}
    assert read_link(params, [CHAIN]).problem == problem


def test_an_unconfigured_chain_is_the_pages_refusal():
    link = payment_link("", MERCHANT, 1, TOKEN, "1.5")
    assert read_link(params_of(link), [CHAIN]).problem == "err_unsupported_chain"


def test_order_ref():
    assert order_ref("order-42") == order_ref(" order-42 ") == parse_ref(order_ref("order-42"))
    assert order_ref("order-42") != order_ref("order-43")
    # keccak256(bytes("order-42")) as Solidity computes it, written down once
    assert order_ref("order-42") == "0x33222b0f2ac2490b557ba3ca8e9af1c7dfc0cf797bcc6397ee1b22d87d07825f"
    with pytest.raises(AppError):
        order_ref(" ")


ORIGIN = "https://wallet.example.com"
QUERY = f"merchant={MERCHANT}&chain_id=31337&token={TOKEN}&amount=1.5&ref={REF}"


@pytest.mark.parametrize("text, origin, path", [
    # a merchant link to this wallet, as payment_link builds it: opened on /payment, query and all
    (payment_link(ORIGIN, MERCHANT, 31337, TOKEN, "1.5", ref=REF), ORIGIN, f"/payment?{QUERY}"),
    (f"  https://WALLET.example.com:443/payment/?{QUERY}\n", ORIGIN, f"/payment?{QUERY}"),
    (f"http://localhost:3000/payment?token={TOKEN}&merchant={MERCHANT}", "http://localhost:3000",
     f"/payment?token={TOKEN}&merchant={MERCHANT}"),
    # anything else keeps the scanner's rule (its first address, or the text)
    (f"https://evil.example.com/payment?{QUERY}", ORIGIN, None),
    (f"https://wallet.example.com.evil.example/payment?{QUERY}", ORIGIN, None),
    (f"https://wallet.example.com@evil.example/payment?{QUERY}", ORIGIN, None),
    (f"https://user@wallet.example.com/payment?{QUERY}", ORIGIN, None),
    (f"http://wallet.example.com/payment?{QUERY}", ORIGIN, None),
    (f"https://wallet.example.com:8443/payment?{QUERY}", ORIGIN, None),
    (f"https://wallet.example.com:x/payment?{QUERY}", ORIGIN, None),
    (f"https://wallet.example.com/sign?{QUERY}", ORIGIN, None),
    (f"https://wallet.example.com/payments?{QUERY}", ORIGIN, None),
    ("https://wallet.example.com/payment", ORIGIN, None),
    (f"javascript:alert(1)//{ORIGIN}/payment?{QUERY}", ORIGIN, None),
    (f"see {ORIGIN}/payment?{QUERY}", ORIGIN, None),
    (f"ethereum:{TOKEN}@31337/transfer?address={MERCHANT}", ORIGIN, None),
    (MERCHANT, ORIGIN, None),
    (f"{ORIGIN}/payment?{QUERY}", "", None),
    (f"{ORIGIN}/payment?" + "a" * 2000, ORIGIN, None),
    (None, ORIGIN, None),
])
def test_own_payment_path(text, origin, path):
    assert own_payment_path(text, origin) == path


@pytest.mark.parametrize("query, params, problem", [
    (QUERY, {"merchant": MERCHANT, "chain_id": "31337", "token": TOKEN, "amount": "1.5", "ref": REF}, ""),
    ("merchant=0xA&amount=1+2&lang=", {"merchant": "0xA", "amount": "1 2", "lang": ""}, ""),
    ("", {}, ""),
    # a key given twice: readers disagree on which one counts (JavaScript's URLSearchParams.get the
    # first, this page the last), so the link is refused whatever the values
    (f"{QUERY}&merchant={RELAYER}", {"merchant": RELAYER, "chain_id": "31337", "token": TOKEN, "amount": "1.5",
                                      "ref": REF}, "pay_link_repeated"),
    ("amount=1&amount=1", {"amount": "1"}, "pay_link_repeated"),
    ("amount=&amount=5", {"amount": "5"}, "pay_link_repeated"),
    ("lang=ko&lang=en", {"lang": "en"}, "pay_link_repeated"),
])
def test_link_params(query, params, problem):
    assert link_params(query) == (params, problem)
