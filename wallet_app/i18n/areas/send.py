"""ko/en texts of the send area."""

EN: dict[str, str] = {
    "scan_qr": "Scan QR code",
    "scan_hint": "Point the camera at a QR code.",
    "camera_permission": "Camera permission is required.",
    "camera_not_found": "No usable camera found.",
    "camera_failed": "Failed to access camera.",
}
KO: dict[str, str] = {
    "scan_qr": "QR 코드 스캔",
    "scan_hint": "카메라를 QR 코드에 맞춰 주세요.",
    "camera_permission": "카메라 권한이 필요합니다.",
    "camera_not_found": "사용할 수 있는 카메라가 없습니다.",
    "camera_failed": "카메라에 접근하지 못했습니다.",
}
