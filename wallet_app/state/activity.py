"""/activity: the user's activity entries, newest first (services.activity.activities).

The summary is rendered in the user's language from the entry's structured fields with the
catalogue templates of the activity area; an unknown type falls back to the service's
English summary. Both languages are prepared on the server so a language switch re-renders
at once.
"""

from __future__ import annotations

import asyncio
import logging

import reflex as rx

from wallet_app import routes
from wallet_app.errors import AppError
from wallet_app.i18n import CATALOGUES, LANGUAGES
from wallet_app.services import activity, pending, transfers, txlink
from wallet_app.services.amounts import format_balance
from wallet_app.services.eth import short_address
from wallet_app.state.base import SignedInState, load_or_keep

log = logging.getLogger(__name__)

TYPES = ("transfer", "approve", "payment", "call", "cancel", "receive")  # receive: services.indexer
STATUSES = ("submitted", "ok", "failed", "replaced", "cancelled", "dropped")
REPLACE_KINDS = ("speedup", "cancel")
POLL_INTERVAL_S = 2.0
# Pending entries are re-read at most this often per page load (2 minutes): a send is ok once its
# block is the chain's index_confirmations deep (5 by default: about 72 s after it is sent on a
# chain of 12 s blocks), not at its first receipt.
POLL_MAX = 60


# ---------------------------------------------------------------- pure helpers (table-tested)


def _amount(entry: dict) -> str | None:
    try:
        decimals = int(entry["token_decimals"])
        # The full precision of the token: an activity states exactly what was sent.
        return format_balance(int(entry["amount"]), decimals, max_decimals=decimals)
    except (KeyError, TypeError, ValueError):
        return None


def render_summary(entry: dict, lang: str) -> str:
    """The entry's summary in `lang` from its structured fields."""
    texts = CATALOGUES[lang]
    kind = entry.get("type")
    if kind not in TYPES:
        return str(entry.get("summary") or kind or "")
    if kind == "cancel":
        return texts["activity_sum_cancel"].format(tx=short_address(entry.get("replaces_tx")))
    who = short_address(entry.get("counterparty"))
    amount = _amount(entry)
    if kind != "call" and amount is not None and who:
        text = texts[f"activity_sum_{kind}"].format(amount=amount, symbol=entry.get("token_symbol") or "", who=who)
        return " ".join(text.split())  # a missing symbol leaves no double space
    label = texts[f"activity_type_{kind}"]
    if kind == "call" and who:
        return texts["activity_sum_call"].format(who=who)
    return texts["activity_sum_with"].format(type=label, who=who) if who else label


def entry_view(entry: dict, known: list[str] | None = None) -> dict[str, str]:
    """An activity entry -> the strings the page shows (both languages). `known`: the addresses the
    user sent to (services.activity.known_counterparties); a transfer received from a look-alike of
    one of them is called out: its summary reads like the user's own send (4 + 4 hex digits shown),
    the bait of address poisoning."""
    kind = entry.get("type")
    status = entry.get("status")
    sender = str(entry.get("counterparty") or "")
    poisoned = kind == "receive" and bool(sender) and activity.recipient_risk(sender, known or []) == "lookalike"
    view = {
        "id": str(entry.get("id", "")),
        "status": status if status in STATUSES else "",
        "tx_hash": str(entry.get("tx_hash") or ""),
        "tx_short": short_address(entry.get("tx_hash")),
        "replaceable": "1" if entry.get("replaceable") and status == "submitted" else "",
        # a speed-up names the transaction it replaces (a cancel says it in its summary)
        "replaces_short": short_address(entry.get("replaces_tx")) if kind != "cancel" else "",
    }
    for lang in LANGUAGES:
        view[f"replaces_{lang}"] = (
            CATALOGUES[lang]["activity_replaces"].format(tx=view["replaces_short"]) if view["replaces_short"] else ""
        )
        view[f"type_{lang}"] = CATALOGUES[lang][f"activity_type_{kind}"] if kind in TYPES else str(kind or "")
        view[f"summary_{lang}"] = render_summary(entry, lang)
        view[f"warning_{lang}"] = CATALOGUES[lang]["activity_sender_lookalike"] if poisoned else ""
    return view


def _load(user) -> list[dict[str, str]] | None:
    """The entries' views; None while the database is out of reach (load_or_keep): the entries
    shown stay, and a pending one is polled on. An empty list there read as "No activity yet." and
    ended the polling: a pending send vanished from the page, inviting a second one."""

    def load() -> list[dict[str, str]]:
        known = activity.known_counterparties(user)
        return [entry_view(e, known) for e in activity.activities(user)]

    empty: list[dict[str, str]] = []
    return load_or_keep(log, "activity load", load, empty)


# ---------------------------------------------------------------- state


class ActivityState(SignedInState):
    loading: bool = True
    entries: rx.Field[list[dict[str, str]]] = rx.field(default_factory=list)
    _load_seq: int = 0

    @rx.event(background=True)
    async def load(self):
        async with self:
            user = await self._require_user()
            if user is None:
                return self._to_login()
            self._load_seq += 1
            seq = self._load_seq
            self.loading = True
        # Pending entries become ok/failed when their receipt arrives: re-read a bounded number of times.
        for _ in range(POLL_MAX):
            entries = await asyncio.to_thread(_load, user)
            async with self:
                if seq != self._load_seq:
                    return None  # a newer load took over
                if entries is not None:  # None: the database out of reach, the entries shown stay
                    self.entries = entries
                self.loading = False
                shown = self.entries
            if not any(e["status"] == "submitted" for e in shown):
                return None
            await asyncio.sleep(POLL_INTERVAL_S)
        return None

    @rx.event
    async def replace_tx(self, activity_id: str, kind: str):
        """Speed up or cancel a pending send: the replacement is built here (same nonce, a higher
        price) and signed on /sign, which shows what it replaces and the new fee."""
        if kind not in REPLACE_KINDS or pending.parse_activity_id(activity_id) is None:
            return
        user = await self._require_user()
        if user is None:
            yield self._to_login()
            return
        try:
            tx = await asyncio.to_thread(transfers.build_replacement, user, activity_id, kind)
            link = txlink.encode_tx(tx)
        except AppError as e:  # mined meanwhile, nonce taken: say so, show the list as it is now
            yield self._fail(e)
            yield ActivityState.load
            return
        yield rx.redirect(f"{routes.SIGN}?tx={link}&replace={activity_id}")
