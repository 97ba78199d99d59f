"""The one error model: every code in wallet_app/errors.REGISTRY and every code the JS units
throw or report has en and ko texts, and the Korean texts are Korean."""

import re
from pathlib import Path

import pytest
import redis.exceptions
import sqlalchemy.exc
import web3.exceptions

from wallet_app.errors import REGISTRY, AppError, error_texts, node_trouble_line, unexpected_code
from wallet_app.i18n import CATALOGUES, ERROR_TEXTS
from wallet_app.services.rpc_http import MalformedAnswer

ROOT = Path(__file__).resolve().parents[2]
JS_DIR = ROOT / "custom_components" / "wallet_js"

# Codes in the JS sources: a quoted UPPER_CASE name with an underscore ('NO_BACKUP'), the first
# argument of an error constructor or of errorText (new KdfError('KDF_LOAD'), errorText(errors,
# "UNKNOWN")), and the keys of the code -> message tables (ERRORS in errors.js, MESSAGES).
_JS_CODE_PATTERNS = [
    re.compile(r"""['"]([A-Z][A-Z0-9]*_[A-Z0-9_]+)['"]"""),
    re.compile(r"""new \w*Error\(\s*['"]([A-Z][A-Z0-9_]+)['"]"""),
    re.compile(r"""errorText\w*\([^()]*['"]([A-Z][A-Z0-9_]+)['"]"""),
    re.compile(r"""^\s+([A-Z][A-Z0-9_]+):""", re.MULTILINE),
]
# Latin words a Korean text may contain: names of products, token symbols, the language name.
KO_LATIN_ALLOWED = {"Google", "Drive", "Newbl", "English", "tUSD", "Permit"}  # Permit2: a contract's name
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def js_error_codes() -> set[str]:
    codes: set[str] = set()
    for path in [*JS_DIR.glob("*.js"), *JS_DIR.glob("*.jsx")]:
        text = path.read_text()
        for pattern in _JS_CODE_PATTERNS:
            codes |= set(pattern.findall(text))
    return codes


def test_the_js_sources_are_scanned():
    codes = js_error_codes()
    # One of each source of codes: vault, drive, backup, kdf, auth, the camera, the fallback.
    assert {"MATERIALS_CORRUPT", "DRIVE_LIST_FAILED", "NO_BACKUP", "KDF_FAILED", "NO_AUTH_CODE",
            "CAMERA_PERMISSION", "UNKNOWN"} <= codes


def test_js_units_look_codes_up_instead_of_composing_keys():
    for path in [*JS_DIR.glob("*.js"), *JS_DIR.glob("*.jsx")]:
        assert not re.search(r"""['"](backup_)?err_['"]\s*\+""", path.read_text()), path.name


def test_every_js_error_code_is_registered():
    missing = js_error_codes() - set(REGISTRY)
    assert not missing, f"JS error codes missing from wallet_app/errors.REGISTRY: {sorted(missing)}"


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_registered_code_has_its_text_and_title(lang):
    catalogue = CATALOGUES[lang]
    needed = {spec.key for spec in REGISTRY.values()} | {spec.title for spec in REGISTRY.values()}
    missing = sorted(needed - set(catalogue))
    assert not missing, f"{lang} catalogue lacks: {missing}"
    assert all(catalogue[spec.key].strip() for spec in REGISTRY.values())


def test_en_and_ko_texts_have_the_same_placeholders():
    for code, spec in REGISTRY.items():
        en, ko = CATALOGUES["en"][spec.key], CATALOGUES["ko"][spec.key]
        assert set(PLACEHOLDER.findall(en)) == set(PLACEHOLDER.findall(ko)), code


def test_error_keys_are_the_same_in_both_languages():
    en = {k for k in CATALOGUES["en"] if k.startswith("err_")}
    ko = {k for k in CATALOGUES["ko"] if k.startswith("err_")}
    assert en == ko
    # ...and every err_ text belongs to a registered code (no leftovers of the old prefixes).
    assert en == {spec.key for spec in REGISTRY.values() if spec.key.startswith("err_")}


def test_korean_texts_are_not_english():
    for key, text in CATALOGUES["ko"].items():
        words = set(re.findall(r"[A-Za-z]{4,}", PLACEHOLDER.sub("", text))) - KO_LATIN_ALLOWED
        assert not words, f"{key}: {text!r} has English words {sorted(words)}"


def test_korean_texts_name_no_code():
    codes = set(REGISTRY)
    for key, text in CATALOGUES["ko"].items():
        assert not codes & set(re.findall(r"\w+", text)), (key, text)


def test_error_texts_for_the_js_units():
    ko = error_texts(CATALOGUES["ko"])
    assert set(ko) == set(REGISTRY)
    assert ERROR_TEXTS["ko"] == ko
    assert ERROR_TEXTS["ko"]["MATERIALS_CORRUPT"] == "로컬 자료가 손상되었습니다"
    assert ERROR_TEXTS["en"]["UNKNOWN"] == "Unknown error"


@pytest.mark.parametrize(
    "code, english",
    [
        ("INVALID_PIN", "Invalid PIN. Please try again."),
        ("PIN_FORMAT", "PIN must be 6 digits."),
        ("DRIVE_LIST_FAILED", "Drive list failed: {status}"),
        ("DRIVE_UPLOAD_FAILED", "Drive upload failed: {status}"),
        ("DRIVE_DOWNLOAD_FAILED", "Drive download failed: {status}"),
        ("GIS_LOAD_FAILED", "Failed to load Google Identity Services"),
        ("NO_ACCESS_TOKEN", "No access_token for Drive"),
        ("NO_AUTH_CODE", "No authorization code"),
        ("KDF_LOAD", "failed to load argon2"),
        ("QR_FAILED", "Failed to render QR"),
        ("CAMERA_PERMISSION", "Camera permission is required."),
        ("CAMERA_NOT_FOUND", "No usable camera found."),
        ("CAMERA_FAILED", "Failed to access camera."),
        ("NO_OWNER", "No active account address."),
        ("EXPORT_NO_OWNER", "No active owner address"),
        ("SIGNER_MISMATCH", "Recovered key address does not match your current account."),
        ("SIGN_FAILED", "PIN check/sign failed"),
        ("RECOVERY_REQUIRED", "Re-onboard/recover required"),
        ("INVALID_HEADER", "Invalid backup header"),
        ("OWNER_MISMATCH", "Backup owner mismatch"),
        ("UNSUPPORTED_VERSION", "Unsupported bundle version"),
        ("ADDRESS_MISMATCH", "Address derived from mnemonic does not match the active owner"),
        ("NO_BACKUP", "No backup file for this address in Google Drive (appDataFolder)"),
        ("invalid_tx", "invalid transaction"),
        ("unsupported_chain", "unsupported chain"),
        ("amount_empty", "amount empty"),
        ("invalid_amount", "invalid amount"),
        ("max_decimals", "max {decimals} decimal places"),
    ],
)
def test_specification_texts_word_for_word(code, english):
    assert ERROR_TEXTS["en"][code] == english


def test_app_error_refuses_an_unregistered_code():
    with pytest.raises(KeyError):
        AppError("no_such_code")
    assert AppError("max_decimals", decimals=6).params == {"decimals": 6}


# --- the sign-in on / reports (code, status) and LoginState shows the text (no error table on /)

@pytest.mark.parametrize(
    "code, status, key, params",
    [
        ("rate_limited", 429, "err_rate_limited", {}),
        ("login_attempt_expired", 401, "err_login_attempt_expired", {}),
        ("NO_AUTH_CODE", 0, "err_NO_AUTH_CODE", {}),
        ("GIS_LOAD_FAILED", 0, "err_GIS_LOAD_FAILED", {}),
        ("HTTP_ERROR", 502, "err_HTTP_ERROR", {"status": 502}),
        # From the browser, so anything may come: a bad status is left empty, as errors.js fillText does.
        ("HTTP_ERROR", "502", "err_HTTP_ERROR", {"status": ""}),
        ("HTTP_ERROR", True, "err_HTTP_ERROR", {"status": ""}),
        ("HTTP_ERROR", 10**9, "err_HTTP_ERROR", {"status": ""}),
        ("max_decimals", 0, "err_max_decimals", {"decimals": ""}),  # another placeholder: empty
        ("no_such_code", 0, "err_UNKNOWN", {}),
        ("__class__", 0, "err_UNKNOWN", {}),
        (None, None, "err_UNKNOWN", {}),
        (["rate_limited"], 0, "err_UNKNOWN", {}),
    ],
)
def test_sign_in_error(code, status, key, params):
    from wallet_app.state.login import sign_in_error

    assert sign_in_error(code, status) == (key, params)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_code_the_sign_in_can_report_has_a_text_its_params_can_fill(lang):
    # Every registered code, which covers auth.jsx's (test_every_js_error_code_is_registered) and the
    # auth routes' (AppError refuses an unregistered code): its text fills without a KeyError.
    from wallet_app.state.login import sign_in_error

    for code in REGISTRY:
        key, params = sign_in_error(code, 500)
        text = CATALOGUES[lang][key].format(**params)
        assert text.strip() and "{" not in text, code


def _db_error(cls, **kw):
    return cls("SELECT 1", {}, Exception("driver's text"), **kw)


@pytest.mark.parametrize("exc, code", [
    (_db_error(sqlalchemy.exc.OperationalError), "database_unavailable"),  # refused, dropped, SQLite locked
    (_db_error(sqlalchemy.exc.InterfaceError), "database_unavailable"),  # a connection already closed
    (sqlalchemy.exc.TimeoutError("QueuePool limit reached"), "database_unavailable"),  # no pooled connection in time
    (_db_error(sqlalchemy.exc.DBAPIError, connection_invalidated=True), "database_unavailable"),
    (_db_error(sqlalchemy.exc.DBAPIError), "internal_error"),
    (_db_error(sqlalchemy.exc.IntegrityError), "internal_error"),  # a bug of ours, not worth retrying
    (redis.exceptions.ConnectionError("Error 111 connecting"), "database_unavailable"),  # Redis stopped
    (redis.exceptions.TimeoutError("Timeout reading"), "database_unavailable"),  # Redis too slow to answer
    (redis.exceptions.ResponseError("WRONGTYPE"), "internal_error"),  # a bug of ours
    (web3.exceptions.Web3RPCError("-32005 limit exceeded"), "rpc_unavailable"),  # a provider's rate limit
    (web3.exceptions.BadResponseFormat("no result"), "rpc_unavailable"),
    (MalformedAnswer("an HTML page"), "rpc_unavailable"),  # services.rpc_http: not reached, in effect
    (web3.exceptions.RequestTimedOut("no answer"), "rpc_unavailable"),
    (web3.exceptions.ContractLogicError("execution reverted"), "internal_error"),  # answered: a bug of ours
    (RuntimeError("x"), "internal_error"),
    (KeyError("x"), "internal_error"),
])
def test_unexpected_code(exc, code):
    assert unexpected_code(exc) == code


def _refusal(code, message):
    """web3's exception for a node's error answer (web3._utils.validation)."""
    error = {"code": code, "message": message}
    return web3.exceptions.Web3RPCError(repr(error), rpc_response={"jsonrpc": "2.0", "id": 1, "error": error})


@pytest.mark.parametrize("exc, line", [
    (_refusal(-32005, "daily request count exceeded"), "Web3RPCError: -32005 daily request count exceeded"),
    (_refusal(-32000, "over\nthe\r\nquota"), "Web3RPCError: -32000 over the quota"),  # one line
    (_refusal(-32000, "x" * 400), "Web3RPCError: -32000 " + "x" * 279),
    # Their text names the node's URL, where providers keep the API key: the kind only.
    (MalformedAnswer("https://mainnet.example/v3/KEY123: the answer is not JSON"), "MalformedAnswer"),
    (web3.exceptions.RequestTimedOut("https://mainnet.example/v3/KEY123: no answer in time"), "RequestTimedOut"),
    (web3.exceptions.Web3RPCError("https://mainnet.example/v3/KEY123"), "Web3RPCError"),  # no node answer in it
])
def test_node_trouble_line(exc, line):
    assert node_trouble_line(exc) == line
