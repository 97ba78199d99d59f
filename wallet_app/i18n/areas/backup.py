"""ko/en texts of the backup area: the settings backup dialog and the restore outcomes. The
error texts of drive.js / backup.js / vault.js codes are in areas/errors.py (err_<code>)."""

EN: dict[str, str] = {
    "backup_now": "Back up",
    "backup_explain": (
        "An encrypted copy of your wallet goes to your Google Drive app-data folder. Your PIN unlocks it."
    ),
    "backup_dialog_title": "Back up to Google Drive",
    "backup_dialog_hint": "Enter your 6-digit PIN. Google will ask for Drive access.",
    "backup_failed": "Backup failed: ",
    "backup_done": "Backup completed.",
    "restore_done": "Your wallet has been restored.",
    "restore_pin_hint": "Enter the 6-digit PIN of your backup. Google will ask for Drive access.",
    "restore_address_mismatch": "Recovered key address does not match your current account.",
}
KO: dict[str, str] = {
    "backup_now": "백업하기",
    "backup_explain": "지갑의 암호화된 사본이 Google Drive 앱 데이터 폴더에 저장됩니다. PIN으로 열 수 있습니다.",
    "backup_dialog_title": "Google Drive에 백업",
    "backup_dialog_hint": "6자리 PIN을 입력하세요. Google이 Drive 접근 권한을 요청합니다.",
    "backup_failed": "백업 실패: ",
    "backup_done": "백업이 완료되었습니다.",
    "restore_done": "지갑이 복구되었습니다.",
    "restore_pin_hint": "백업의 6자리 PIN을 입력하세요. Google이 Drive 접근 권한을 요청합니다.",
    "restore_address_mismatch": "복구된 키의 주소가 현재 계정과 일치하지 않습니다.",
}
