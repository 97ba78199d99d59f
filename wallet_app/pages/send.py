"""/send : network, token (filtered by network), recipient with QR scan, amount.

Submit validates (specification section 5), has the server build the unsigned transfer
(amount in the token's smallest unit) and goes to /sign?tx=<base64url JSON>.
"""

import asyncio

import reflex as rx

from custom_components.wallet_js.qr_scan import qr_scan_button
from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.ui import form_skeleton
from wallet_app.errors import AppError
from wallet_app.i18n import CATALOGUES, error_messages, messages, t
from wallet_app.services import eth, transfers, txlink
from wallet_app.services import tokens as token_svc
from wallet_app.state.session import SessionState

AMOUNT_CODES = ("amount_empty", "invalid_amount", "max_decimals")  # services.amounts.parse_units
MAX_FIELD = 200  # longer than any address or amount; bounds what a browser can store here

# Server error codes -> catalogue keys (also used by /sign). Unknown codes: tx_err_other + code.
ERROR_KEYS = {
    "invalid_recipient": "send_invalid_recipient",
    "bad_checksum": "send_bad_checksum",
    "native_blocked": "send_native_blocked",
    "unsupported_chain": "sign_unsupported_chain",
    "no_address": "err_NO_OWNER",
    "invalid_amount": "tx_err_invalid_amount",
    "estimate_failed": "tx_err_estimate_failed",
    "rpc_unavailable": "tx_err_rpc_unavailable",
    "invalid_raw_tx": "tx_err_invalid_raw_tx",
    "sender_mismatch": "tx_err_sender_mismatch",
    "wrong_chain": "tx_err_wrong_chain",
    "rejected": "tx_err_rejected",
}


def show_error(session: SessionState, error: AppError):
    """The shared dialog for a service error; an expired session goes to / instead."""
    if error.code == "not_authenticated":
        return session._expired()
    key = ERROR_KEYS.get(error.code)
    session._show_dialog(key or "tx_err_other", "" if key else error.code, title="error")


def amount_error_text(error: AppError, lang: str) -> str:
    """The parser's message in the current language ('max N decimal places' has a parameter)."""
    return CATALOGUES.get(lang, CATALOGUES["en"])[f"send_{error.code}"].format(**error.params)


class SendState(rx.State):
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

    @rx.var
    def chain_items(self) -> list[list[str]]:
        return [[c["chain_id"], c["chain_name"]] for c in self.chains]

    @rx.var
    def token_items(self) -> list[list[str]]:
        return [[x["token_address"], f'{x["token_symbol"]} · {x["token_name"]}']
                for x in self.tokens if x["chain_id"] == self.chain_id]

    @rx.event
    async def load(self):
        """on_load: a fresh form with the configured chains and the user's tokens."""
        self.chain_id = self.token_address = self.recipient = self.amount = ""
        self.building = False
        self.loaded = False
        session = await self.get_state(SessionState)
        user = session._user()
        if user is None:
            return session._expired()
        try:
            chains = await asyncio.to_thread(token_svc.list_chains)
            tokens = await asyncio.to_thread(token_svc.user_tokens, user.id)
        except AppError:  # a failed token list load shows an empty list (section 8)
            chains, tokens = [], []
        self.chains = [{"chain_id": str(c["chain_id"]), "chain_name": c["chain_name"]} for c in chains]
        self._tokens = tokens
        self.tokens = [{"chain_id": str(x["chain_id"]), "token_address": x["token_address"],
                        "token_symbol": x["token_symbol"] or "", "token_name": x["token_name"] or ""}
                       for x in tokens]
        self.loaded = True

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
        if isinstance(value, str) and any(x["token_address"] == value and x["chain_id"] == self.chain_id
                                          for x in self.tokens):
            self.token_address = value

    @rx.event
    def set_recipient(self, value: str):
        if isinstance(value, str):
            self.recipient = value[:MAX_FIELD]

    @rx.event
    def set_amount(self, value: str):
        if isinstance(value, str):
            self.amount = value[:MAX_FIELD]

    @rx.event
    def scanned(self, text: str):
        """The QR scanner's result: already the first 0x + 40 hex, else the trimmed text."""
        if isinstance(text, str):
            self.recipient = text.strip()[:MAX_FIELD]

    def _selected_token(self) -> dict | None:
        for x in self._tokens:
            if str(x["chain_id"]) == self.chain_id and x["token_address"] == self.token_address:
                return x
        return None

    @rx.event
    async def submit(self, form_data: dict):
        # The fields live in state (form_data is ignored: a browser could send anything).
        if self.building:
            return
        session = await self.get_state(SessionState)
        user = session._user()
        if user is None:
            yield session._expired()
            return
        try:
            chain_id, token_address, units = txlink.check_send_form(
                self.chain_id, self._selected_token(), self.recipient, self.amount)
            recipient = eth.parse_address(self.recipient, code="invalid_recipient", allow_zero=True)
        except AppError as e:
            if e.code in AMOUNT_CODES:
                session._show_dialog("send_amount_format_error", amount_error_text(e, session.lang), title="error")
            elif e.spec.key.startswith("send_"):  # the form's own checks
                session._show_dialog(e.spec.key, "", title=e.spec.title)
            else:  # invalid_recipient / bad_checksum / native_blocked
                yield show_error(session, e)
            return
        self.building = True
        yield
        try:
            tx = await asyncio.to_thread(transfers.build_transfer, user.id, chain_id, token_address, recipient,
                                         str(units))
            link = txlink.encode_tx(tx)
        except AppError as e:
            self.building = False
            yield show_error(session, e)
            return
        self.building = False
        yield rx.redirect(f"{routes.SIGN}?tx={link}")


ON_LOAD: list = [SendState.load]


def _label(key: str, html_for: str) -> rx.Component:
    return rx.el.label(t(key), html_for=html_for, style={"font-weight": "500", "font-size": "14px"})


def _select(id_: str, label_key: str, items, value, on_change, placeholder_key: str, **props) -> rx.Component:
    return rx.vstack(
        _label(label_key, id_),
        rx.select.root(
            rx.select.trigger(id=id_, aria_label=t(label_key), placeholder=t(placeholder_key), width="100%"),
            rx.select.content(rx.foreach(items, lambda item: rx.select.item(item[1], value=item[0]))),
            value=value,
            on_change=on_change,
            size="3",
            **props,
        ),
        spacing="1",
        width="100%",
    )


def _form() -> rx.Component:
    s = SendState
    return rx.form(
        rx.vstack(
            _select("send-network", "send_network", s.chain_items, s.chain_id, s.set_chain, "send_need_chain"),
            _select("send-token", "send_token", s.token_items, s.token_address, s.set_token, "send_need_token",
                    disabled=s.token_items.length() == 0),
            rx.cond((s.chain_id != "") & (s.token_items.length() == 0),
                    rx.text(t("send_no_tokens"), size="2", color_scheme="gray")),
            rx.vstack(
                _label("send_recipient", "send-recipient"),
                rx.hstack(
                    rx.input(id="send-recipient", value=s.recipient, on_change=s.set_recipient,
                             placeholder="0x…", aria_label=t("send_recipient"), size="3",
                             auto_complete="off", spell_check=False, font_family="var(--code-font-family)",
                             flex="1", min_width="0"),
                    qr_scan_button(messages=messages(), errors=error_messages(), on_scan=s.scanned),
                    width="100%",
                    align="center",
                    spacing="2",
                ),
                spacing="1",
                width="100%",
            ),
            rx.vstack(
                _label("send_amount", "send-amount"),
                rx.input(id="send-amount", value=s.amount, on_change=s.set_amount, placeholder="0.0",
                         aria_label=t("send_amount"), input_mode="decimal", size="3", auto_complete="off",
                         width="100%", style={"font-variant-numeric": "tabular-nums"}),
                spacing="1",
                width="100%",
            ),
            rx.button(
                rx.cond(s.building, rx.spinner(), rx.icon("arrow-up-right")),
                rx.cond(s.building, t("send_building"), t("send_submit")),
                type="submit", size="4", width="100%", disabled=s.building | ~s.loaded, margin_top="8px",
            ),
            spacing="4",
            width="100%",
        ),
        on_submit=s.submit,
        reset_on_submit=False,
        width="100%",
    )


def send_page() -> rx.Component:
    return page(
        rx.card(rx.cond(SendState.loaded, _form(), form_skeleton()), width="100%", size="3"),
        title_key="send_title",
    )
