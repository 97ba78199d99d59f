"""The /home token list (balances) and the add-token dialog.

Balances come from services.tokens.asset_balances (one aggregated eth_call per chain), read in
a background event so the page renders at once with skeleton rows. A failed load shows an
empty list (specification section 8).
"""

from __future__ import annotations

import asyncio
import logging

import reflex as rx

from wallet_app.components.dialogs import selector
from wallet_app.components.ui import label_row
from wallet_app.i18n import t, t_var
from wallet_app.services import tokens as token_svc
from wallet_app.services.amounts import format_balance
from wallet_app.errors import AppError
from wallet_app.state.session import SessionState

log = logging.getLogger(__name__)

MAX_ADDRESS_INPUT = 100  # longer than any address: the service refuses it with invalid_address
# Service codes with their own text; every other code shows add_token_err_other plus the code.
ADD_TOKEN_ERRORS = ("invalid_address", "not_a_contract", "not_erc20", "unsupported_chain", "rpc_unavailable")


# ---------------------------------------------------------------- pure helpers (table-tested)

def balance_rows(items: list[dict]) -> list[dict[str, str]]:
    """Token balance items -> display rows (all strings, balance formatted for display)."""
    rows = []
    for item in items:
        try:
            balance = format_balance(item["balance"], int(item["token_decimals"]))
        except (KeyError, TypeError, ValueError):
            continue  # a malformed item is left out rather than breaking the list
        rows.append({
            "key": f"{item.get('chain_id')}:{item.get('token_address')}",
            "symbol": str(item.get("token_symbol") or ""),
            "name": str(item.get("token_name") or ""),
            "chain": str(item.get("chain_name") or ""),
            "balance": balance,
        })
    return rows


def add_token_error_key(code: str | None) -> str:
    """Machine code of a refused probe/add -> catalogue key."""
    if code == "invalid_chain_id":
        return "add_token_select_network"
    if code in ADD_TOKEN_ERRORS:
        return f"add_token_err_{code}"
    return "add_token_err_other"


def _error_code(e: Exception) -> str:
    if isinstance(e, AppError):
        return e.code
    log.exception("add-token call failed")
    return "error"


def _load_rows(user_id: int) -> list[dict[str, str]]:
    try:
        return balance_rows(token_svc.asset_balances(user_id))
    except Exception:  # noqa: BLE001 - any failure: an empty list, never a broken page
        log.exception("token list load failed")
        return []


# ---------------------------------------------------------------- state

class TokenListState(rx.State):
    loading: bool = True
    rows: list[dict[str, str]] = []
    # Only the newest load writes its result (a refresh may overtake a slow load).
    _load_seq: int = 0

    # The add-token dialog.
    add_open: bool = False
    chains: list[list[str]] = []  # (chain_id, chain_name) pairs for the selector
    chain_id: str = ""
    token_address: str = ""
    busy: bool = False
    error_key: str = ""
    error_detail: str = ""
    probed: bool = False
    meta_name: str = ""
    meta_symbol: str = ""
    meta_decimals: str = ""

    @rx.event(background=True)
    async def load(self):
        async with self:
            session = await self.get_state(SessionState)
            user = session._user()
            if user is None:
                return session._expired()
            self._load_seq += 1
            seq = self._load_seq
            self.loading = True
        rows = await asyncio.to_thread(_load_rows, user.id)
        async with self:
            if seq == self._load_seq:
                self.rows = rows
                self.loading = False

    # -- add-token dialog

    def _reset_probe(self) -> None:
        self.probed = False
        self.meta_name = self.meta_symbol = self.meta_decimals = ""
        self.error_key = self.error_detail = ""

    def _fail(self, code: str | None) -> None:
        self.error_key = add_token_error_key(code)
        self.error_detail = "" if self.error_key != "add_token_err_other" else str(code or "")[:100]

    @rx.event
    async def open_add(self):
        session = await self.get_state(SessionState)
        if session._user() is None:
            return session._expired()
        self.token_address = ""
        self._reset_probe()
        try:
            chains = await asyncio.to_thread(token_svc.list_chains)
        except AppError as e:
            chains = []
            self._fail(e.code)
        self.chains = [[str(c["chain_id"]), c["chain_name"]] for c in chains]
        if self.chain_id not in {c[0] for c in self.chains}:
            self.chain_id = self.chains[0][0] if self.chains else ""
        self.add_open = True

    @rx.event
    def set_add_open(self, value: bool):
        if not self.busy:  # closing is blocked while a probe/add runs
            self.add_open = bool(value)

    @rx.event
    def set_chain_id(self, value: str):
        if isinstance(value, str) and value in {c[0] for c in self.chains} and not self.busy:
            self.chain_id = value
            self._reset_probe()

    async def _begin(self, reset: bool):
        """Checks the session and the inputs; returns (user, None) or (None, event to return)."""
        session = await self.get_state(SessionState)
        user = session._user()
        if user is None:
            return None, session._expired()
        if reset:
            self._reset_probe()
        self.error_key = self.error_detail = ""
        if not self.chain_id:
            self.error_key = "add_token_select_network"
            return None, None
        if not self.token_address.strip():  # empty would mean the native coin: ask for an address
            self.error_key = "add_token_err_invalid_address"
            return None, None
        self.busy = True
        return user, None

    @rx.event(background=True)
    async def submit(self, form_data: dict):
        """The form's one button: Probe, or Add once the same address was probed (an edited
        address is probed again). The address comes from the form itself."""
        value = form_data.get("token_address") if isinstance(form_data, dict) else None
        if not isinstance(value, str):
            return
        value = value[:MAX_ADDRESS_INPUT]
        async with self:
            if self.busy:
                return
            adding = self.probed and value == self.token_address
            self.token_address = value
            user, event = await self._begin(reset=not adding)
            if user is None:
                return event
            chain_id = self.chain_id
        try:
            if adding:
                result = await asyncio.to_thread(token_svc.add_token, user.id, chain_id, value)
            else:
                result = await asyncio.to_thread(token_svc.token_metadata, chain_id, value)
            code = None
        except Exception as e:  # noqa: BLE001 - busy must always be cleared
            result, code = None, _error_code(e)
        async with self:
            self.busy = False
            if (chain_id, value) != (self.chain_id, self.token_address):
                return  # the inputs changed meanwhile
            if code is not None:
                self._fail(code)
                return
            if not adding:
                self.probed = True
                self.meta_name = result["token_name"]
                self.meta_symbol = result["token_symbol"]
                self.meta_decimals = str(result["token_decimals"])
                return
            self.add_open = False
            self.token_address = ""
        return TokenListState.load


# ---------------------------------------------------------------- components

def _skeleton_row() -> rx.Component:
    return rx.hstack(
        rx.vstack(rx.skeleton(rx.text("tUSD"), width="64px"), rx.skeleton(rx.text("Token name"), width="140px"),
                  spacing="1"),
        rx.skeleton(rx.text("0.00"), width="72px"),
        justify="between", align="center", width="100%", padding_y="10px",
    )


def _token_row(row: rx.Var) -> rx.Component:
    return rx.hstack(
        rx.vstack(
            rx.text(row["symbol"], weight="bold", size="3"),
            rx.text(row["name"], " · ", row["chain"], size="2", color_scheme="gray", trim="both"),
            spacing="1",
            min_width="0",
        ),
        rx.text(row["balance"], size="4", weight="medium", text_align="right",
                style={"font_variant_numeric": "tabular-nums"}, class_name="token-balance"),
        justify="between",
        align="center",
        width="100%",
        min_height="56px",
        padding_y="8px",
        border_bottom="1px solid var(--gray-a4)",
        class_name="token-row",
        custom_attrs={"data-symbol": row["symbol"]},
    )


def token_list() -> rx.Component:
    s = TokenListState
    return rx.vstack(
        rx.hstack(
            rx.heading(t("tokens"), size="4", as_="h2"),
            rx.hstack(
                rx.icon_button(rx.icon("refresh-cw"), variant="ghost", size="3", aria_label=t("assets_refresh"),
                               on_click=s.load, disabled=s.loading),
                rx.button(rx.icon("plus"), t("add_token"), variant="soft", size="3", on_click=s.open_add),
                spacing="3",
                align="center",
            ),
            justify="between",
            align="center",
            width="100%",
        ),
        rx.cond(
            s.loading,
            rx.vstack(_skeleton_row(), _skeleton_row(), spacing="0", width="100%", aria_busy="true"),
            rx.cond(
                s.rows.length() > 0,
                rx.vstack(rx.foreach(s.rows, _token_row), spacing="0", width="100%", id="token-list"),
                rx.text(t("tokens_empty"), color_scheme="gray", id="token-list-empty"),
            ),
        ),
        add_token_dialog(),
        spacing="2",
        width="100%",
    )


def _meta_line(label_key: str, value: rx.Var) -> rx.Component:
    return label_row(label_key, rx.text(value, size="2", weight="medium"))


def _address_form() -> rx.Component:
    s = TokenListState
    return rx.form(
        rx.vstack(
            rx.text(t("add_token_network"), size="2", weight="medium"),
            selector(s.chains, s.chain_id, s.set_chain_id, t("add_token_network"), disabled=s.busy),
            rx.text(t("add_token_address"), size="2", weight="medium", as_="label", html_for="add-token-address"),
            # Uncontrolled: the address travels only with the form's submit, so no late keystroke
            # event can overtake a probe (submit compares it with the probed one).
            rx.input(default_value=s.token_address, id="add-token-address",
                     name="token_address", placeholder=t("add_token_address_hint"), size="3", width="100%",
                     disabled=s.busy, font_family="var(--code-font-family)", auto_complete="off",
                     spell_check=False, auto_capitalize="off"),
            rx.cond(
                s.error_key != "",
                rx.callout.root(
                    rx.callout.icon(rx.icon("triangle-alert")),
                    rx.callout.text(t_var(s.error_key), " ", s.error_detail),
                    color_scheme="red", role="alert", width="100%", id="add-token-error",
                ),
            ),
            rx.cond(
                s.probed,
                rx.card(
                    rx.vstack(_meta_line("add_token_name", s.meta_name),
                              _meta_line("add_token_symbol", s.meta_symbol),
                              _meta_line("add_token_decimals", s.meta_decimals),
                              spacing="2", width="100%"),
                    width="100%", id="add-token-meta",
                ),
            ),
            rx.cond(s.busy, rx.hstack(rx.spinner(), rx.text(t("add_token_probing"), size="2"), role="status")),
            spacing="3",
            width="100%",
        ),
        rx.flex(
            rx.dialog.close(rx.button(t("cancel"), size="3", variant="soft", color_scheme="gray",
                                      disabled=s.busy, type="button")),
            rx.button(rx.cond(s.probed, t("add_token_add"), t("add_token_probe")), size="3", type="submit",
                      disabled=s.busy),
            gap="3",
            justify="end",
            margin_top="16px",
        ),
        on_submit=s.submit,
        reset_on_submit=False,
    )


def add_token_dialog() -> rx.Component:
    s = TokenListState
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(t("add_token_title")),
            _address_form(),
            max_width="420px",
        ),
        open=s.add_open,
        on_open_change=s.set_add_open,
    )
