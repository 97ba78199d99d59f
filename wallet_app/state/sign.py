"""/sign?tx=<base64url JSON>: the signature request.

The summary (asset transfer: symbol, name, token address, recipient, amount; other: the target
address) and the details come from the decoded link; services.txpreview adds the decoded lines
(approvals, native value, unknown calls), their warnings, the network fee and the chain's name,
and refuses links that must not be signed (the refusal is shown; the PIN dialog never opens).
The PIN dialog signs in the browser (legacy, EIP-155) and hands back only the raw transaction;
the server checks that it is the link's transaction field by field (txpreview.matches), its
sender and chain, that it still succeeds when the preview said it would (simulated again: the
balance may have changed meanwhile), broadcasts it and records the activity; then the tx hash and
/activity.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re

import reflex as rx

from wallet_app import routes
from wallet_app.core.config import get_settings
from wallet_app.errors import AppError, as_app_error
from wallet_app.i18n import CATALOGUES, LANGUAGES
from wallet_app.services import activity, pending, tokens, transfers, txlink, txpreview
from wallet_app.services import chain as chain_svc
from wallet_app.services.amounts import format_balance
from wallet_app.services.eth import checksum, short_address
from wallet_app.state.base import SignedInState
from wallet_app.state.session import texts_for

log = logging.getLogger(__name__)

_RAW_TX = re.compile(r"0x[0-9a-fA-F]{2,100000}")


def summarize(tx: dict[str, str], user_tokens: list[dict]) -> dict[str, str]:
    """The summary of a decoded tx: an ERC-20 transfer of a token in the user's list is an
    asset transfer; anything else is 'other' with its target address."""
    call = activity.decode_token_call(tx["data"])
    if call and call[0] == "transfer" and tx["value"] == "0":
        _, recipient, units = call
        for x in user_tokens:
            if str(x["chain_id"]) == tx["chain_id"] and x["token_address"].lower() == tx["to"].lower():
                decimals = x.get("token_decimals")
                if isinstance(decimals, int) and not isinstance(decimals, bool):
                    return {
                        "kind": "transfer",
                        "token_symbol": x["token_symbol"] or "",
                        "token_name": x["token_name"] or "",
                        "token_address": x["token_address"],
                        "recipient": checksum(recipient),
                        "amount": format_balance(units, decimals, max_decimals=decimals),
                        "token_decimals": str(decimals),
                    }
    return {
        "kind": "other",
        "token_symbol": "",
        "token_name": "",
        "token_address": "",
        "recipient": "",
        "amount": "",
        "token_decimals": "",
    }


def line_texts(line: txpreview.Line) -> dict[str, str]:
    """A preview line in every language ({"en": ..., "ko": ...})."""
    out = {}
    for lang in LANGUAGES:
        texts = CATALOGUES[lang]
        params = {k: texts[v] if k in line.keyed else v for k, v in line.params.items()}
        out[lang] = texts[line.key].format(**params)
    return out


class SignState(SignedInState):
    ready: bool = False
    tx: dict[str, str] = {}
    chain_name: str = ""
    summary: dict[str, str] = {}
    # The decoded preview (services.txpreview), each text in every language.
    lines: rx.Field[list[dict[str, str]]] = rx.field(default_factory=list)
    warnings: rx.Field[list[dict[str, str]]] = rx.field(default_factory=list)
    fee: str = ""
    selector: str = ""
    # Simulated balance changes ("-12.5 tUSD") and the simulation: ok | reverted | unavailable.
    changes: rx.Field[list[str]] = rx.field(default_factory=list)
    simulation: str = ""
    # A simulation that reverts: the user must tick this before the PIN dialog opens.
    fail_ack: bool = False
    # A refused link: its message in every language ({} when it may be signed).
    refusal: dict[str, str] = {}
    # The built transaction handed to the PIN dialog (public: it is unsigned).
    payload: str = ""
    pin_open: bool = False
    submitting: bool = False
    done: bool = False
    tx_hash: str = ""
    # A speed-up or cancel (/sign?tx=...&replace=<activity id>): the entry it replaces, what the
    # page says of it in every language, and the pending transaction's fee ({} / "" otherwise).
    replace_id: str = ""
    replacing: dict[str, str] = {}
    fee_was: str = ""

    @rx.var
    def kind_key(self) -> str:
        return "sign_kind_transfer" if self.summary.get("kind") == "transfer" else "sign_kind_other"

    @rx.var
    def pin_chain_id(self) -> int:
        """The link's chain id, for the PIN dialog's token lines (0 before a link is loaded)."""
        chain_id = self.tx.get("chain_id", "")
        return int(chain_id) if chain_id.isdigit() else 0

    @rx.var
    def pin_token_decimals(self) -> int:
        """The summary's token decimals, for the PIN dialog's token amount (-1 for none: a call
        of a token not in the user's list shows its amount in the token's smallest units)."""
        decimals = self.summary.get("token_decimals", "")
        return int(decimals) if decimals.isdigit() else -1

    @rx.var
    def refused(self) -> bool:
        return bool(self.refusal)

    @rx.var
    def blocked(self) -> bool:
        """Confirm cannot open the PIN dialog: refused, or expected to fail and not acknowledged."""
        return bool(self.refusal) or (self.simulation == "reverted" and not self.fail_ack)

    @rx.var
    def short_token(self) -> str:
        return short_address(self.summary.get("token_address", ""))

    @rx.event
    async def load(self):
        if self._page_again and self.ready:  # a reconnect: the preview and an open PIN dialog stay
            return None  # check_session, just before it, checked the session
        self.ready = self.pin_open = self.submitting = self.done = False
        self.tx, self.summary, self.payload, self.chain_name, self.tx_hash = {}, {}, "", "", ""
        self.lines, self.warnings, self.fee, self.selector, self.refusal = [], [], "", "", {}
        self.changes, self.simulation, self.fail_ack = [], "", False
        self.replace_id, self.replacing, self.fee_was = "", {}, ""
        user = await self._require_user()
        if user is None:
            return self._to_login()
        try:
            tx = txlink.decode_tx(self.router.url.query_parameters.get("tx", ""))
        except AppError as e:  # an alert and a redirect to /home (specification section 5)
            return self._fail(e, redirect_to=routes.HOME)
        try:
            chain = await asyncio.to_thread(tokens.get_chain, tx["chain_id"])
        except AppError as e:
            return self._fail(e, redirect_to=routes.HOME)
        try:
            user_tokens = await asyncio.to_thread(tokens.user_tokens, user)
        except AppError:
            user_tokens = []  # the summary falls back to 'other'
        replace = self.router.url.query_parameters.get("replace", "")
        if replace:
            try:  # mined meanwhile, or not this entry's nonce: say so on Activity, sign nothing
                context = await asyncio.to_thread(
                    pending.check_replacement, user, pending.unsigned(tx, user.address or ""), replace
                )
                fee_was = await asyncio.to_thread(pending.shown_old_fee, chain, context)
            except AppError as e:
                return self._fail(e, redirect_to=routes.ACTIVITY)
            key = "sign_replace_cancel" if context.kind == "cancel" else "sign_replace_speedup"
            params = {"tx": short_address(context.old_tx_hash), "nonce": context.nonce, "symbol": chain.native_symbol}
            self.replace_id, self.replacing, self.fee_was = replace, texts_for(key, params), fee_was
        settings = get_settings()
        if settings.dev_sign_preview_off and settings.dev_mode:  # bench/sign_preview.py's baseline
            preview, refused = txpreview.Preview([], [], "", chain.chain_name, ""), None
        else:
            preview, refused = await txpreview.load(user, chain, tx, replacing=bool(self.replace_id))
        self.tx = tx
        self.chain_name = preview.chain_name
        self.summary = summarize(tx, user_tokens)
        self.lines = [line_texts(x) for x in preview.lines]
        self.warnings = [line_texts(x) for x in preview.warnings]
        self.fee, self.selector = preview.fee, preview.selector
        if self.replace_id:  # next to the pending fee, at the same (full) precision
            self.fee = pending.fee_text(chain, int(tx["gas_limit"]), int(tx["gas_price"]), preview.l1_fee)
        self.changes, self.simulation = preview.changes, preview.simulation
        self.refusal = texts_for(refused.spec.key, refused.params) if refused else {}
        self.payload = json.dumps(tx, separators=(",", ":"))
        self.ready = True
        return None

    def _fails_now(self, user) -> bool:
        """Whether the link, previewed as succeeding, is simulated to revert now (a thread's: it reads
        the chain): the balance it spends changed since the preview (a gasless payment in another
        tab moves tokens without the account's nonce), and broadcast it is mined and reverts, its
        fee paid for nothing. A node that cannot simulate stops nothing (the preview said so)."""
        chain = tokens.get_chain(self.tx["chain_id"])
        return txpreview.simulate(chain, user.address or "", self.tx).status == "reverted"

    @rx.event
    def left(self):
        """The page was left (its request unmounted). The tab's state outlives it: the next /sign,
        another link, rendered this one's request (amount, recipient, Confirm enabled) until its
        own load, a preview that reads the chain, was done: for seconds on a slow node."""
        self.ready = self.pin_open = False

    @rx.event
    def open_pin(self):
        if self.ready and not self.blocked and not self.submitting and not self.done:
            self.pin_open = True

    @rx.event
    def set_fail_ack(self, value: bool):
        self.fail_ack = bool(value)

    @rx.event
    def close_pin(self):
        self.pin_open = False

    @rx.event
    async def signed(self, raw_tx: str):
        """The PIN dialog's result: the signed raw transaction (public)."""
        self.pin_open = False
        if not self.ready or self.blocked or self.submitting or self.done:
            return
        if not isinstance(raw_tx, str) or not _RAW_TX.fullmatch(raw_tx):
            return
        user = await self._require_user()
        if user is None:
            yield self._to_login()
            return
        try:  # the server's own check: what was signed is what the page showed
            if not txpreview.matches(chain_svc.decode_raw_tx(raw_tx), self.tx):
                raise AppError("sign_tx_mismatch", "the signed transaction differs from the link")
        except AppError as e:
            yield self._fail(e)
            return
        self.submitting = True
        yield
        if self.simulation != "reverted" and await asyncio.to_thread(self._fails_now, user):
            self.submitting = False
            yield self._fail(AppError("sign_fails_now"))
            return
        try:
            result = await asyncio.to_thread(transfers.submit_signed, user, raw_tx, self.replace_id or None)
        except Exception as e:  # noqa: BLE001 - any failure: its message, and Confirm usable again
            self.submitting = False
            yield self._fail(as_app_error(log, "submitting a send", e))
            return
        self.submitting = False
        self.done = True  # the nonce is spent: never offer to sign this one again
        self.tx_hash = result["tx_hash"]
        # The dialog has no room for 66 unbroken characters: short there, in full on the page.
        self._show_dialog("sign_submitted", short_address(self.tx_hash), ok_route=routes.ACTIVITY)
