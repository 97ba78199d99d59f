"""ko/en texts of the send area."""

EN: dict[str, str] = {
    "scan_qr": "Scan QR code",
    "scan_hint": "Point the camera at a QR code.",
    # The Send form.
    "send_network": "Network",
    "send_token": "Token",
    "send_recipient": "Recipient address",
    "send_amount": "Amount",
    "send_no_tokens": "No tokens on this network.",
    "send_submit": "Next",
    "send_building": "Preparing the transaction…",
    # Validation (specification section 5).
    "send_need_chain": "Please select a network.",
    "send_need_token": "Please select a token.",
    "send_need_recipient": "Please enter the recipient address.",
    "send_need_amount": "Please enter the amount.",
    "send_token_info_missing": "token info missing",
    "send_amount_format_error": "amount format error: ",
    # A recipient note (services.activity.recipient_risk), beside those of the sign area.
    "recipient_token_contract": "This is a token's contract address: tokens sent to it are usually lost for good.",
}
KO: dict[str, str] = {
    "scan_qr": "QR 코드 스캔",
    "scan_hint": "카메라를 QR 코드에 맞춰 주세요.",
    "send_network": "네트워크",
    "send_token": "토큰",
    "send_recipient": "받는 주소",
    "send_amount": "금액",
    "send_no_tokens": "이 네트워크에는 토큰이 없습니다.",
    "send_submit": "다음",
    "send_building": "거래를 준비하는 중…",
    "send_need_chain": "네트워크를 선택해 주세요.",
    "send_need_token": "토큰을 선택해 주세요.",
    "send_need_recipient": "받는 주소를 입력해 주세요.",
    "send_need_amount": "금액을 입력해 주세요.",
    "send_token_info_missing": "토큰 정보 없음",
    "send_amount_format_error": "금액 형식 오류: ",
    "recipient_token_contract": "이 주소는 토큰의 컨트랙트 주소입니다. 이 주소로 보낸 토큰은 대개 되찾을 수 없습니다.",
}
