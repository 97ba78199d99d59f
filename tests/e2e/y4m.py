"""A Y4M video with a QR code in every frame, for Chromium's fake camera
(--use-file-for-fake-video-capture). 640x480, C420jpeg, grey (U = V = 128).
The fake device delivers the file's own size and ignores `ideal` constraints;
this layout decodes with jsQR on the scanner's first 500 ms tick (design.md section 5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import qrcode

WIDTH, HEIGHT = 640, 480


def qr_frame(text: str, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """The luma plane: a black-on-white QR code (4-module quiet zone) centred on white."""
    qr = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, border=4)
    qr.add_data(text)
    qr.make(fit=True)
    modules = np.array(qr.get_matrix(), dtype=bool)  # includes the border
    scale = max(1, min(width, height) * 9 // 10 // modules.shape[0])
    code = np.where(np.kron(modules, np.ones((scale, scale), dtype=bool)), 0, 255).astype(np.uint8)
    frame = np.full((height, width), 255, dtype=np.uint8)
    top, left = (height - code.shape[0]) // 2, (width - code.shape[1]) // 2
    frame[top : top + code.shape[0], left : left + code.shape[1]] = code
    return frame


def write_qr_y4m(path: str | Path, text: str, frames: int = 30) -> Path:
    """Writes `frames` identical frames at 30 fps (Chromium loops the file) and returns the path."""
    path = Path(path)
    luma = qr_frame(text).tobytes()
    chroma = bytes([128]) * ((WIDTH // 2) * (HEIGHT // 2) * 2)
    with path.open("wb") as f:
        f.write(f"YUV4MPEG2 W{WIDTH} H{HEIGHT} F30:1 Ip A1:1 C420jpeg\n".encode("ascii"))
        for _ in range(frames):
            f.write(b"FRAME\n")
            f.write(luma)
            f.write(chroma)
    return path
