"""/payment: pay a merchant from a merchant link (design.md section 4, specification section 4).

Link: /payment?merchant=<address>&chain_id=<id>&token=<address>&amount=<decimal>[&ref=<0x+64 hex>]&lang=<ko|en>
(built by services.merchant_links.payment_link; ref: the merchant's order, the payment's paymentRef).
Flow on submit: quote -> (approve with PIN, submit, poll the quote every 1 s) -> Pay typed data
signed with PIN in the browser -> execute (the server relays) -> poll the status every 1 s,
each poll held until the payment is final (payment_watch).
Gasless (issue 14): when the quote offers a Permit (the token has EIP-2612), the PIN dialog signs
the Permit and the Pay message with one PIN entry, both with this page's deadline, and execute
carries the permit: no approve transaction, no native coin needed.
A merchant that imitates an address the user sent or paid to (address poisoning), or that is a
token's contract, gets the warning Send and /sign give (merchant_note_key).
Only public values pass through here: the built approve transaction, the signed raw transaction
and the Pay signature. The PIN and keys stay in the PIN dialog's JS.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from urllib.parse import parse_qsl

import reflex as rx

from wallet_app import routes
from wallet_app.core.threads import in_payment_thread
from wallet_app.errors import AppError, as_app_error
from wallet_app.i18n import normalize_lang
from wallet_app.services import accounts, activity, amounts, merchant_links, payments, tokens, transfers, txpreview
from wallet_app.services import chain as chains
from wallet_app.services.chain import ChainConfig
from wallet_app.services.eth import checksum, parse_address, parse_chain_id, short_address
from wallet_app.state.base import SignedInState

log = logging.getLogger(__name__)

DEADLINE_SECONDS = 300  # specification section 9: payment deadline 5 minutes
POLL_SECONDS = 1.0  # specification section 9: availability and status polling
MAX_POLLS = 120  # about two minutes of polling before telling the user to check later
# A flow started longer ago than this is over whatever its state says (its worker restarted under
# it): a page load starts afresh instead of showing its progress for good. Well past the Pay
# deadline and both polls.
STALE_FLOW_SECONDS = 15 * 60
# The steps at which nothing has been sent for the flow's link yet (no approve broadcast for it, no
# execute): a load of another link may drop such a flow. PAY_PIN after an approve has sent only an
# allowance for the payment contract, no payment to the merchant.
UNSENT_STEPS = frozenset({"quoting", "approve_pin", "pay_pin"})


class Step(StrEnum):
    """Where the payment flow is; each handler runs only from the step it expects."""

    IDLE = "idle"  # nothing running
    QUOTING = "quoting"  # the first quote is being read
    APPROVE_PIN = "approve_pin"  # the PIN dialog signs the approve transaction
    APPROVE_SENT = "approve_sent"  # the signed approve came back, about to be submitted
    APPROVE_POLLING = "approve_polling"  # approve submitted; the quote is polled until available
    PAY_PIN = "pay_pin"  # the PIN dialog signs the Pay typed data
    PAY_SENT = "pay_sent"  # the signature came back, about to be executed
    PAY_POLLING = "pay_polling"  # executed; the status is polled until ok or failed


def app_error(e: Exception) -> AppError:
    """What stops the flow: an AppError as it is; any other failure (a node's refusal no service
    expected, the database or Redis for a moment) as its code's AppError, logged."""
    return as_app_error(log, "a payment flow", e)


def ran_out(error: AppError) -> AppError:
    """execute's refusal of the page's own Pay deadline (its now + 5 minutes when the PIN dialog
    opened) as too near: the time ran out while the dialog was open (the server wants a minute
    left for the relayed transaction). Said as a deadline passed is, 'expired', not 'The payment
    deadline is invalid.' (the PIN dialog leaves that judgement to the server's clock)."""
    return AppError("expired", error.message) if error.code == "invalid_deadline" else error


def _stops_on_failure(handler: Callable[..., Awaitable[object]]) -> Callable[..., Awaitable[object]]:
    """A background step of the flow that fails in a way it did not handle stops the flow with its
    message. Before, `running` stayed set: the page kept its progress overlay and refused Pay (its
    load and submit wait for a running flow) with nothing running behind it."""

    @functools.wraps(handler)
    async def step(self: PaymentState, *args: object, **kwargs: object) -> object:
        try:
            return await handler(self, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 - every failure ends the flow with a message
            async with self:
                self._stop(app_error(e))
            return None

    return step


# ---------------------------------------------------------------- the link (pure, table-tested)


@dataclass(frozen=True)
class Link:
    merchant: str = ""  # checksummed, "" when missing or invalid
    chain: ChainConfig | None = None
    token: str = ""
    amount: str = ""  # as written in the link (bounded)
    ref: str = ""  # the merchant's paymentRef (0x + 64 lowercase hex), "" when the link has none
    problem: str = ""  # catalogue key of the first problem, "" when the link reads well


def link_params(query: str) -> tuple[dict[str, str], str]:
    """The link's parameters from its query string, and "pay_link_repeated" when a key is given
    twice ("" when not). Which one counts differs between readers (the page's took the last,
    JavaScript's URLSearchParams.get the first): "merchant=A&...&merchant=B" read as A by a
    merchant's own check or a link preview was paid to B."""
    pairs = parse_qsl(query or "", keep_blank_values=True)
    params = dict(pairs)
    return params, ("pay_link_repeated" if len(params) != len(pairs) else "")


def read_link(params: Mapping[str, str], configured: list[ChainConfig], owner: str = "") -> Link:
    """The link's fields in the specification's order (section 5); the first problem wins. A
    merchant that is the payer's own address (`owner`) is one (the server refuses it too)."""
    link = Link(amount=params.get("amount", "")[:100])
    try:
        merchant = params.get("merchant", "")
        if not merchant.strip():
            return replace(link, problem="pay_merchant_missing")
        link = replace(link, merchant=parse_address(merchant, code="invalid_merchant"))
        payments.refuse_paying_oneself(link.merchant, owner)
        chain_id = params.get("chain_id", "")
        if not chain_id.strip():
            return replace(link, problem="pay_select_network")
        link = replace(link, chain=chains.get_chain(parse_chain_id(chain_id, code="unsupported_chain"), configured))
        token = params.get("token", "")
        if not token.strip():
            return replace(link, problem="pay_select_token")
        link = replace(link, token=parse_address(token, code="invalid_token"))
    except AppError as e:
        return replace(link, problem=e.spec.key)
    if not link.amount.strip():
        return replace(link, problem="pay_enter_amount")
    if ref := params.get("ref", "").strip():
        try:
            link = replace(link, ref=merchant_links.parse_ref(ref))
        except AppError as e:
            return replace(link, problem=e.spec.key)
    return link


def merchant_note_key(merchant: str, known: list[str], tokens: list[str]) -> str:
    """The note under the merchant (catalogue key, "" for none), services.activity.recipient_risk's
    as Send and /sign give it: a look-alike of an address the user sent or paid to (address
    poisoning), or a token's contract (tokens sent there are lost for good). Not "first time":
    most merchants are paid once."""
    risk = activity.recipient_risk(merchant, known, tokens) if merchant else None
    return activity.RECIPIENT_NOTES[risk] if risk in ("lookalike", "token_contract") else ""


def link_key(params: Mapping[str, str]) -> str:
    """Which link a page load is for: its query without the language (the same link in another
    language is the same payment)."""
    return json.dumps(sorted((str(k), str(v)) for k, v in params.items() if k != "lang"))


def amount_units(amount: str, decimals: int | None) -> tuple[int, str]:
    """(units, problem key): the token's decimals are needed, and the amount must parse above zero."""
    if decimals is None:
        return 0, "pay_decimals_missing"
    try:
        units = amounts.parse_units(amount, decimals)
    except AppError:
        return 0, "pay_invalid_amount"
    return (units, "") if units > 0 else (0, "pay_invalid_amount")


def pin_payload_for_permit(quote_permit: dict, deadline: int, pay_payload: str) -> str:
    """The sign_pay_permit payload {permit, pay}: the quote's Permit with the payment's deadline."""
    message = {**quote_permit["message"], "deadline": deadline}
    permit = {"domain": quote_permit["domain"], "types": {"Permit": payments.PERMIT_TYPES}, "message": message}
    return json.dumps({"permit": permit, "pay": json.loads(pay_payload)})


def read_permit_result(result: str) -> tuple[str, str] | None:
    """(Pay signature, permit signature) from the sign_pay_permit result, None when it is not that."""
    try:
        parsed = json.loads(result)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    sig, permit_sig = parsed.get("signature"), parsed.get("permit_signature")
    if not (isinstance(sig, str) and isinstance(permit_sig, str) and len(sig) <= 200 and len(permit_sig) <= 200):
        return None
    return sig, permit_sig


def pin_payload_for_pay(
    chain_id: int,
    verifying_contract: str,
    merchant: str,
    token: str,
    owner: str,
    units: int,
    payment_id: str,
    deadline: int,
) -> str:
    """The sign_pay payload {domain, types, message} of the PIN dialog (amount as a decimal string)."""
    message = {
        "merchant": merchant,
        "token": token,
        "from": checksum(owner),
        "amount": str(units),
        "paymentRef": payment_id,
        "deadline": deadline,
    }
    typed = payments.pay_typed_data(chain_id, verifying_contract, message)
    return json.dumps({"domain": typed["domain"], "types": {"Pay": typed["types"]["Pay"]}, "message": message})


# ---------------------------------------------------------------- state


class PaymentState(SignedInState):
    # What the link asks for (read-only on the page).
    merchant: rx.Field[str] = rx.field("")
    chain_id: int = 0
    chain_name: rx.Field[str] = rx.field("")
    token: str = ""
    token_symbol: rx.Field[str] = rx.field("")
    token_decimals: int = 0
    units: str = ""  # the amount in smallest units, what the PIN dialog checks the payload against
    amount_display: rx.Field[str] = rx.field("")
    problem: rx.Field[str] = rx.field("")  # catalogue key of the link's problem
    merchant_note: rx.Field[str] = rx.field("")  # catalogue key of the merchant's warning (merchant_note_key)
    loaded: bool = False
    # This tab's last payment of the shown link is over (paid, or executed and still pending):
    # Pay is not offered again for that link; its outcome is shown instead.
    finished: bool = False

    # The running flow.
    running: bool = False
    phase: rx.Field[str] = rx.field("pay_quoting")  # catalogue key shown by the overlay
    approve_hash: str = ""
    pin_open: bool = False
    pin_action: str = "sign_approve"
    pin_title: rx.Field[str] = rx.field("pay_pin_approve")
    pin_payload: str = ""

    # Backend only: the amount, the quote, the deadline, and the step.
    _units: int = 0
    _ref: str = ""  # the link's paymentRef, "" for a quote's own
    _payment_id: str = ""
    _verifying_contract: str = ""
    _deadline: int = 0
    _permit: dict = {}  # the signed Permit's message (gasless payment), {} for the allowance path
    _approve_tx: dict[str, str] = {}  # the quote's approve transaction, the one the PIN dialog may sign
    _step: Step = Step.IDLE
    _started_at: float = 0.0  # epoch seconds the running flow started (STALE_FLOW_SECONDS)
    _flow_seq: int = 0  # which flow a background step belongs to (a load may drop a flow under it)
    # The link the page shows (link_key), the one a running flow belongs to.
    _link: str = ""
    # This tab's last finished payment: its link, its payment_id, its outcome (catalogue key,
    # pay_done or pay_still_pending). Reflex keeps the state per tab across page loads: a Back
    # or a reconnect of the socket loads the same link again, and must not offer a second payment.
    _done_link: str = ""
    _done_payment_id: str = ""
    _done_outcome: str = ""
    # The recent payment of the same link (payments.recent_payment) this tab announced: the next
    # Pay goes ahead. Another tab or device, or this tab after a reload, had offered Pay again
    # for a link without a ref with nothing said, and a second PIN paid it twice.
    _announced_payment_id: str = ""

    @rx.var
    def approve_hash_short(self) -> str:
        h = self.approve_hash
        return f"{h[:10]}…{h[-8:]}" if len(h) > 20 else h

    # ------------------------------------------------------------ load

    @rx.event
    async def load(self):
        user = await self._require_user()
        if user is None:
            return self._to_login()
        params, repeated = link_params(self.router.url.query)
        # The link's language is this page's only: the stored locale stays (the next page
        # load applies the user's own language again).
        lang = normalize_lang(params.get("lang", "").strip())
        if lang:
            self.lang = lang
        key = link_key(params)
        if self.running and time.time() - self._started_at < STALE_FLOW_SECONDS:
            if key == self._link:
                return None  # a reload while a payment runs keeps showing it
            if self._step not in UNSENT_STEPS:
                # Something was sent for the flow's link: its progress (and its link's details)
                # stay shown; Pay waits for a load of the new link after it ends.
                self.loaded = False
                return None
            self._reset_flow()  # nothing sent: the new link replaces it
        try:
            configured = await asyncio.to_thread(chains.get_chains)
        except AppError:
            configured = []
        link = read_link(params, configured, user.address or "")
        if repeated:
            link = replace(link, problem=repeated)
        info, units, problem = None, 0, link.problem
        if not problem and link.chain is not None:
            try:
                chain_token = link.token.lower() in {t.token_address.lower() for t in link.chain.tokens}
                if not chain_token:
                    # Read from the chain, as /token/metadata does: counted against its limit.
                    await asyncio.to_thread(accounts.hit, "token_metadata", user)
                info = await asyncio.to_thread(tokens.token_info, user, link.chain, link.token)
                if info is not None and not chain_token:
                    # Neither the chain's (its tokens, its payment allow-list) nor the user's: named by
                    # its address as /sign names it, not by the symbol it gives itself ("USDC").
                    listed = await asyncio.to_thread(txpreview.listed_tokens, user, link.chain)
                    listed |= {t.lower() for t in link.chain.payment_tokens}
                    info, _ = txpreview.label_token(info, listed)
            except AppError as e:
                info, problem = None, e.spec.key
            if not problem:
                units, problem = amount_units(link.amount, info.token_decimals if info else None)
        note = ""
        if link.merchant and link.chain is not None:
            try:
                known = await asyncio.to_thread(activity.known_counterparties, user)
                own = await asyncio.to_thread(tokens.user_tokens, user)
            except AppError:
                known, own = [], []
            contracts = [x["token_address"] for x in own] + [t.token_address for t in link.chain.tokens]
            note = merchant_note_key(link.merchant, known, [*contracts, *link.chain.payment_tokens, link.token])
        self.merchant_note = note
        self.merchant = link.merchant
        self.chain_id = link.chain.chain_id if link.chain else 0
        self.chain_name = link.chain.chain_name if link.chain else ""
        self.token = link.token
        self.token_symbol = info.token_symbol if info else short_address(link.token)
        self.token_decimals = info.token_decimals if info else 0
        self.units = str(units) if units else ""
        # Only an amount read from the link is shown: its own text, when it is none, could be any 100
        # characters (a phone number to call, a bidi override) in the page's largest letters.
        self.amount_display = (
            amounts.format_balance(units, info.token_decimals, max_decimals=info.token_decimals)
            if info and units
            else ""
        )
        self.problem = problem
        self._units = units
        self._ref = link.ref
        self._link = key
        self._reset_flow()
        self.loaded = True
        self.finished = bool(self._done_outcome) and key == self._done_link
        if self.finished:
            self._notify(self._done_outcome, ok_route=routes.ACTIVITY)
        return None

    def _finish(self, outcome: str) -> None:
        """Remember the flow's payment as this tab's last (inside the lock, before _reset_flow)."""
        self._done_link, self._done_payment_id, self._done_outcome = self._link, self._payment_id, outcome
        self.finished = True

    def _reset_flow(self) -> None:
        self.running = False
        self.phase = "pay_quoting"
        self.approve_hash = ""
        self.pin_open = False
        self.pin_payload = ""
        self._payment_id = ""
        self._verifying_contract = ""
        self._deadline = 0
        self._permit = {}
        self._approve_tx = {}
        self._step = Step.IDLE
        self._flow_seq += 1  # a background step of the flow before finds itself dropped

    def _on_payment_page(self) -> bool:
        """Whether the tab is on /payment, the page that shows the flow (its progress over any
        link's details). Read inside `async with self` by a background step, the router is the
        tab's last event's (any worker's): a person who left the page (Back, a tap on a link, a
        link opened in the tab) is elsewhere, and the step's alert or redirect, sent to the tab's
        current socket, would land on that page: a payment settling took /send, with what was
        typed, or /sign, with its PIN dialog open, to /activity."""
        return routes.normalize_path(self.router.url.path) == routes.PAYMENT

    def _stop(self, error: AppError):
        """Stop the flow and show the error's alert (call inside `async with self`); no alert once
        the person left /payment (_on_payment_page)."""
        self._reset_flow()
        return self._fail(error) if self._on_payment_page() else None

    # ------------------------------------------------------------ submit

    @rx.event
    async def submit(self):
        if self.running and time.time() - self._started_at < STALE_FLOW_SECONDS:
            return None  # never twice
        user = await self._require_user()
        if user is None:
            return self._to_login()
        if self.finished:
            self._notify(self._done_outcome or "pay_done", ok_route=routes.ACTIVITY)
            return None
        if self.problem or not self._units:
            self._show_dialog(self.problem or "pay_invalid_amount", title="error")
            return None
        # An active owner is required: the session's, else the user re-read from the server.
        if not self.address and user.address:
            self.address = user.address
        if not self.address:
            return self._fail(AppError("no_address"))
        if not self._ref and await self._announce_recent_payment(user):
            return None
        self._reset_flow()
        self.running = True
        self._started_at = time.time()
        self._step = Step.QUOTING
        return PaymentState.run_quote

    async def _announce_recent_payment(self, user) -> bool:
        """Whether the user paid this link a moment ago (any tab or device) and this tab had not
        said so yet: then it is said, and the next Pay goes ahead. A read that fails says nothing
        (the quote that follows meets the same trouble and shows it)."""
        try:
            recent = await in_payment_thread(
                payments.recent_payment, user, self.chain_id, self.merchant, self.token, self._units
            )
        except Exception as e:  # noqa: BLE001
            app_error(e)  # logged
            return False
        if recent is None or recent[0] == self._announced_payment_id:
            return False
        self._announced_payment_id = recent[0]
        self._show_dialog("pay_paid_recently", params={"minutes": recent[1]})
        return True

    async def _quote(self, user) -> dict | None:
        """One quote (amount in smallest units); None after stopping with the error. Outside the lock."""
        async with self:
            args = (self.chain_id, self.token, str(self._units), self.merchant, self._ref or None)
            seq = self._flow_seq
        try:
            await in_payment_thread(accounts.hit, "payment_quote", user)
            quote = await in_payment_thread(payments.quote, user, *args)
        except AppError as e:
            async with self:
                if self._flow_seq == seq:
                    self._stop(e)
            return None
        async with self:
            if self._flow_seq != seq or not self.running:
                return None  # dropped meanwhile (another link was loaded, the PIN cancelled)
        return quote

    def _open_pay_pin(self, quote: dict) -> None:
        """Build the Pay message (deadline now + 5 minutes) and ask for the PIN (inside the lock)."""
        self._payment_id = quote["payment_id"]
        self._verifying_contract = quote["verifying_contract"]
        self._deadline = int(time.time()) + DEADLINE_SECONDS
        self.pin_payload = pin_payload_for_pay(
            self.chain_id,
            self._verifying_contract,
            self.merchant,
            self.token,
            self.address,
            self._units,
            self._payment_id,
            self._deadline,
        )
        self.pin_action = "sign_pay"
        permit = quote.get("permit")
        if permit and not quote["available"]:
            # Gasless: the Permit with the same deadline, signed with the Pay message (one PIN).
            self.pin_payload = pin_payload_for_permit(permit, self._deadline, self.pin_payload)
            self._permit = {**permit["message"], "deadline": self._deadline}
            self.pin_action = "sign_pay_permit"
        self.pin_title = "pay_pin_sign"
        self._step = Step.PAY_PIN
        self.pin_open = True

    @rx.event(background=True)
    @_stops_on_failure
    async def run_quote(self):
        async with self:
            if not self.running or self._step != Step.QUOTING:
                return None
            user = await self._require_user()
            if user is None:
                self._reset_flow()
                return self._to_login()
        quote = await self._quote(user)
        if quote is None:
            return None
        approve = None if quote["available"] or quote.get("permit") else quote.get("transaction")
        # Before its PIN dialog: an approve the native coin cannot pay for was refused by the node after it.
        refused = await in_payment_thread(self._approve_refusal, user, approve) if approve else None
        async with self:
            if not self.running or self._step != Step.QUOTING:
                return None
            if quote["available"] or quote.get("permit"):
                self._open_pay_pin(quote)
            elif refused is not None:
                self._stop(refused)
            elif quote.get("transaction"):
                self._approve_tx = quote["transaction"]
                self.pin_payload = json.dumps(quote["transaction"])
                self.pin_action = "sign_approve"
                self.pin_title = "pay_pin_approve"
                self._step = Step.APPROVE_PIN
                self.pin_open = True
            else:
                self._stop(AppError("insufficient_balance"))
        return None

    @staticmethod
    def _approve_refusal(user, tx: dict[str, str]) -> AppError | None:
        """txpreview.fee_refusal of the quote's approve (a thread's: it reads the chain)."""
        return txpreview.fee_refusal(tokens.get_chain(tx["chain_id"]), user.address or "", tx)

    # ------------------------------------------------------------ the PIN dialog

    @rx.event
    def pin_done(self, result: str):
        """The PIN dialog's public result: a raw transaction (approve) or a signature (Pay)."""
        if not isinstance(result, str) or not self.pin_open or not self.running:
            return None
        self.pin_open = False
        if self._step == Step.APPROVE_PIN:
            self._step = Step.APPROVE_SENT
            self.phase = "pay_approving"
            # mypy cannot solve the TypeVarTuple of rx.event(background=True)'s decorator: EventCallback?[Any].
            return PaymentState.send_approve(result[:200_000])  # type: ignore[misc]
        if self._step == Step.PAY_PIN:
            self._step = Step.PAY_SENT
            self.phase = "pay_sending"
            if self._permit:
                signatures = read_permit_result(result[:1000])
                if signatures is None:
                    return self._stop(AppError("invalid_permit"))
                return PaymentState.send_pay(*signatures)  # type: ignore[misc]
            return PaymentState.send_pay(result[:200], "")  # type: ignore[misc]
        return None

    @rx.event
    def pin_closed(self):
        if self.pin_open:
            self._reset_flow()  # cancelled: nothing was sent for this step

    # ------------------------------------------------------------ approve, then wait for the allowance

    @rx.event(background=True)
    @_stops_on_failure
    async def send_approve(self, raw_tx: str):
        async with self:
            if self._step != Step.APPROVE_SENT or not isinstance(raw_tx, str):
                return None
            self._step = Step.APPROVE_POLLING
            user = await self._require_user()
            if user is None:
                self._reset_flow()
                return self._to_login()
            approve_tx = self._approve_tx
        try:
            # What the PIN dialog showed and signed, and nothing else (as /sign checks its link's).
            if not approve_tx or not txpreview.matches(chains.decode_raw_tx(raw_tx), approve_tx):
                raise AppError("sign_tx_mismatch", "the signed transaction is not the quote's approve")
            sent = await asyncio.to_thread(transfers.submit_signed, user, raw_tx)
        except AppError as e:
            async with self:
                self._stop(e)
            return None
        async with self:
            self.approve_hash = sent["tx_hash"]
        for _ in range(MAX_POLLS):
            await asyncio.sleep(POLL_SECONDS)
            async with self:
                if not self.running:
                    return None  # left or reset
            quote = await self._quote(user)
            if quote is None:
                return None
            if quote["available"]:
                async with self:
                    if self.running and self._step == Step.APPROVE_POLLING:
                        self._open_pay_pin(quote)
                return None
            if not quote.get("transaction"):
                async with self:
                    self._stop(AppError("insufficient_balance"))
                return None
        async with self:
            self._reset_flow()
            if self._on_payment_page():
                self._show_dialog("pay_approve_timeout", title="error")
        return None

    # ------------------------------------------------------------ execute, then follow the status

    @rx.event(background=True)
    @_stops_on_failure
    async def send_pay(self, signature: str, permit_signature: str):
        async with self:
            if self._step != Step.PAY_SENT or not isinstance(signature, str) or not isinstance(permit_signature, str):
                return None
            self._step = Step.PAY_POLLING
            user = await self._require_user()
            if user is None:
                self._reset_flow()
                return self._to_login()
            args = (
                self.chain_id,
                self.merchant,
                self.token,
                str(self._units),
                self._payment_id,
                self._deadline,
                signature,
                {**self._permit, "signature": permit_signature} if self._permit else None,
            )
        try:
            # The server answers the same id for a repeat of this payment_id and sends nothing twice.
            await in_payment_thread(accounts.hit, "payment_execute", user)
            pay_id = await in_payment_thread(payments.execute, user, *args)
        except AppError as e:
            async with self:
                self._stop(ran_out(e))
            return None
        async with self:
            self.phase = "pay_in_progress"
        for _ in range(MAX_POLLS):
            asked = time.monotonic()
            try:
                # Held up to POLL_SECONDS on the server until the relayer settles it: the page
                # asks about once a second, and learns of the change the moment it happens.
                status = (await payments.wait_status(user, pay_id, POLL_SECONDS))["status"]
            except AppError as e:
                async with self:
                    self._stop(e)
                return None
            except Exception as e:  # noqa: BLE001 - executed: the payment may be on its way, not failed
                app_error(e)  # logged
                async with self:
                    self._finish("pay_still_pending")
                    self._reset_flow()
                    if self._on_payment_page():
                        self._notify("pay_still_pending")
                return None
            if status == "ok":
                async with self:
                    # Remembered: a reconnect or Back that loads this link again shows it, not Pay.
                    self._finish("pay_done")
                    self._reset_flow()
                    if not self._on_payment_page():
                        return None  # left: Activity lists it, and the link shows it when opened again
                    # Raised with the redirect: the alert shows on /activity.
                    self._notify("pay_done", for_route=routes.ACTIVITY)
                return rx.redirect(routes.ACTIVITY)
            if status == "failed":
                async with self:
                    self._reset_flow()
                    if self._on_payment_page():
                        self._show_dialog("pay_failed", title="error")
                return None
            # anything else: keep waiting (a pending answer given early still waits out the second)
            await asyncio.sleep(max(0.0, POLL_SECONDS - (time.monotonic() - asked)))
        async with self:
            self._finish("pay_still_pending")
            self._reset_flow()
            if self._on_payment_page():
                self._notify("pay_still_pending")
        return None
