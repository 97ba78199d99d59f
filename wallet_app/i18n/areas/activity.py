"""ko/en texts of the activity area. Summary templates take {amount}, {symbol}, {who}."""

EN: dict[str, str] = {
    "activity_type_transfer": "Transfer",
    "activity_type_approve": "Approval",
    "activity_type_payment": "Payment",
    "activity_type_call": "Contract call",
    "activity_type_receive": "Received",
    "activity_sum_transfer": "Sent {amount} {symbol} to {who}",
    "activity_sum_approve": "Approved {amount} {symbol} for {who}",
    "activity_sum_payment": "Paid {amount} {symbol} to {who}",
    "activity_sum_call": "Contract call to {who}",
    "activity_sum_receive": "Received {amount} {symbol} from {who}",
    "activity_sum_with": "{type} with {who}",
    "activity_status_submitted": "Pending",
    "activity_status_ok": "Confirmed",
    "activity_status_failed": "Failed",
    "activity_tx": "Tx",
}

KO: dict[str, str] = {
    "activity_type_transfer": "송금",
    "activity_type_approve": "사용 승인",
    "activity_type_payment": "결제",
    "activity_type_call": "컨트랙트 호출",
    "activity_type_receive": "입금",
    "activity_sum_transfer": "{who}에게 {amount} {symbol} 보냄",
    "activity_sum_approve": "{who}에게 {amount} {symbol} 사용 승인",
    "activity_sum_payment": "{who}에게 {amount} {symbol} 결제",
    "activity_sum_call": "{who} 컨트랙트 호출",
    "activity_sum_receive": "{who}에게서 {amount} {symbol} 받음",
    "activity_sum_with": "{who}와의 {type}",
    "activity_status_submitted": "대기 중",
    "activity_status_ok": "완료",
    "activity_status_failed": "실패",
    "activity_tx": "트랜잭션",
}
