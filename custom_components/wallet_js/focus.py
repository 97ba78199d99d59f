"""Python side of focus.js: its dialog focus handlers for Reflex's own dialogs (rx.dialog,
rx.alert_dialog), which the JS dialogs (wallet.jsx, backup_ui.jsx) import directly, and its
keydown handler for a form (a held Enter submits once)."""

import reflex as rx
from reflex.utils.imports import ImportVar
from reflex.vars.base import Var, VarData
from reflex.vars.function import FunctionStringVar

_LIBRARY = rx.asset("focus.js", shared=True).importable_path


def _handler(name: str) -> Var:
    return FunctionStringVar.create(name, _var_data=VarData(imports={_LIBRARY: [ImportVar(tag=name)]}))


def dialog_focus() -> dict[str, Var]:
    """Props for a dialog's content: focus goes to its [data-autofocus] element (else the first
    focusable one) when it opens, and back to what opened it when it closes."""
    return {"on_open_auto_focus": _handler("dialogOpened"), "on_close_auto_focus": _handler("dialogClosed")}


def held_enter_ignored() -> dict[str, dict[str, Var]]:
    """Props for a form (rx.form has no on_key_down trigger: its React prop, as an attribute):
    the repeats of a held Enter do not submit it again."""
    return {"custom_attrs": {"onKeyDown": _handler("heldEnterIgnored")}}
