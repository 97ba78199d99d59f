"""ko/en texts of the payment area (the /payment page and the dev merchant link on /card)."""

EN: dict[str, str] = {
    "pay_merchant": "Merchant",
    "pay_network": "Network",
    "pay_token": "Token",
    "pay_amount": "Amount",
    "pay_submit": "Pay",
    "pay_copy_merchant": "Copy merchant address",
    "pay_hint": "The payment is signed on this device with your PIN. Newbl relays it and pays the network fee.",
    # Validation (specification section 5, word for word).
    "pay_merchant_missing": "Merchant address is missing.",
    "pay_select_network": "Please select a network.",
    "pay_select_token": "Please select a token.",
    "pay_enter_amount": "Please enter the amount.",
    "pay_decimals_missing": "Token decimals not available.",
    "pay_invalid_amount": "Invalid amount format.",
    "pay_link_repeated": "This payment link gives one of its values twice, so it cannot be paid.",
    # Progress (the processing overlay and the in-progress message state).
    "pay_quoting": "Checking the payment…",
    "pay_approving": "Approval sent. Waiting for it to be confirmed…",
    "pay_approve_sent": "Approval transaction: ",
    "pay_sending": "Sending the payment…",
    "pay_in_progress": "Payment in progress…",
    "pay_pin_approve": "Approve the token",
    "pay_pin_sign": "Sign the payment",
    # Outcomes.
    "pay_done": "Payment complete.",
    "pay_failed": "Payment failed.",
    "pay_still_pending": "The payment is still in progress. Check Activity later.",
    "pay_approve_timeout": "The approval was not confirmed in time. Please try again.",
    "pay_paid_recently": "You paid this merchant the same amount {minutes} min ago. To pay again, tap Pay once more.",
    # The dev-only merchant link on /card.
    "dev_merchant_link": "Try a test payment (1.5 tUSD, development only)",
}

KO: dict[str, str] = {
    "pay_merchant": "가맹점",
    "pay_network": "네트워크",
    "pay_token": "토큰",
    "pay_amount": "금액",
    "pay_submit": "결제하기",
    "pay_copy_merchant": "가맹점 주소 복사",
    "pay_hint": "결제는 이 기기에서 PIN으로 서명됩니다. 전송과 네트워크 수수료는 Newbl이 처리합니다.",
    "pay_merchant_missing": "가맹점 주소가 없습니다.",
    "pay_select_network": "네트워크를 선택해 주세요.",
    "pay_select_token": "토큰을 선택해 주세요.",
    "pay_enter_amount": "금액을 입력해 주세요.",
    "pay_decimals_missing": "토큰 소수점 정보를 확인할 수 없습니다.",
    "pay_invalid_amount": "금액 형식이 올바르지 않습니다.",
    "pay_link_repeated": "이 결제 링크에는 같은 항목이 두 번 들어 있어 결제할 수 없습니다.",
    "pay_quoting": "결제를 확인하는 중…",
    "pay_approving": "승인을 보냈습니다. 확인을 기다리는 중…",
    "pay_approve_sent": "승인 트랜잭션: ",
    "pay_sending": "결제를 보내는 중…",
    "pay_in_progress": "결제 진행 중…",
    "pay_pin_approve": "토큰 사용 승인",
    "pay_pin_sign": "결제 서명",
    "pay_done": "결제가 완료되었습니다.",
    "pay_failed": "결제에 실패했습니다.",
    "pay_still_pending": "결제가 아직 진행 중입니다. 잠시 후 활동 내역을 확인해 주세요.",
    "pay_approve_timeout": "승인이 제시간에 확인되지 않았습니다. 다시 시도해 주세요.",
    "pay_paid_recently": (
        "{minutes}분 전에 이 가맹점에 같은 금액을 결제했습니다. 다시 결제하려면 결제하기를 한 번 더 누르세요."
    ),
    "dev_merchant_link": "테스트 결제 해 보기 (1.5 tUSD, 개발용)",
}
