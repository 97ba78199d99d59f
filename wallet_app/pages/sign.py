"""/sign?tx=<base64url JSON> : the signature request.

Shows the summary (asset transfer: symbol, name, token address with copy, recipient, amount;
other: the target address) and the collapsible details. Confirm opens the PIN dialog, which
signs in the browser (legacy, EIP-155) and hands back only the raw transaction; the server
checks sender and chain, broadcasts it and records the activity; then the tx hash and /activity.
"""

import asyncio
import json
import re

import reflex as rx

from custom_components.wallet_js.wallet import pin_dialog
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.ui import form_skeleton
from wallet_app.i18n import error_messages, messages, t, t_var
from wallet_app.pages.send import show_error
from wallet_app.errors import AppError
from wallet_app.services import activity, eth, transfers, txlink
from wallet_app.services import tokens as token_svc
from wallet_app.services.amounts import format_balance
from wallet_app.state.session import SessionState

_RAW_TX = re.compile(r"0x[0-9a-fA-F]{2,100000}")


def summarize(tx: dict[str, str], tokens: list[dict]) -> dict[str, str]:
    """The summary of a decoded tx: an ERC-20 transfer of a token in the user's list is an
    asset transfer; anything else is 'other' with its target address."""
    call = activity.decode_token_call(tx["data"])
    if call and call[0] == "transfer" and tx["value"] == "0":
        _, recipient, units = call
        for x in tokens:
            if str(x["chain_id"]) == tx["chain_id"] and x["token_address"].lower() == tx["to"].lower():
                decimals = x.get("token_decimals")
                if isinstance(decimals, int) and not isinstance(decimals, bool):
                    return {
                        "kind": "transfer", "token_symbol": x["token_symbol"] or "", "token_name": x["token_name"] or "",
                        "token_address": x["token_address"], "recipient": eth.parse_address(recipient, code="invalid_recipient", allow_zero=True),
                        "amount": format_balance(units, decimals, max_decimals=decimals),
                    }
    return {"kind": "other", "token_symbol": "", "token_name": "", "token_address": "", "recipient": "",
            "amount": ""}


class SignState(rx.State):
    ready: bool = False
    tx: dict[str, str] = {}
    chain_name: str = ""
    summary: dict[str, str] = {}
    # The built transaction handed to the PIN dialog (public: it is unsigned).
    payload: str = ""
    pin_open: bool = False
    submitting: bool = False
    done: bool = False
    tx_hash: str = ""

    @rx.var
    def kind_key(self) -> str:
        return "sign_kind_transfer" if self.summary.get("kind") == "transfer" else "sign_kind_other"

    @rx.var
    def short_token(self) -> str:
        return eth.short_address(self.summary.get("token_address", ""))

    @rx.event
    async def load(self):
        self.ready = self.pin_open = self.submitting = self.done = False
        self.tx, self.summary, self.payload, self.chain_name, self.tx_hash = {}, {}, "", "", ""
        session = await self.get_state(SessionState)
        user = session._user()
        if user is None:
            return session._expired()
        try:
            tx = txlink.decode_tx(self.router.url.query_parameters.get("tx", ""))
        except AppError:
            return session._show_dialog("err_INVALID_TX", title="error", ok_route=routes.HOME)
        try:
            chains = await asyncio.to_thread(token_svc.list_chains)
        except AppError:
            chains = []
        chain = next((c for c in chains if str(c["chain_id"]) == tx["chain_id"]), None)
        if chain is None:
            return session._show_dialog("sign_unsupported_chain", title="error", ok_route=routes.HOME)
        try:
            tokens = await asyncio.to_thread(token_svc.user_tokens, user.id)
        except AppError:
            tokens = []  # the summary falls back to 'other'
        self.tx = tx
        self.chain_name = chain["chain_name"]
        self.summary = summarize(tx, tokens)
        self.payload = json.dumps(tx, separators=(",", ":"))
        self.ready = True

    @rx.event
    def open_pin(self):
        if self.ready and not self.submitting and not self.done:
            self.pin_open = True

    @rx.event
    def close_pin(self):
        self.pin_open = False

    @rx.event
    async def signed(self, raw_tx: str):
        """The PIN dialog's result: the signed raw transaction (public)."""
        self.pin_open = False
        if not self.ready or self.submitting or self.done:
            return
        if not isinstance(raw_tx, str) or not _RAW_TX.fullmatch(raw_tx):
            return
        session = await self.get_state(SessionState)
        user = session._user()
        if user is None:
            yield session._expired()
            return
        self.submitting = True
        yield
        try:
            result = await asyncio.to_thread(transfers.submit_signed, user.id, raw_tx)
        except AppError as e:
            self.submitting = False
            yield show_error(session, e)
            return
        self.submitting = False
        self.done = True  # the nonce is spent: never offer to sign this one again
        self.tx_hash = result["tx_hash"]
        # The dialog has no room for 66 unbroken characters: short there, in full on the page.
        session._show_dialog("sign_submitted", eth.short_address(self.tx_hash), ok_route=routes.ACTIVITY)


ON_LOAD: list = [SignState.load]


def _row(label_key: str, value, mono: bool = False, **props) -> rx.Component:
    return rx.vstack(
        rx.text(t(label_key), size="1", color_scheme="gray"),
        rx.text(value, size="2", word_break="break-all", color="var(--gray-12)",
                font_family="var(--code-font-family)" if mono else None, **props),
        spacing="0",
        width="100%",
    )


def _transfer_summary() -> rx.Component:
    s = SignState.summary
    return rx.vstack(
        rx.vstack(
            rx.text(t("sign_asset"), size="1", color_scheme="gray"),
            rx.hstack(rx.text(s["token_symbol"], weight="bold", size="4"),
                      rx.text(s["token_name"], size="2", color_scheme="gray"), align="baseline", spacing="2"),
            spacing="0",
        ),
        rx.vstack(
            rx.text(t("sign_token_address"), size="1", color_scheme="gray"),
            rx.hstack(
                rx.code(SignState.short_token, variant="ghost", size="3", title=s["token_address"],
                        id="sign-token-address"),
                # Copy failures are silent (specification section 8).
                rx.icon_button(rx.icon("copy", size=18), variant="ghost", aria_label=t("sign_copy_token"),
                               width="44px", height="44px",  # touch target without a giant icon
                               on_click=rx.set_clipboard(s["token_address"])),
                align="center",
                spacing="3",
            ),
            spacing="0",
        ),
        _row("sign_recipient", s["recipient"], mono=True, id="sign-recipient"),
        rx.vstack(
            rx.text(t("sign_amount"), size="1", color_scheme="gray"),
            rx.text(s["amount"], " ", s["token_symbol"], size="6", weight="bold", id="sign-amount",
                    style={"font-variant-numeric": "tabular-nums"}),
            spacing="0",
        ),
        spacing="3",
        width="100%",
    )


def _details() -> rx.Component:
    tx = SignState.tx
    return rx.accordion.root(
        rx.accordion.item(
            header=t("sign_details"),
            content=rx.vstack(
                _row("sign_chain", SignState.chain_name),
                _row("sign_chain_id", tx["chain_id"], mono=True),
                _row("sign_nonce", tx["nonce"], mono=True),
                _row("sign_gas_limit", tx["gas_limit"], mono=True),
                _row("sign_gas_price", tx["gas_price"], mono=True),
                _row("sign_value", tx["value"], mono=True),
                _row("sign_data", tx["data"], mono=True, id="sign-data"),
                spacing="3",
                width="100%",
                padding_top="8px",
            ),
            value="details",
        ),
        type="single",
        collapsible=True,
        variant="ghost",
        width="100%",
    )


def _request() -> rx.Component:
    s = SignState
    return rx.vstack(
        rx.card(
            rx.vstack(
                rx.badge(t_var(s.kind_key), size="2", variant="soft", id="sign-kind"),
                rx.cond(s.summary["kind"] == "transfer", _transfer_summary(),
                        _row("sign_target", s.tx["to"], mono=True, id="sign-target")),
                spacing="3",
                width="100%",
            ),
            width="100%",
            size="3",
        ),
        _details(),
        rx.cond(s.tx_hash != "", rx.callout.root(
            rx.callout.icon(rx.icon("circle-check")),
            rx.callout.text(t("sign_submitted"), rx.el.br(),
                            rx.code(s.tx_hash, variant="ghost", word_break="break-all", id="sign-tx-hash")),
            color_scheme="green", width="100%")),
        rx.cond(s.submitting, rx.hstack(rx.spinner(), rx.text(t("sign_submitting"), size="2"), role="status")),
        rx.button(rx.icon("pen-line"), t("confirm"), size="4", width="100%", on_click=s.open_pin,
                  disabled=s.submitting | s.done),
        pin_dialog(open=s.pin_open, title=t("pin_dialog_title"), owner=SessionState.address, action="sign_tx",
                   payload=s.payload, messages=messages(), errors=error_messages(), on_done=s.signed, on_close=s.close_pin),
        spacing="4",
        width="100%",
    )


def sign_page() -> rx.Component:
    return page(rx.cond(SignState.ready, _request(), form_skeleton()), title_key="sign_title")
