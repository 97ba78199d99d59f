"""/home: the receive dialog, the token list (balances) and the add-token dialog.

Receive shows the address QR; choosing one of the user's tokens (and optionally an amount)
turns it into an EIP-681 payment request QR, "ethereum:<token>@<chain>/transfer?address=<me>
&uint256=<units>" (issue 14 item 5), that the payer's wallet fills its send form from.

Balances come from services.tokens.asset_balances (one aggregated eth_call per chain), read in
a background event so the page renders at once with skeleton rows. A failed load shows an
empty list (specification section 8). A chain whose node does not answer is named in a notice,
and the rows of it already shown stay: an empty list there read as "No tokens yet."
"""

from __future__ import annotations

import asyncio
import logging

import reflex as rx

from wallet_app.errors import AppError
from wallet_app.services import tokens, typed
from wallet_app.services.amounts import format_balance, format_units, parse_units
from wallet_app.services.eth import is_zero
from wallet_app.services.payment_uri import build_transfer_uri
from wallet_app.state.base import SignedInState, load_or_keep
from wallet_app.state.session import texts_for

log = logging.getLogger(__name__)

MAX_ADDRESS_INPUT = 100  # longer than any address: the service refuses it with invalid_address


def balance_rows(items: list[dict]) -> list[dict[str, str]]:
    """Token balance items -> display rows (all strings, balance formatted for display)."""
    rows = []
    for item in items:
        try:
            balance = format_balance(item["balance"], int(item["token_decimals"]))
        except (KeyError, TypeError, ValueError):
            continue  # a malformed item is left out rather than breaking the list
        rows.append(
            {
                "key": f"{item.get('chain_id')}:{item.get('token_address')}",
                "chain_id": str(item.get("chain_id")),
                "symbol": str(item.get("token_symbol") or ""),
                "name": str(item.get("token_name") or ""),
                "chain": str(item.get("chain_name") or ""),
                "balance": balance,
            }
        )
    return rows


def merge_rows(shown: list[dict[str, str]], fresh: list[dict[str, str]], unavailable: set[str]) -> list[dict[str, str]]:
    """The rows to show after a load: `fresh`, but the rows shown of the chains (chain_id) that
    could not be read stay as they were; in the order shown, then the rows new to the list."""
    fresh_by_key = {r["key"]: r for r in fresh}
    rows = []
    for row in shown:
        if row["chain_id"] in unavailable:
            rows.append(row)
        elif row["key"] in fresh_by_key:
            rows.append(fresh_by_key.pop(row["key"]))
    return rows + [r for r in fresh if r["key"] in fresh_by_key]


def unavailable_texts(chains: list[dict]) -> dict[str, str]:
    """The token list's notice (lang -> text) naming the chains whose balances could not be read;
    none: {}."""
    if not chains:
        return {}
    return texts_for("assets_unavailable", {"chains": ", ".join(str(c["chain_name"]) for c in chains)})


RowsRead = tuple[list[dict[str, str]], list[dict]]  # the rows, the chains not read (unavailable_texts)


def _load_rows(user) -> RowsRead | None:
    """The token list's rows and the chains that could not be read (services.tokens.Balances);
    None when the user's balance reads are over their rate limit or the database is out of reach
    for now (load_or_keep: the rows shown stay, an empty list reads as no tokens)."""

    def load() -> RowsRead | None:
        try:
            found = tokens.asset_balances(user)
        except AppError as e:
            if e.code == "rate_limited":
                return None
            raise
        return balance_rows(found.items), found.unavailable

    empty: RowsRead = ([], [])
    return load_or_keep(log, "token list load", load, empty)


ADDRESS_ONLY = "address"  # the Receive token selector's first item: the plain address QR


def receive_token_items(user_tokens: list[dict]) -> list[list[str]]:
    """[key, label] of the tokens a payment request can name: the ERC-20s of the user's list
    (a request for the native coin would be one this wallet's own Send refuses)."""
    return [
        [f"{x['chain_id']}:{x['token_address']}", f"{x['token_symbol']} · {x['chain_name']}"]
        for x in user_tokens
        if not is_zero(str(x["token_address"]))
    ]


def receive_request(owner: str, token: dict | None, amount: str) -> tuple[str, dict[str, str]]:
    """(the QR's text, the request's summary params): the EIP-681 transfer URI to `owner` for
    `token` (an entry of the user's list) and `amount` (decimal text; empty: none, the payer
    types it). No token: ("", {}), the plain address QR. A bad amount raises the amount parser's
    AppError (amount_empty never: empty is allowed); zero is invalid_amount."""
    if token is None or not owner:
        return "", {}
    text = typed.plain(amount or "").strip()
    units = parse_units(text, int(token["token_decimals"])) if text else None
    if units == 0:
        raise AppError("invalid_amount", "a payment request for 0")
    uri = build_transfer_uri(token["token_address"], int(token["chain_id"]), owner, units)
    shown = format_units(units, int(token["token_decimals"])) if units is not None else ""
    return uri, {"amount": shown, "symbol": str(token["token_symbol"]), "chain": str(token["chain_name"])}


def copycat_texts(copied: dict | None, symbol: str = "") -> dict[str, str]:
    """The add-token dialog's warning (lang -> text) about a probed token whose symbol looks like
    that of `copied`, a token of the user's list at another address (services.tokens.copycat), or
    whose `symbol` has letters of other scripts that may be drawn like Latin ones."""
    if copied is not None:
        return texts_for("add_token_copycat", {"symbol": copied["token_symbol"], "address": copied["token_address"]})
    if tokens.unfamiliar_symbol(symbol):
        return texts_for("add_token_unfamiliar", {"symbol": symbol})
    return {}


class HomeState(SignedInState):
    receive_open: bool = False
    # The Receive dialog's payment request: a token key of receive_tokens (or ADDRESS_ONLY) and an amount.
    receive_tokens: list[list[str]] = []
    _receive_tokens: list[dict] = []
    receive_token: str = ADDRESS_ONLY
    receive_amount: str = ""
    receive_uri: str = ""  # "" : the plain address QR
    receive_summary: rx.Field[dict[str, str]] = rx.field(default_factory=dict)  # lang -> text
    receive_error: rx.Field[dict[str, str]] = rx.field(default_factory=dict)  # lang -> text

    @rx.event
    async def set_receive_open(self, value: bool):
        """Opening starts from the plain address QR, with the user's tokens to choose from."""
        if not value:
            self.receive_open = False
            return None
        user = await self._require_user()
        if user is None:
            return self._to_login()
        self._apply(user)  # the account's address now: another tab may have replaced the wallet
        self.receive_token, self.receive_amount = ADDRESS_ONLY, ""
        self._update_request()
        self.receive_open = True
        try:
            self._receive_tokens = await asyncio.to_thread(tokens.user_tokens, user)
        except AppError:
            self._receive_tokens = []  # the address QR still works
        self.receive_tokens = receive_token_items(self._receive_tokens)
        return None

    @rx.event
    def set_receive_token(self, value: str):
        if isinstance(value, str) and (value == ADDRESS_ONLY or value in {k for k, _ in self.receive_tokens}):
            self.receive_token = value
            self._update_request()

    @rx.event
    def set_receive_amount(self, value: str):
        if isinstance(value, str):
            self.receive_amount = value[:MAX_ADDRESS_INPUT]
            self._update_request()

    def _update_request(self) -> None:
        token = next(
            (x for x in self._receive_tokens if f"{x['chain_id']}:{x['token_address']}" == self.receive_token), None
        )
        self.receive_error = {}
        try:
            self.receive_uri, params = receive_request(self.address, token, self.receive_amount)
        except AppError as e:
            self.receive_uri, params = "", {}
            self.receive_error = texts_for(e.spec.key, e.params)
        key = "receive_request_amount" if params.get("amount") else "receive_request_any"
        self.receive_summary = texts_for(key, params) if params else {}


class TokenListState(SignedInState):
    loading: bool = True
    rows: rx.Field[list[dict[str, str]]] = rx.field(default_factory=list)
    _rows_owner: str = ""  # the address the rows are of (a wallet replaced in another tab: none kept)
    # The chains whose balances could not be read at the last load (unavailable_texts): lang -> text.
    unavailable: rx.Field[dict[str, str]] = rx.field(default_factory=dict)
    # Only the newest load writes its result (a refresh may overtake a slow load).
    _load_seq: int = 0

    # The add-token dialog. Its error shows inside it: the code's registry text, every language.
    add_open: bool = False
    chains: list[list[str]] = []  # (chain_id, chain_name) pairs for the selector
    chain_id: rx.Field[str] = rx.field("")
    token_address: str = ""
    busy: bool = False
    add_error: rx.Field[dict[str, str]] = rx.field(default_factory=dict)
    probed: bool = False
    meta_name: rx.Field[str] = rx.field("")
    meta_symbol: rx.Field[str] = rx.field("")
    meta_decimals: rx.Field[str] = rx.field("")
    meta_warning: rx.Field[dict[str, str]] = rx.field(default_factory=dict)  # lang -> text (copycat_texts)
    # What the probe showed, for add_token to check the token still answers it (services.tokens.add_token).
    _shown: dict = {}

    @rx.event(background=True)
    async def load(self):
        async with self:
            user = await self._require_user()
            if user is None:
                return self._to_login()
            self._load_seq += 1
            seq = self._load_seq
            self.loading = True
        loaded = await asyncio.to_thread(_load_rows, user)
        async with self:
            if seq == self._load_seq:
                if loaded is not None:  # None: the rows and notice shown stay
                    rows, unavailable = loaded
                    shown = self.rows if self._rows_owner == user.address else []
                    self.rows = merge_rows(shown, rows, {str(c["chain_id"]) for c in unavailable})
                    self._rows_owner = user.address or ""
                    self.unavailable = unavailable_texts(unavailable)
                self.loading = False
        return None

    # -- add-token dialog

    def _reset_probe(self) -> None:
        self.probed = False
        self.meta_name = self.meta_symbol = self.meta_decimals = ""
        self.meta_warning = {}
        self._shown = {}
        self.add_error = {}

    def _add_failed(self, error: AppError) -> None:
        self.add_error = texts_for(error.spec.key, error.params)

    @rx.event
    async def open_add(self):
        if await self._require_user() is None:
            return self._to_login()
        self.token_address = ""
        self._reset_probe()
        try:
            chains = await asyncio.to_thread(tokens.list_chains)
        except AppError as e:
            chains = []
            self._add_failed(e)
        self.chains = [[str(c["chain_id"]), c["chain_name"]] for c in chains]
        if self.chain_id not in {c[0] for c in self.chains}:
            self.chain_id = self.chains[0][0] if self.chains else ""
        self.add_open = True
        return None

    @rx.event
    def set_add_open(self, value: bool):
        if not self.busy:  # closing is blocked while a probe/add runs
            self.add_open = bool(value)

    @rx.event
    def set_chain_id(self, value: str):
        if isinstance(value, str) and value in {c[0] for c in self.chains} and not self.busy:
            self.chain_id = value
            self._reset_probe()

    @rx.event(background=True)
    async def submit(self, form_data: dict):
        """The form's one button: Probe, or Add once the same address was probed (an edited
        address is probed again). The address comes from the form itself."""
        value = form_data.get("token_address") if isinstance(form_data, dict) else None
        if not isinstance(value, str):
            return None
        value = value[:MAX_ADDRESS_INPUT]
        async with self:
            if self.busy:
                return None
            adding = self.probed and value == self.token_address
            self.token_address = value
            user = await self._require_user()
            if user is None:
                return self._to_login()
            if not adding:
                self._reset_probe()
            self.add_error = {}
            if not self.chain_id:
                self._add_failed(AppError("invalid_chain_id"))
                return None
            # As typed or pasted, less what no one sees (services.typed).
            address = typed.address(value)
            if not address:  # empty would mean the native coin: ask for an address
                self._add_failed(AppError("invalid_address"))
                return None
            self.busy = True
            chain_id = self.chain_id
            shown = dict(self._shown)
        result, error, copied = None, None, None
        try:
            if adding:
                result = await asyncio.to_thread(tokens.add_token, user, chain_id, address, shown)
            else:
                result = await asyncio.to_thread(tokens.token_metadata, user, chain_id, address)
                copied = await asyncio.to_thread(tokens.copycat, user, chain_id, address, result["token_symbol"])
        except AppError as e:
            error = e
        except Exception:  # noqa: BLE001 - busy must always be cleared
            log.exception("add-token call failed")
            error = AppError("rpc_unavailable")
        async with self:
            self.busy = False
            if (chain_id, value) != (self.chain_id, self.token_address):
                return None  # the inputs changed meanwhile
            if error is not None:
                if error.code == "token_changed":
                    self._reset_probe()  # the button probes again: the user sees what it answers now
                self._add_failed(error)
                return None
            if not adding and result is not None:
                self.probed = True
                self.meta_name = result["token_name"]
                self.meta_symbol = result["token_symbol"]
                self.meta_decimals = str(result["token_decimals"])
                self.meta_warning = copycat_texts(copied, result["token_symbol"])
                self._shown = {**result, "warned": bool(self.meta_warning)}
                return None
            self.add_open = False
            self.token_address = ""
        return TokenListState.load
