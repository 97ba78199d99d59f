"""Python wrapper for qr_scan.jsx: the recipient field's QR-scan button and camera dialog."""

import reflex as rx

_LIBRARY = rx.asset("qr_scan.jsx", shared=True).importable_path
# qr_scan.jsx imports it; it must sit beside it in the compiled assets.
rx.asset("scan_text.js", shared=True)


class QrScanButton(rx.Component):
    """An icon button opening a camera dialog (rear camera preferred, ideal 1280x720).

    on_scan(recipient): the first 0x + 40 hex in the decoded text, else the trimmed text;
    the dialog has closed and the camera is stopped.
    on_error(text): a camera error as catalogue text (also shown in the dialog, role=alert).
    messages keys: scan_qr, scan_hint, close, camera_permission, camera_not_found, camera_failed.
    """

    library = _LIBRARY
    tag = "QrScanButton"
    lib_dependencies = ["jsqr@1.4.0"]

    messages: rx.Var[dict[str, str]]

    on_scan: rx.EventHandler[rx.event.passthrough_event_spec(str)]
    on_error: rx.EventHandler[rx.event.passthrough_event_spec(str)]


qr_scan_button = QrScanButton.create
