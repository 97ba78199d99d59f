"""ko/en texts of the assets area: the /home token list and the add-token dialog."""

EN: dict[str, str] = {
    "assets_refresh": "Refresh balances",
    "assets_unavailable": "Your balances on {chains} could not be read just now, so they may be missing or out of "
    "date here. What you hold is not affected. Please try again in a moment.",
    "add_token": "Add token",
    "add_token_title": "Add token",
    "add_token_network": "Network",
    "add_token_address": "Token address",
    "add_token_address_hint": "0x followed by 40 hex digits",
    "add_token_probe": "Probe",
    "add_token_probing": "Checking the token…",
    "add_token_add": "Add",
    "add_token_name": "Name",
    "add_token_symbol": "Symbol",
    "add_token_decimals": "Decimals",
    "add_token_copycat": "Your list already has {symbol} at another address ({address}). Anyone can make a token "
    "with any name: add this one only if you trust its address.",
    "add_token_unfamiliar": "This token's symbol {symbol} has letters other than A–Z, which can be drawn like "
    "those of another token's symbol. Anyone can make a token with any name: add this one only if you trust its "
    "address.",
}

KO: dict[str, str] = {
    "assets_refresh": "잔액 새로고침",
    "assets_unavailable": "지금은 {chains}의 잔액을 읽을 수 없어 여기에 빠져 있거나 최신이 아닐 수 있습니다. 보유 "
    "자산에는 영향이 없습니다. 잠시 후 다시 시도해 주세요.",
    "add_token": "토큰 추가",
    "add_token_title": "토큰 추가",
    "add_token_network": "네트워크",
    "add_token_address": "토큰 주소",
    "add_token_address_hint": "0x 뒤에 16진수 40자리",
    "add_token_probe": "조회",
    "add_token_probing": "토큰 정보를 확인하는 중…",
    "add_token_add": "추가",
    "add_token_name": "이름",
    "add_token_symbol": "심볼",
    "add_token_decimals": "소수 자릿수",
    "add_token_copycat": "내 토큰 목록에 다른 주소({address})의 {symbol}이(가) 이미 있습니다. 누구나 아무 이름으로나 "
    "토큰을 만들 수 있으니 이 토큰의 주소를 믿을 수 있을 때만 추가하세요.",
    "add_token_unfamiliar": "이 토큰의 심볼 {symbol}에는 A–Z 외의 글자가 있어 다른 토큰의 심볼과 똑같아 보일 수 "
    "있습니다. 누구나 아무 이름으로나 토큰을 만들 수 있으니 이 토큰의 주소를 믿을 수 있을 때만 추가하세요.",
}
