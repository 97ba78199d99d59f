"""ko/en texts of the receive area: the /home Receive dialog's payment request (issue 14 item 5)."""

EN: dict[str, str] = {
    "receive_request_title": "Request a payment",
    "receive_request_hint": (
        "Choose a token, and an amount if you like: the QR code becomes a payment request that the payer's"
        " wallet fills in."
    ),
    "receive_token": "Token",
    "receive_address_only": "Address only",
    "receive_amount": "Amount (optional)",
    "receive_request_amount": "Requesting {amount} {symbol} on {chain}",
    "receive_request_any": "Requesting {symbol} on {chain}; the payer enters the amount",
}

KO: dict[str, str] = {
    "receive_request_title": "결제 요청",
    "receive_request_hint": (
        "토큰과 (원하면) 금액을 고르면 QR 코드가 결제 요청으로 바뀌고, 보내는 사람의 지갑에 그대로 채워집니다."
    ),
    "receive_token": "토큰",
    "receive_address_only": "주소만",
    "receive_amount": "금액(선택)",
    "receive_request_amount": "{chain}에서 {amount} {symbol} 요청",
    "receive_request_any": "{chain}에서 {symbol} 요청, 금액은 보내는 사람이 입력",
}
