"""ko/en texts of the PIN dialog's summary: what it is about to sign, decoded in the browser from
the very payload it signs (custom_components/wallet_js/wallet.jsx PinDialog; a transaction's in
keyring.js txSummaryLines), and the screen readers' progress line of the PIN pad and the PIN
field (the count only, never a digit)."""

EN: dict[str, str] = {
    "pin_tx_to": "To: {address}",
    "pin_tx_value": "Sends {amount} {symbol}",
    # An ERC-20 transfer call: its recipient and amount, decoded from the call's data.
    "pin_token_recipient": "Token recipient: {address}",
    "pin_token_amount": "Token amount: {amount} {symbol}",
    "pin_token_units": "Token amount: {units} (in the token's smallest units; its decimals are unknown)",
    # An approval call (keyring.js tokenApproval): who may take the user's tokens, how many, until when.
    "pin_approve_spender": "Approves spender: {address}",
    "pin_approve_more_spender": "Approves spender, on top of its current allowance: {address}",
    "pin_approve_amount": "Approved amount: {amount} {symbol}",
    "pin_approve_units": "Approved amount: {units} (in the token's smallest units; its decimals are unknown)",
    "pin_approve_unlimited": "Approved amount: unlimited (it can take all of this token)",
    "pin_permit2_token": "Token approved through Permit2: {address}",
    "pin_approve_until": "Approved until: {time}",
    "pin_approve_all": "Approves operator of all your tokens at this contract: {address}",
    "pin_revoke_all": "Revokes operator of all your tokens at this contract: {address}",
    "pin_allow_spend": "Allow {contract} to spend {amount} {symbol}",
    "pin_allow_spend_until": "Allow {contract} to spend {amount} {symbol} until {time}",
    "pin_pay_summary": "Pay {amount} {symbol} to {merchant}",
    "pin_progress": "{count} of {total} digits",
}

KO: dict[str, str] = {
    "pin_tx_to": "받는 곳: {address}",
    "pin_tx_value": "{amount} {symbol} 보내기",
    "pin_token_recipient": "토큰 받는 곳: {address}",
    "pin_token_amount": "토큰 수량: {amount} {symbol}",
    "pin_token_units": "토큰 수량: {units} (토큰 최소 단위 기준, 소수점 자릿수 정보 없음)",
    "pin_approve_spender": "사용 승인 대상: {address}",
    "pin_approve_more_spender": "사용 승인 대상(기존 승인액에 추가): {address}",
    "pin_approve_amount": "승인 수량: {amount} {symbol}",
    "pin_approve_units": "승인 수량: {units} (토큰 최소 단위 기준, 소수점 자릿수 정보 없음)",
    "pin_approve_unlimited": "승인 수량: 무제한 (이 토큰을 모두 가져갈 수 있음)",
    "pin_permit2_token": "Permit2를 통해 승인하는 토큰: {address}",
    "pin_approve_until": "승인 기한: {time}",
    "pin_approve_all": "이 컨트랙트에 있는 내 토큰 전부의 승인 대상: {address}",
    "pin_revoke_all": "이 컨트랙트에 있는 내 토큰 전부의 승인 취소 대상: {address}",
    "pin_allow_spend": "{contract}이(가) {amount} {symbol}을(를) 사용하도록 허용",
    "pin_allow_spend_until": "{contract}이(가) {time}까지 {amount} {symbol}을(를) 사용하도록 허용",
    "pin_pay_summary": "{merchant}에게 {amount} {symbol} 결제",
    "pin_progress": "{total}자리 중 {count}자리 입력됨",
}
