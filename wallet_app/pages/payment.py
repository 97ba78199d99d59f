"""/payment : pay a merchant from a merchant link (design.md section 4, specification section 4).

Link: /payment?merchant=<address>&chain_id=<id>&token=<address>&amount=<decimal>&lang=<ko|en>.
Flow on submit: quote -> (approve with PIN, submit, poll the quote every 1 s) -> Pay typed data
signed with PIN in the browser -> execute (the server relays) -> poll the status every 1 s.
Only public values pass through here: the built approve transaction, the signed raw transaction
and the Pay signature. The PIN and keys stay in the PIN dialog's JS.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

import reflex as rx
from web3 import Web3

from custom_components.wallet_js.wallet import pin_dialog
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.ui import label_row
from wallet_app.i18n import CATALOGUES, error_messages, messages, normalize_lang, t, t_var
from wallet_app.services import chain as chain_svc
from wallet_app.errors import AppError
from wallet_app.services import payments, transfers
from wallet_app.services import tokens as token_svc
from wallet_app.services.amounts import format_balance, parse_units
from wallet_app.services.eth import short_address
from wallet_app.state.session import SessionState

DEADLINE_SECONDS = 300  # specification section 9: payment deadline 5 minutes
POLL_SECONDS = 1.0  # specification section 9: availability and status polling
MAX_POLLS = 120  # about two minutes of polling before telling the user to check later


# ---------------------------------------------------------------- pure parts


def parse_chain_id(value: str | None) -> int | None:
    value = (value or "").strip()
    return int(value) if value.isdigit() and len(value) <= 20 else None


def parse_nonzero_address(value: str | None) -> str | None:
    """Checksummed address, or None for a blank, malformed or zero address."""
    value = (value or "").strip()
    if not Web3.is_address(value) or int(value, 16) == 0:
        return None
    return Web3.to_checksum_address(value)


@dataclass(frozen=True)
class LinkCheck:
    error: str  # catalogue key of the first problem, "" when the link is payable
    units: int = 0  # the amount in the token's smallest unit


def check_link(merchant_raw: str, merchant: str | None, chain_ok: bool, token: str | None,
               amount: str, decimals: int | None) -> LinkCheck:
    """The specification's payment validation, in its order (section 5)."""
    if not merchant_raw.strip():
        return LinkCheck("pay_merchant_missing")
    if merchant is None:
        return LinkCheck("pay_err_invalid_merchant")
    if not chain_ok:
        return LinkCheck("pay_select_network")
    if token is None:
        return LinkCheck("pay_select_token")
    if not amount.strip():
        return LinkCheck("pay_enter_amount")
    if decimals is None:
        return LinkCheck("pay_decimals_missing")
    try:
        units = parse_units(amount, decimals)
    except AppError:
        return LinkCheck("pay_invalid_amount")
    if units == 0:
        return LinkCheck("pay_invalid_amount")
    return LinkCheck("", units)


def error_key(code: str) -> str:
    """A service error code -> its catalogue key ('pay_error' + the code as detail when unknown)."""
    key = f"pay_err_{code}"
    return key if key in CATALOGUES["en"] else "pay_error"


def pin_payload_for_pay(chain_id: int, verifying_contract: str, merchant: str, token: str, owner: str,
                        units: int, payment_id: str, deadline: int) -> str:
    """The sign_typed payload {domain, types, message} of the PIN dialog (amount as a decimal string)."""
    message = {"merchant": merchant, "token": token, "from": Web3.to_checksum_address(owner),
               "amount": str(units), "paymentRef": payment_id, "deadline": deadline}
    typed = payments.pay_typed_data(chain_id, verifying_contract, message)
    return json.dumps({"domain": typed["domain"], "types": {"Pay": typed["types"]["Pay"]}, "message": message})


# ---------------------------------------------------------------- lookups (blocking: run in a thread)


def _token_info(user, chain: chain_svc.ChainConfig, token: str) -> tuple[str, int | None]:
    """(symbol, decimals) from services.tokens.token_info; decimals None when unknown."""
    info = token_svc.token_info(user, chain, token)
    return (info.token_symbol, info.token_decimals) if info else (short_address(token), None)


class PaymentState(rx.State):
    # What the link asks for (read-only on the page).
    merchant: str = ""
    chain_id: int = 0
    chain_name: str = ""
    token: str = ""
    token_symbol: str = ""
    amount_display: str = ""
    error: str = ""  # catalogue key of the link's validation problem
    loaded: bool = False

    # The running flow.
    running: bool = False
    phase: str = "pay_quoting"  # catalogue key shown by the overlay
    approve_hash: str = ""
    pin_open: bool = False
    pin_action: str = "sign_tx"
    pin_title: str = "pay_pin_approve"
    pin_payload: str = ""

    # Backend only: the quote, the deadline, and which step may come next.
    _units: int = 0
    _payment_id: str = ""
    _verifying_contract: str = ""
    _deadline: int = 0
    _step: str = ""  # "", "approve_pin", "approve_sent", "pay_pin", "pay_sent"

    @rx.var
    def merchant_short(self) -> str:
        return short_address(self.merchant)

    @rx.var
    def approve_hash_short(self) -> str:
        h = self.approve_hash
        return f"{h[:10]}…{h[-8:]}" if len(h) > 20 else h

    # ------------------------------------------------------------ load

    @rx.event
    async def load(self):
        session = await self.get_state(SessionState)
        user = session._user()
        if user is None:
            return session._expired()
        if self.running:
            return  # a reload while a payment runs keeps showing it
        params: Mapping[str, str] = self.router.url.query_parameters
        events = []
        lang = normalize_lang(params.get("lang", "").strip())
        if lang:
            events.append(SessionState.set_language(lang))
        merchant_raw = params.get("merchant", "")
        merchant = parse_nonzero_address(merchant_raw)
        chain_id = parse_chain_id(params.get("chain_id"))
        token = parse_nonzero_address(params.get("token"))
        amount = params.get("amount", "")[:100]

        chain = None
        if chain_id is not None:
            try:
                chain = chain_svc.get_chain(chain_id)
            except AppError:
                chain = None
        symbol, decimals = "", None
        if chain is not None and token is not None:
            symbol, decimals = await asyncio.to_thread(_token_info, user, chain, token)
        check = check_link(merchant_raw, merchant, chain is not None, token, amount, decimals)

        self.merchant = merchant or ""
        self.chain_id = chain.chain_id if chain else 0
        self.chain_name = chain.chain_name if chain else ""
        self.token = token or ""
        self.token_symbol = symbol
        self.amount_display = (format_balance(check.units, decimals, max_decimals=decimals)
                               if not check.error else amount.strip())
        self.error = check.error
        self._units = check.units
        self._reset_flow()
        self.loaded = True
        return events

    def _reset_flow(self) -> None:
        self.running = False
        self.phase = "pay_quoting"
        self.approve_hash = ""
        self.pin_open = False
        self.pin_payload = ""
        self._payment_id = ""
        self._verifying_contract = ""
        self._deadline = 0
        self._step = ""

    # ------------------------------------------------------------ submit

    @rx.event
    async def submit(self):
        if self.running:
            return  # never twice
        session = await self.get_state(SessionState)
        user = session._user()
        if user is None:
            return session._expired()
        if self.error or not self._units:
            session._show_dialog(self.error or "pay_invalid_amount", title="error")
            return
        # An active owner is required: the session's, else the user re-read from the server.
        if not session.address and user.address:
            session.address = user.address
        if not session.address:
            session._show_dialog("err_NO_OWNER", title="error")
            return
        self._reset_flow()
        self.running = True
        self.phase = "pay_quoting"
        return PaymentState.run_quote

    async def _fail(self, key: str, detail: str = "") -> None:
        """Stop the flow and show the alert (call inside `async with self`)."""
        self._reset_flow()
        session = await self.get_state(SessionState)
        session._show_dialog(key, detail, title="error")

    async def _quote(self) -> dict | None:
        """One quote (amount in smallest units); None after showing the error. Call outside the lock."""
        async with self:
            session = await self.get_state(SessionState)
            user = session._user()
            args = (self.chain_id, self.token, str(self._units), self.merchant)
        if user is None:  # logged out meanwhile: stop (the next page load redirects)
            async with self:
                self._reset_flow()
            return None
        try:
            return await asyncio.to_thread(payments.quote, user, *args)
        except AppError as e:
            async with self:
                await self._fail(error_key(e.code), e.code)
        return None

    async def _open_pay_pin(self, quote: dict) -> None:
        """Build the Pay message (deadline now + 5 minutes) and ask for the PIN (inside the lock)."""
        session = await self.get_state(SessionState)
        self._payment_id = quote["payment_id"]
        self._verifying_contract = quote["verifying_contract"]
        self._deadline = int(time.time()) + DEADLINE_SECONDS
        self.pin_payload = pin_payload_for_pay(self.chain_id, self._verifying_contract, self.merchant, self.token,
                                               session.address, self._units, self._payment_id, self._deadline)
        self.pin_action = "sign_typed"
        self.pin_title = "pay_pin_sign"
        self._step = "pay_pin"
        self.pin_open = True

    @rx.event(background=True)
    async def run_quote(self):
        async with self:
            if not self.running or self._step:
                return
        quote = await self._quote()
        if quote is None:
            return
        async with self:
            if quote["available"]:
                await self._open_pay_pin(quote)
            elif quote.get("transaction"):
                self.pin_payload = json.dumps(quote["transaction"])
                self.pin_action = "sign_tx"
                self.pin_title = "pay_pin_approve"
                self._step = "approve_pin"
                self.pin_open = True
            else:
                await self._fail("pay_err_insufficient_balance")

    # ------------------------------------------------------------ the PIN dialog

    @rx.event
    def pin_done(self, result: str):
        """The PIN dialog's public result: a raw transaction (approve) or a signature (Pay)."""
        if not isinstance(result, str) or not self.pin_open or not self.running:
            return
        self.pin_open = False
        if self._step == "approve_pin":
            self._step = "approve_sent"
            self.phase = "pay_approving"
            return PaymentState.send_approve(result[:200_000])
        if self._step == "pay_pin":
            self._step = "pay_sent"
            self.phase = "pay_sending"
            return PaymentState.send_pay(result[:200])

    @rx.event
    def pin_closed(self):
        if self.pin_open:
            self._reset_flow()  # cancelled: nothing was sent for this step

    # ------------------------------------------------------------ approve, then wait for the allowance

    @rx.event(background=True)
    async def send_approve(self, raw_tx: str):
        async with self:
            if self._step != "approve_sent" or not isinstance(raw_tx, str):
                return
            self._step = "approve_polling"
            user = (await self.get_state(SessionState))._user()
            if user is None:
                self._reset_flow()
                return
        try:
            sent = await asyncio.to_thread(transfers.submit_signed, user, raw_tx)
        except AppError as e:
            async with self:
                await self._fail(error_key(e.code), e.code)
            return
        async with self:
            self.approve_hash = sent["tx_hash"]
        for _ in range(MAX_POLLS):
            await asyncio.sleep(POLL_SECONDS)
            async with self:
                if not self.running:
                    return  # left or reset
            quote = await self._quote()
            if quote is None:
                return
            if quote["available"]:
                async with self:
                    await self._open_pay_pin(quote)
                return
            if not quote.get("transaction"):
                async with self:
                    await self._fail("pay_err_insufficient_balance")
                return
        async with self:
            await self._fail("pay_approve_timeout")

    # ------------------------------------------------------------ execute, then follow the status

    @rx.event(background=True)
    async def send_pay(self, signature: str):
        async with self:
            if self._step != "pay_sent" or not isinstance(signature, str):
                return
            self._step = "pay_polling"
            user = (await self.get_state(SessionState))._user()
            args = (self.chain_id, self.merchant, self.token, str(self._units), self._payment_id, self._deadline,
                    signature)
        if user is None:
            async with self:
                self._reset_flow()
            return
        try:
            # The server answers the same id for a repeat of this payment_id and sends nothing twice.
            pay_id = await asyncio.to_thread(payments.execute, user, *args)
        except AppError as e:
            async with self:
                await self._fail(error_key(e.code), e.code)
            return
        async with self:
            self.phase = "pay_in_progress"
        for _ in range(MAX_POLLS):
            try:
                status = (await asyncio.to_thread(payments.status, user, pay_id))["status"]
            except AppError as e:
                async with self:
                    await self._fail(error_key(e.code), e.code)
                return
            if status == "ok":
                async with self:
                    self._reset_flow()
                    session = await self.get_state(SessionState)
                    session._show_dialog("pay_done")
                # The shared dialog lives in SessionState, so it stays open on /activity.
                return rx.redirect(routes.ACTIVITY)
            if status == "failed":
                async with self:
                    await self._fail("pay_failed")
                return
            await asyncio.sleep(POLL_SECONDS)  # anything else: keep waiting
        async with self:
            self._reset_flow()
            (await self.get_state(SessionState))._show_dialog("pay_still_pending")


# Events run on every load of this page, after the session check.
ON_LOAD: list = [PaymentState.load]


# ---------------------------------------------------------------- view


def _row(label_key: str, value: rx.Component) -> rx.Component:
    return label_row(label_key, value, align="center", min_height="44px")


def _dash(value: rx.Var) -> rx.Var:
    return rx.cond(value != "", value, "—")


def _overlay() -> rx.Component:
    """The full-screen processing overlay; it steps aside while the PIN dialog is open."""
    s = PaymentState
    return rx.cond(
        s.running & ~s.pin_open,
        rx.center(
            rx.card(rx.vstack(
                rx.spinner(size="3"),
                rx.text(t_var(s.phase), size="3", weight="medium", id="pay-phase"),
                rx.cond(
                    s.approve_hash != "",
                    rx.text(t("pay_approve_sent"), rx.code(s.approve_hash_short, title=s.approve_hash, white_space="nowrap"),
                            size="2", id="pay-approve-hash"),
                ),
                align="center",
                spacing="3",
                role="status",
                padding="24px",
                text_align="center",
            ), max_width="340px", margin="16px"),
            position="fixed",
            inset="0",
            z_index="1000",
            background_color="var(--color-overlay)",
            backdrop_filter="blur(2px)",
            id="pay-overlay",
        ),
    )


def payment_page() -> rx.Component:
    s = PaymentState
    details = rx.card(
        rx.vstack(
            rx.vstack(
                rx.text(t("pay_amount"), size="2", color_scheme="gray"),
                rx.hstack(
                    rx.text(_dash(s.amount_display), size="8", weight="bold", id="pay-amount",
                            style={"font_variant_numeric": "tabular-nums"}),
                    rx.text(s.token_symbol, size="5", color_scheme="gray"),
                    align="baseline",
                    spacing="2",
                ),
                align="center",
                spacing="1",
                width="100%",
                padding_y="12px",
            ),
            rx.separator(size="4"),
            _row("pay_merchant", rx.hstack(
                rx.code(_dash(s.merchant_short), size="3", variant="ghost", title=s.merchant, id="pay-merchant"),
                rx.cond(
                    s.merchant != "",
                    rx.icon_button(rx.icon("copy", size=18), variant="ghost", size="3", aria_label=t("pay_copy_merchant"),
                                   on_click=rx.set_clipboard(s.merchant)),
                ),
                align="center",
                spacing="2",
            )),
            _row("pay_network", rx.text(_dash(s.chain_name), size="3", id="pay-network")),
            _row("pay_token", rx.text(_dash(s.token_symbol), size="3", id="pay-token")),
            spacing="2",
            width="100%",
        ),
        width="100%",
    )
    return page(
        details,
        rx.cond(
            s.error != "",
            rx.callout(t_var(s.error), icon="triangle-alert", color_scheme="red", role="alert", width="100%",
                       id="pay-error"),
            rx.text(t("pay_hint"), size="2", color_scheme="gray"),
        ),
        rx.button(
            rx.icon("send"), t("pay_submit"),
            size="4", width="100%",
            disabled=s.running | (s.error != "") | ~s.loaded,
            loading=s.running,
            on_click=PaymentState.submit,
        ),
        pin_dialog(
            open=s.pin_open,
            title=t_var(s.pin_title),
            owner=SessionState.address,
            action=s.pin_action,
            payload=s.pin_payload,
            messages=messages(),
            errors=error_messages(),
            on_done=PaymentState.pin_done,
            on_close=PaymentState.pin_closed,
        ),
        _overlay(),
        title_key="payment_title",
    )
