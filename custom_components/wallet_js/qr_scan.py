"""Python wrapper for qr_scan.jsx: the recipient field's QR-scan button and camera dialog."""

import reflex as rx

_LIBRARY = rx.asset("qr_scan.jsx", shared=True).importable_path
# qr_scan.jsx imports them; they must sit beside it in the compiled assets.
for _module in ("scan_text.js", "errors.js"):
    rx.asset(_module, shared=True)


class QrScanButton(rx.Component):
    """An icon button opening a camera dialog (rear camera preferred, ideal 1280x720).

    on_scan(text): an EIP-681 payment URI ("ethereum:…") whole and trimmed, else the first
    0x + 40 hex in the decoded text, else the trimmed text; the dialog has closed and the
    camera is stopped.
    on_error(text): a camera error's text from `errors` (also shown in the dialog, role=alert).
    messages keys: scan_qr, scan_hint, close.
    """

    library = _LIBRARY
    tag = "QrScanButton"
    lib_dependencies = ["jsqr@1.4.0"]

    messages: rx.Var[dict[str, str]]
    errors: rx.Var[dict[str, str]]  # error code -> text (wallet_app.i18n.error_messages())

    # EventHandler[spec] is typed for pyright only: mypy sees a non-generic class and a call in a type.
    on_scan: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]
    on_error: rx.EventHandler[rx.event.passthrough_event_spec(str)]  # type: ignore[type-arg, valid-type]


qr_scan_button = QrScanButton.create
