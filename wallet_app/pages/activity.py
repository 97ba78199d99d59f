"""/activity: the list of entries (layout only; state: wallet_app/state/activity.py)."""

from __future__ import annotations

import reflex as rx
from reflex.vars import ObjectVar

from wallet_app import routes
from wallet_app.components.layout import page
from wallet_app.components.ui import NBSP
from wallet_app.i18n import t
from wallet_app.routes import NavEntry, Page
from wallet_app.state.activity import ActivityState
from wallet_app.state.session import SessionState

# ---------------------------------------------------------------- components


def _localized(item: ObjectVar[dict[str, str]], field: str) -> rx.Var:
    return rx.cond(SessionState.lang == "ko", item[f"{field}_ko"], item[f"{field}_en"])


def _status_badge(status: rx.Var) -> rx.Component:
    def badge(value: str, color: str) -> tuple:
        return value, rx.badge(
            t(f"activity_status_{value}"), color_scheme=color, size="2", variant="soft", class_name="activity-status"
        )

    return rx.match(
        status,
        badge("ok", "green"),
        badge("failed", "red"),
        badge("submitted", "amber"),
        badge("replaced", "gray"),
        badge("cancelled", "gray"),
        badge("dropped", "gray"),
        rx.fragment(),
    )


def _summary_id(item: ObjectVar[dict[str, str]]) -> rx.Var:
    return f"activity-summary-{item['id']}"  # type: ignore[return-value]


def _replace_buttons(item: ObjectVar[dict[str, str]]) -> rx.Component:
    """Speed up / Cancel on a pending send (the newest of its nonce): both go on to /sign. Each
    is described by its entry's summary: with two sends pending, a screen reader moving from
    button to button hears which send each one speeds up or cancels, not "Speed up" twice."""
    return rx.cond(
        item["replaceable"] != "",
        rx.hstack(
            rx.button(
                rx.icon("fast-forward", size=16),
                t("activity_speed_up"),
                size="2",
                variant="soft",
                on_click=ActivityState.replace_tx(item["id"], "speedup"),  # type: ignore[operator]
                class_name="activity-speed-up",
                aria_describedby=_summary_id(item),
            ),
            rx.button(
                rx.icon("ban", size=16),
                t("activity_cancel_tx"),
                size="2",
                variant="soft",
                color_scheme="gray",
                on_click=ActivityState.replace_tx(item["id"], "cancel"),  # type: ignore[operator]
                class_name="activity-cancel",
                aria_describedby=_summary_id(item),
            ),
            spacing="2",
            width="100%",
        ),
    )


def _entry(item: ObjectVar[dict[str, str]]) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.text(_localized(item, "type"), weight="bold", size="3", class_name="activity-type"),
                _status_badge(item["status"]),
                justify="between",
                align="center",
                width="100%",
            ),
            rx.text(
                _localized(item, "summary"),
                size="3",
                class_name="activity-summary",
                id=_summary_id(item),
                # Wrapped, never cut at the card's edge: an entry states its whole amount.
                style={"font_variant_numeric": "tabular-nums", "overflow_wrap": "anywhere"},
            ),
            rx.cond(
                item["warning_en"] != "",
                rx.callout.root(
                    rx.callout.icon(rx.icon("triangle-alert")),
                    rx.callout.text(_localized(item, "warning")),
                    color_scheme="orange",
                    size="1",
                    width="100%",
                    class_name="activity-warning",
                ),
            ),
            rx.cond(
                item["replaces_short"] != "",
                rx.text(_localized(item, "replaces"), size="2", color_scheme="gray", class_name="activity-replaces"),
            ),
            rx.cond(
                item["tx_hash"] != "",
                rx.hstack(
                    rx.text(t("activity_tx"), size="2", color_scheme="gray"),
                    rx.code(item["tx_short"], size="2", variant="ghost", title=item["tx_hash"]),
                    spacing="2",
                    align="center",
                ),
            ),
            _replace_buttons(item),
            spacing="2",
            width="100%",
        ),
        width="100%",
        class_name="activity-entry",
    )


def _skeleton() -> rx.Component:
    return rx.card(
        rx.vstack(
            # A line's height, in no language: the skeleton's width is set.
            rx.skeleton(rx.text(NBSP), width="90px"),
            rx.skeleton(rx.text(NBSP), width="220px"),
            spacing="2",
        ),
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
        title_key=PAGE.title_key,
    )


PAGE = Page(
    route=routes.ACTIVITY,
    title_key="activity_title",
    view=activity_page,
    nav=NavEntry("nav_activity", "list", 3),
    on_load=(ActivityState.load,),
)
