"""/send: network, token (filtered by network), recipient, amount.

A scanned merchant link to this wallet's /payment opens that page (services.merchant_links.
own_payment_path), and so does one pasted into the recipient field (pasted_payment_link). An
EIP-681 payment URI ("ethereum:<token>@<chain>/transfer?address=<to>&uint256=<units>", issue 14
item 5), scanned or pasted into the recipient field, fills network, token, recipient and amount
(services.payment_uri reads it; the token must be in the user's list on that network). A scanned
one that cannot be used shows its reason in the alert, a pasted one under the field.

A well-formed recipient gets the recipient safety note (issue 11 item 4): first time sending to
it, a look-alike of an address of the user's history, or the contract of a token of the user's
list (services.activity.recipient_risk).
Submit validates (specification section 5), has the server build the unsigned transfer
(amount in the token's smallest unit) and goes to /sign?tx=<base64url JSON>.
"""

from __future__ import annotations

import asyncio
import logging

import reflex as rx

from wallet_app import routes
from wallet_app.errors import AppError, as_app_error
from wallet_app.services import activity, merchant_links, payment_uri, tokens, transfers, txlink, typed
from wallet_app.services.amounts import format_units
from wallet_app.services.eth import is_hex_address, parse_address
from wallet_app.state.base import SignedInState
from wallet_app.state.session import texts_for

log = logging.getLogger(__name__)

MAX_FIELD = 200  # longer than any address or amount; bounds what a browser can store here
AMOUNT_CODES = ("amount_empty", "invalid_amount", "max_decimals")  # the amount parser's


def fields_from_uri(text: str, chains: list[dict[str, str]], user_tokens: list[dict], selected: str) -> dict[str, str]:
    """The Send form's fields an EIP-681 URI fills: {chain_id, token_address, recipient, amount}
    for a token transfer; for an address alone only the recipient, and the network with its
    first token and an empty amount when the URI names another network (an amount typed for one
    token is never left under another that a scanned code chose). Or AppError: the URI's own
    (services.payment_uri), uri_unsupported_chain, or uri_unsupported_token when the token is
    not in the user's list on that network. `chains` are the form's ({chain_id, chain_name}
    strings), `user_tokens` services.tokens.user_tokens'. A URI without a chain id is for the
    `selected` network (EIP-681: the current one), else the first configured; without an amount
    the amount is left empty for the user."""
    request = payment_uri.parse_transfer_uri(text)
    names = {c["chain_id"]: c["chain_name"] for c in chains}
    chain_id = str(request.chain_id) if request.chain_id else (selected or next(iter(names), ""))
    if chain_id not in names:
        raise AppError("uri_unsupported_chain", chain_id=chain_id or "?")
    if request.token is None:
        if chain_id == selected:
            return {"recipient": request.recipient}
        first = [x["token_address"] for x in user_tokens if str(x["chain_id"]) == chain_id]
        token = first[0] if first else ""
        return {"chain_id": chain_id, "token_address": token, "recipient": request.recipient, "amount": ""}
    for x in user_tokens:
        if str(x["chain_id"]) == chain_id and str(x["token_address"]).lower() == request.token.lower():
            amount = "" if request.units is None else format_units(request.units, int(x["token_decimals"]))
            return {
                "chain_id": chain_id,
                "token_address": x["token_address"],
                "recipient": request.recipient,
                "amount": amount,
            }
    raise AppError("uri_unsupported_token", token=request.token, chain=names[chain_id])


def pasted_payment_link(shown: str, value: str, origin: str) -> str | None:
    """The page to open ("/payment?<query>") when `value`, the recipient field's new text, is a
    merchant link to this wallet's /payment (services.merchant_links.own_payment_path) that
    arrived whole, as a paste brings it: into an empty field, or in place of what the field held
    (`shown`). None for any other text, and for a link being typed (`shown` begins it): its first
    prefix that reads as such a link ("<origin>/payment?m") is not the whole link. An address
    typed a character at a time is never one."""
    link = merchant_links.own_payment_path(value, origin)
    if link is None or (shown and value.startswith(shown)):
        return None
    return link


class SendState(SignedInState):
    chains: list[dict[str, str]] = []
    # The user's tokens as shown (strings); the raw entries stay on the server (_tokens).
    tokens: list[dict[str, str]] = []
    _tokens: list[dict] = []
    chain_id: str = ""
    token_address: str = ""
    recipient: str = ""
    amount: str = ""
    loaded: bool = False
    building: bool = False
    # The recipient safety note's catalogue key ("" for none); _known: the history's addresses.
    recipient_note: rx.Field[str] = rx.field("")
    _known: list[str] = []
    # Why a payment URI typed or pasted into the recipient field was not used (lang -> text; {} for none).
    uri_error: rx.Field[dict[str, str]] = rx.field(default_factory=dict)

    @rx.var
    def chain_items(self) -> list[list[str]]:
        return [[c["chain_id"], c["chain_name"]] for c in self.chains]

    @rx.var
    def token_items(self) -> list[list[str]]:
        return [
            [x["token_address"], f"{x['token_symbol']} · {x['token_name']}"]
            for x in self.tokens
            if x["chain_id"] == self.chain_id
        ]

    @rx.event
    async def load(self):
        """on_load: a fresh form with the configured chains and the user's tokens; after a
        reconnect (the same page again, SessionState._page_again) the form as it was."""
        if self._page_again and self.loaded:
            return None  # check_session, just before it, checked the session
        self.chain_id = self.token_address = self.recipient = self.amount = ""
        self.building = False
        self.loaded = False
        self.recipient_note = ""
        self.uri_error = {}
        user = await self._require_user()
        if user is None:
            return self._to_login()
        try:
            chains = await asyncio.to_thread(tokens.list_chains)
            user_tokens = await asyncio.to_thread(tokens.user_tokens, user)
        except AppError:  # a failed token list load shows an empty list (section 8)
            chains, user_tokens = [], []
        try:
            self._known = await asyncio.to_thread(activity.known_counterparties, user)
        except AppError:
            self._known = []
        self.chains = [{"chain_id": str(c["chain_id"]), "chain_name": c["chain_name"]} for c in chains]
        self._tokens = user_tokens
        self.tokens = [
            {
                "chain_id": str(x["chain_id"]),
                "token_address": x["token_address"],
                "token_symbol": x["token_symbol"] or "",
                "token_name": x["token_name"] or "",
            }
            for x in user_tokens
        ]
        self.loaded = True
        return None

    @rx.event
    def set_chain(self, value: str):
        if not isinstance(value, str) or value not in {c["chain_id"] for c in self.chains}:
            return
        if value != self.chain_id:
            self.chain_id = value
            # The first token of the network is selected whenever the network changes.
            first = [x["token_address"] for x in self.tokens if x["chain_id"] == value]
            self.token_address = first[0] if first else ""

    @rx.event
    def set_token(self, value: str):
        if isinstance(value, str) and any(
            x["token_address"] == value and x["chain_id"] == self.chain_id for x in self.tokens
        ):
            self.token_address = value

    @rx.event
    def set_recipient(self, value: str):
        if not isinstance(value, str):
            return None
        link = pasted_payment_link(self.recipient, value, self.router.url.origin)
        if link is not None:  # as the scanner opens it: read as an address it was "invalid recipient"
            return rx.redirect(link)
        self.uri_error = {}
        if payment_uri.is_payment_uri(value):
            try:
                self._apply_uri(value)
            except AppError as e:
                self.recipient = value[: payment_uri.MAX_URI]  # kept as typed, with the reason below it
                self.recipient_note = ""
                self.uri_error = texts_for(e.spec.key, e.params)
            return None
        self.recipient = value[:MAX_FIELD]
        self._note_recipient()
        return None

    def _note_recipient(self) -> None:
        text = typed.address(self.recipient)
        tokens = [x["token_address"] for x in self._tokens]
        risk = activity.recipient_risk(text, self._known, tokens) if is_hex_address(text) else None
        self.recipient_note = activity.RECIPIENT_NOTES[risk] if risk else ""

    def _apply_uri(self, text: str) -> None:
        """Fills the form from a payment URI, or raises AppError and changes nothing."""
        fields = fields_from_uri(text, self.chains, self._tokens, self.chain_id)
        self.chain_id = fields.get("chain_id", self.chain_id)
        self.token_address = fields.get("token_address", self.token_address)
        self.recipient = fields["recipient"]
        self.amount = fields.get("amount", self.amount)
        self._note_recipient()

    @rx.event
    def set_amount(self, value: str):
        if isinstance(value, str):
            self.amount = value[:MAX_FIELD]

    @rx.event
    def scanned(self, text: str):
        """The QR scanner's result: a merchant link to this wallet's /payment is opened there; a
        payment URI as scanned; else the first 0x + 40 hex, else the trimmed text."""
        if not isinstance(text, str):
            return None
        link = merchant_links.own_payment_path(text, self.router.url.origin)
        if link is not None:
            return rx.redirect(link)
        self.uri_error = {}
        if payment_uri.is_payment_uri(text):
            try:
                self._apply_uri(text)
            except AppError as e:
                return self._fail(e)
            return None
        self.recipient = text.strip()[:MAX_FIELD]
        self._note_recipient()
        return None

    def _selected_token(self) -> dict | None:
        for x in self._tokens:
            if str(x["chain_id"]) == self.chain_id and x["token_address"] == self.token_address:
                return x
        return None

    @rx.event
    async def submit(self):
        # The fields live in state: the form submits no data (a browser could send anything).
        if self.building:
            return
        user = await self._require_user()
        if user is None:
            yield self._to_login()
            return
        # As typed or pasted, less what the person could not see or tell apart (services.typed).
        typed_recipient = typed.address(self.recipient)
        try:
            chain_id, token_address, units = txlink.check_send_form(
                self.chain_id, self._selected_token(), typed_recipient, typed.plain(self.amount)
            )
            recipient = parse_address(typed_recipient, code="invalid_recipient")
        except AppError as e:
            yield self._fail(e, prefix="send_amount_format_error" if e.code in AMOUNT_CODES else "")
            return
        self.building = True
        yield
        try:
            tx = await asyncio.to_thread(transfers.build_transfer, user, chain_id, token_address, recipient, str(units))
            link = txlink.encode_tx(tx)
        except Exception as e:  # noqa: BLE001 - any failure: its message, and Next usable again
            self.building = False
            yield self._fail(as_app_error(log, "building a send", e))
            return
        self.building = False
        yield rx.redirect(f"{routes.SIGN}?tx={link}")
