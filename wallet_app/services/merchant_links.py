"""Merchant links: what a merchant puts behind a "Pay with Newbl" button or QR (README, "Merchants").

    <wallet origin>/payment?merchant=<address>&chain_id=<id>&token=<address>&amount=<decimal>
                            [&ref=<0x + 64 hex>][&lang=<ko|en>]

- amount is a decimal in the token's units ("1.5" tUSD), as the page shows it; the page refuses
  more decimals than the token has.
- ref (optional) becomes the payment's on-chain paymentRef (the Paid event's indexed topic):
  the merchant's order number, so that GET /api/v1/merchant/payments?ref= and the webhook name
  the order. order_ref("order-42") derives one from any text. A payer pays a ref once, and an
  order (ref, merchant, token, amount) paid by one user is refused to the others
  (payment_ref_used; services.payments).
- lang opens the page in that language (the user's own setting is kept).

The app's own reader is wallet_app.state.payment.read_link; tests/unit/services/
test_merchant_links.py checks that it accepts what payment_link builds.

own_payment_path(text, origin): such a link to this wallet (`origin`, the page's own) as scanned
by Send's QR button: the path it opens ("/payment?<query>"), None for any other text.
"""

from __future__ import annotations

import re
from decimal import Decimal
from urllib.parse import urlencode, urlsplit

from eth_utils import keccak

from wallet_app import routes
from wallet_app.errors import AppError
from wallet_app.services.eth import parse_address, parse_chain_id

_DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")
_REF = re.compile(r"0x[0-9a-fA-F]{64}")
LANGS = ("ko", "en")


def order_ref(text: str) -> str:
    """A ref from a merchant's own order id: keccak256 of its UTF-8 bytes, 0x + 64 hex."""
    if not isinstance(text, str) or not text.strip():
        raise AppError("invalid_payment_id", "an order id is needed")
    return "0x" + keccak(text.strip().encode()).hex()


def parse_ref(value: object) -> str:
    """A ref as links and the API carry it: 0x + 64 hex, lowercased."""
    if not isinstance(value, str) or not _REF.fullmatch(value.strip()):
        raise AppError("invalid_payment_id", "ref must be 0x and 64 hex digits")
    return value.strip().lower()


def _amount(value: object) -> str:
    """A positive plain decimal ("1.5"; no sign, exponent or grouping)."""
    if isinstance(value, Decimal):
        value = format(value, "f")
    elif isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = value.strip() if isinstance(value, str) else ""
    if len(text) > 100 or not _DECIMAL.fullmatch(text) or not any(c in "123456789" for c in text):
        raise AppError("invalid_amount", "amount must be a positive decimal such as 1.5")
    return text


def payment_link(
    base_url: str,
    merchant: str,
    chain_id: int | str,
    token: str,
    amount: str | int | Decimal,
    *,
    ref: str | None = None,
    lang: str | None = None,
) -> str:
    """The link (base_url: the wallet's origin, e.g. https://wallet.example.com; "" gives the
    path alone). Refuses what the page would refuse (AppError with the page's codes)."""
    params = {
        "merchant": parse_address(merchant, code="invalid_merchant"),
        "chain_id": str(parse_chain_id(chain_id, code="unsupported_chain")),
        "token": parse_address(token, code="invalid_token"),
        "amount": _amount(amount),
    }
    if ref is not None:
        params["ref"] = parse_ref(ref)
    if lang is not None:
        if lang not in LANGS:
            raise AppError("invalid_locale", "lang must be ko or en")
        params["lang"] = lang
    return f"{base_url.rstrip('/')}{routes.PAYMENT}?{urlencode(params)}"


def own_payment_path(text: object, origin: str) -> str | None:
    """A merchant link to this wallet's /payment (scheme and host as `origin`, e.g.
    "https://wallet.example.com") -> "/payment?<its query>"; None for any other text. Send's
    scanner opens it: read as a plain text, its first address (the merchant's, or in another
    order of the parameters the token contract's) became a bare recipient, without the amount
    and the order's ref (a transfer the merchant cannot match, or tokens sent to the token)."""
    if not isinstance(text, str) or not origin or len(text) > 2000:
        return None
    try:
        url, mine = urlsplit(text.strip()), urlsplit(origin)
        ports = (url.port, mine.port)  # a malformed port raises
    except ValueError:
        return None
    scheme = url.scheme.lower()
    if scheme not in ("http", "https") or not url.hostname or url.username or url.password:
        return None
    default = {"http": 80, "https": 443}[scheme]
    same = (
        scheme == mine.scheme.lower()
        and url.hostname == mine.hostname
        and (ports[0] or default) == (ports[1] or default)
    )
    if not same or routes.normalize_path(url.path) != routes.PAYMENT or not url.query:
        return None
    return f"{routes.PAYMENT}?{url.query}"
