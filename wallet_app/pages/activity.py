"""/activity : the user's activity entries, newest first (services.activity.activities).

The summary is rendered in the user's language from the entry's structured fields with the
catalogue templates of the activity area; an unknown type falls back to the service's
English summary. Both languages are prepared on the server so a language switch re-renders
at once.
"""

from __future__ import annotations

import asyncio
import logging

import reflex as rx

from wallet_app.components.layout import page
from wallet_app.i18n import CATALOGUES, LANGUAGES, t
from wallet_app.services import activity as activity_svc
from wallet_app.services.amounts import format_balance
from wallet_app.services.eth import short_address
from wallet_app.state.session import SessionState

log = logging.getLogger(__name__)

TYPES = ("transfer", "approve", "payment", "call")
STATUSES = ("submitted", "ok", "failed")
POLL_INTERVAL_S = 2.0
POLL_MAX = 15  # pending entries are re-read at most this often per page load (30 s)


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
    who = short_address(entry.get("counterparty"))
    amount = _amount(entry)
    if kind != "call" and amount is not None and who:
        text = texts[f"activity_sum_{kind}"].format(amount=amount, symbol=entry.get("token_symbol") or "", who=who)
        return " ".join(text.split())  # a missing symbol leaves no double space
    label = texts[f"activity_type_{kind}"]
    if kind == "call" and who:
        return texts["activity_sum_call"].format(who=who)
    return texts["activity_sum_with"].format(type=label, who=who) if who else label


def entry_view(entry: dict) -> dict[str, str]:
    """An activity entry -> the strings the page shows (both languages)."""
    kind = entry.get("type")
    status = entry.get("status")
    view = {
        "id": str(entry.get("id", "")),
        "status": status if status in STATUSES else "",
        "tx_hash": str(entry.get("tx_hash") or ""),
        "tx_short": short_address(entry.get("tx_hash")),
    }
    for lang in LANGUAGES:
        view[f"type_{lang}"] = CATALOGUES[lang][f"activity_type_{kind}"] if kind in TYPES else str(kind or "")
        view[f"summary_{lang}"] = render_summary(entry, lang)
    return view


def _load(user_id: int) -> list[dict[str, str]]:
    try:
        return [entry_view(e) for e in activity_svc.activities(user_id)]
    except Exception:  # noqa: BLE001 - a failed load shows the empty state, not a broken page
        log.exception("activity load failed")
        return []


# ---------------------------------------------------------------- state

class ActivityState(rx.State):
    loading: bool = True
    entries: list[dict[str, str]] = []
    _load_seq: int = 0

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
        # Pending entries become ok/failed when their receipt arrives: re-read a bounded number of times.
        for attempt in range(POLL_MAX):
            entries = await asyncio.to_thread(_load, user.id)
            async with self:
                if seq != self._load_seq:
                    return  # a newer load took over
                self.entries = entries
                self.loading = False
            if not any(e["status"] == "submitted" for e in entries):
                return
            await asyncio.sleep(POLL_INTERVAL_S)


# Events run on every load of this page, after the session check.
ON_LOAD: list = [ActivityState.load]


# ---------------------------------------------------------------- components

def _localized(item: rx.Var, field: str) -> rx.Var:
    return rx.cond(SessionState.lang == "ko", item[f"{field}_ko"], item[f"{field}_en"])


def _status_badge(status: rx.Var) -> rx.Component:
    def badge(value: str, color: str) -> tuple:
        return value, rx.badge(t(f"activity_status_{value}"), color_scheme=color, size="2", variant="soft",
                               class_name="activity-status")

    return rx.match(status, badge("ok", "green"), badge("failed", "red"), badge("submitted", "amber"),
                    rx.fragment())


def _entry(item: rx.Var) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.text(_localized(item, "type"), weight="bold", size="3", class_name="activity-type"),
                _status_badge(item["status"]),
                justify="between",
                align="center",
                width="100%",
            ),
            rx.text(_localized(item, "summary"), size="3", class_name="activity-summary",
                    style={"font_variant_numeric": "tabular-nums"}),
            rx.cond(
                item["tx_hash"] != "",
                rx.hstack(
                    rx.text(t("activity_tx"), size="2", color_scheme="gray"),
                    rx.code(item["tx_short"], size="2", variant="ghost", title=item["tx_hash"]),
                    spacing="2",
                    align="center",
                ),
            ),
            spacing="2",
            width="100%",
        ),
        width="100%",
        class_name="activity-entry",
    )


def _skeleton() -> rx.Component:
    return rx.card(
        rx.vstack(rx.skeleton(rx.text("Transfer"), width="90px"), rx.skeleton(rx.text("Sent 0 to 0x0000…0000"),
                                                                               width="220px"), spacing="2"),
        width="100%",
    )


def activity_page() -> rx.Component:
    s = ActivityState
    return page(
        rx.cond(
            s.loading,
            rx.vstack(_skeleton(), _skeleton(), width="100%", aria_busy="true"),
            rx.cond(
                s.entries.length() > 0,
                rx.vstack(rx.foreach(s.entries, _entry), spacing="3", width="100%", id="activity-list"),
                rx.text(t("activity_empty"), color_scheme="gray", id="activity-empty"),
            ),
        ),
        title_key="activity_title",
    )
