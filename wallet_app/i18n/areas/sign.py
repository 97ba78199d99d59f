"""ko/en texts of the sign area."""

EN: dict[str, str] = {
    "sign_kind_transfer": "asset transfer",
    "sign_kind_other": "other",
    "sign_asset": "Asset",
    "sign_token_address": "Token address",
    "sign_copy_token": "Copy token address",
    "sign_recipient": "Recipient",
    "sign_amount": "Amount",
    "sign_target": "Target address",
    "sign_details": "Details",
    "sign_chain": "Chain",
    "sign_chain_id": "Chain ID",
    "sign_nonce": "Nonce",
    "sign_gas_limit": "Gas limit",
    "sign_gas_price": "Gas price (wei)",
    "sign_value": "Value (wei)",
    "sign_data": "Data",
    "sign_submitting": "Submitting the transaction…",
    "sign_submitted": "Transaction submitted. Hash: ",
    "sign_summary": "What this does",
    "sign_fee": "Network fee",
    "sign_line_transfer": "Send {amount} {symbol} to {recipient}",
    "sign_line_transfer_from": "Move {amount} {symbol} from {owner} to {recipient}",
    "sign_line_approve": "Approve {spender} to spend {amount} {symbol}",
    "sign_line_increase_allowance": "Allow {spender} to spend {amount} {symbol} more, on top of its current allowance",
    "sign_line_permit2_approve": (
        "Approve {spender} to spend {amount} {symbol} through the Permit2 contract {contract}, until {expiration}"
    ),
    "sign_expires_at_once": "the end of the block it is mined in",
    "sign_expires_never": "it is revoked (no expiry)",
    "sign_line_approve_all": "Approve {operator} to take all of your tokens at {contract}",
    "sign_line_revoke_all": "Revoke the approval of {operator} for all of your tokens at {contract}",
    "sign_line_malformed_call": "Malformed {function} call",
    "sign_unlimited": "unlimited",
    "sign_line_native": "Sends {amount} {symbol}",
    "sign_line_call": "Contract call",
    "sign_selector": "Function selector",
    "sign_warn_unlimited": "Unlimited approval: this address can take all of this token.",
    "sign_warn_unknown": "Unknown function: check that you trust this site.",
    "sign_warn_gain": (
        "Amounts coming in are only what a simulation gave: the contract can pay differently, or nothing, "
        "when the transaction is mined."
    ),
    "sign_warn_malformed_call": (
        "The data of this {function} call is not exactly its arguments, so it cannot be signed."
    ),
    "sign_warn_unknown_token": (
        "Unknown token {token}: it is not on your token list, so the name and symbol it gives itself are not shown."
    ),
    "sign_changes": "Balance changes",
    "recipient_first_time": "First time sending to this address.",
    "recipient_lookalike": "This address looks like one you used before, but it is different.",
    "sign_changes_none": "No balance changes.",
    "sign_preview_unavailable": "Preview unavailable.",
    "sign_will_fail": "This transaction is expected to fail.",
    "sign_fail_ack": "I understand it is expected to fail and want to sign anyway.",
    "sign_replace_speedup": (
        "Speed up: replaces pending transaction {tx} (nonce {nonce}) with the same transaction at a higher network fee."
    ),
    "sign_replace_cancel": (
        "Cancel: replaces pending transaction {tx} (nonce {nonce}) with 0 "
        "{symbol} sent to yourself at a higher network fee."
    ),
    "sign_fee_was": "Pending transaction's network fee",
}
KO: dict[str, str] = {
    "sign_kind_transfer": "자산 전송",
    "sign_kind_other": "기타",
    "sign_asset": "자산",
    "sign_token_address": "토큰 주소",
    "sign_copy_token": "토큰 주소 복사",
    "sign_recipient": "받는 사람",
    "sign_amount": "금액",
    "sign_target": "대상 주소",
    "sign_details": "상세 정보",
    "sign_chain": "체인",
    "sign_chain_id": "체인 ID",
    "sign_nonce": "논스",
    "sign_gas_limit": "가스 한도",
    "sign_gas_price": "가스 가격 (wei)",
    "sign_value": "전송 값 (wei)",
    "sign_data": "데이터",
    "sign_submitting": "거래를 제출하는 중…",
    "sign_submitted": "거래가 제출되었습니다. 해시: ",
    "sign_summary": "이 거래가 하는 일",
    "sign_fee": "네트워크 수수료",
    "sign_line_transfer": "{recipient}에게 {amount} {symbol} 보내기",
    "sign_line_transfer_from": "{owner}의 {amount} {symbol}을(를) {recipient}에게 옮기기",
    "sign_line_approve": "{spender}이(가) {amount} {symbol}을(를) 쓸 수 있도록 승인",
    "sign_line_increase_allowance": "{spender}이(가) 기존 승인액에 더해 {amount} {symbol}을(를) 더 쓸 수 있도록 승인",
    "sign_line_permit2_approve": (
        "{spender}이(가) Permit2 컨트랙트 {contract}를 통해 {expiration}까지 {amount} {symbol}을(를) 쓸 수 있도록 승인"
    ),
    "sign_expires_at_once": "처리되는 블록이 끝날 때",
    "sign_expires_never": "만료 없이 취소할 때",
    "sign_line_approve_all": "{operator}이(가) {contract}에 있는 내 토큰을 모두 가져갈 수 있도록 승인",
    "sign_line_revoke_all": "{operator}이(가) {contract}에 있는 내 토큰을 모두 가져갈 수 있는 승인 취소",
    "sign_line_malformed_call": "형식이 잘못된 {function} 호출",
    "sign_unlimited": "무제한",
    "sign_line_native": "{amount} {symbol} 보내기",
    "sign_line_call": "컨트랙트 호출",
    "sign_selector": "함수 선택자",
    "sign_warn_unlimited": "무제한 승인: 이 주소가 이 토큰을 모두 가져갈 수 있습니다.",
    "sign_warn_unknown": "알 수 없는 함수: 이 사이트를 신뢰하는지 확인하세요.",
    "sign_warn_gain": (
        "들어오는 금액은 시뮬레이션 결과일 뿐입니다: 거래가 실제로 처리될 때 컨트랙트가 다르게 지급하거나 "
        "지급하지 않을 수 있습니다."
    ),
    "sign_warn_malformed_call": "이 {function} 호출의 데이터가 인수와 정확히 일치하지 않아 서명할 수 없습니다.",
    "sign_warn_unknown_token": (
        "알 수 없는 토큰 {token}: 내 토큰 목록에 없어 토큰이 스스로 밝힌 이름과 기호를 표시하지 않습니다."
    ),
    "sign_changes": "잔액 변화",
    "recipient_first_time": "이 주소로 처음 보냅니다.",
    "recipient_lookalike": "이 주소는 전에 사용한 주소와 비슷해 보이지만 다른 주소입니다.",
    "sign_changes_none": "잔액 변화가 없습니다.",
    "sign_preview_unavailable": "미리보기를 사용할 수 없습니다.",
    "sign_will_fail": "이 거래는 실패할 것으로 예상됩니다.",
    "sign_fail_ack": "실패할 것으로 예상된다는 것을 이해했으며 그래도 서명하겠습니다.",
    "sign_replace_speedup": (
        "가속: 대기 중인 거래 {tx}(논스 {nonce})를 더 높은 네트워크 수수료의 같은 거래로 대체합니다."
    ),
    "sign_replace_cancel": (
        "취소: 대기 중인 거래 {tx}(논스 {nonce})를 "
        "더 높은 네트워크 수수료로 나 자신에게 0 {symbol}을 보내는 거래로 대체합니다."
    ),
    "sign_fee_was": "대기 중인 거래의 네트워크 수수료",
}
