"""Python wrappers for backup_ui.jsx: the Drive backup button (settings), the restore dialog
(device check) and LocalTime. The PIN and the Drive access token stay in JS."""

import reflex as rx

_LIBRARY = rx.asset("backup_ui.jsx", shared=True).importable_path
# The modules backup_ui.jsx imports (directly, through backup.js or through wallet.jsx, whose
# PinModal it shares) beside it in the assets.
for _module in (
    "wallet.jsx",
    "keyring.js",
    "drive.js",
    "backup.js",
    "vault.js",
    "kdf.js",
    "bytes.js",
    "errors.js",
    "focus.js",
):
    rx.asset(_module, shared=True)

_NPM = ["ethers@6.17.0", "qrcode@1.5.4"]


class BackupButton(rx.Component):
    """'Back up' + PIN dialog: Drive token (on Confirm, for the `login_hint` account), runBackup,
    touchBackup; on_done('ok')."""

    library = _LIBRARY
    tag = "BackupButton"
    lib_dependencies = _NPM

    owner: rx.Var[str]
    client_id: rx.Var[str]
    # The signed-in Google account (e-mail): GIS login_hint of the Drive token request.
    login_hint: rx.Var[str]
    dev_mode: rx.Var[bool]
    messages: rx.Var[dict[str, str]]
    errors: rx.Var[dict[str, str]]  # error code -> text (wallet_app.i18n.error_messages())

    # EventHandler[spec] is typed for pyright only: mypy sees a non-generic class and a call in a type.
    on_done: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]


class RestoreDialog(rx.Component):
    """New-device notices + PIN prompt; on_result('ok' | 'NO_BACKUP' | 'ADDRESS_MISMATCH' |
    'error:<text>', the text from `errors`, a failed Google script load included). An invalid
    PIN is shown in the dialog, which stays open."""

    library = _LIBRARY
    tag = "RestoreDialog"
    lib_dependencies = _NPM

    open: rx.Var[bool]
    owner: rx.Var[str]
    client_id: rx.Var[str]
    login_hint: rx.Var[str]  # as BackupButton's
    dev_mode: rx.Var[bool]
    messages: rx.Var[dict[str, str]]
    errors: rx.Var[dict[str, str]]  # error code -> text (wallet_app.i18n.error_messages())

    on_result: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]
    on_close: rx.EventHandler[rx.event.no_args_event_spec]  # type: ignore[type-arg, valid-type]


class LocalTime(rx.Component):
    """Epoch seconds in the locale's date/time format, or `empty` (a dash) when seconds <= 0."""

    library = _LIBRARY
    tag = "LocalTime"

    seconds: rx.Var[int]
    locale: rx.Var[str]
    empty: rx.Var[str]


backup_button = BackupButton.create
restore_dialog = RestoreDialog.create
local_time = LocalTime.create
