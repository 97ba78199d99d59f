"""Python side of focus.js: its dialog focus handlers for Reflex's own dialogs (rx.dialog,
rx.alert_dialog); the JS dialogs (wallet.jsx, backup_ui.jsx) import them directly."""

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
