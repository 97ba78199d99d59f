"""One error model: AppError carries a stable code; REGISTRY maps each code to its HTTP status
and the catalogue key of its ko/en text.

Everything maps through REGISTRY: the API's one exception handler answers {"detail": code}
with the code's status, the page states' `_fail(error)` shows the code's catalogue text, and
the JS units receive `error_texts(lang)` (code -> text) so their codes are shown the same way.
Client-side codes (the JS units' own, upper case) never reach the API; their status is 400
only so that every entry has the same shape.

Messages are English for logs and API clients; they never carry secrets or user data.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorSpec:
    status: int
    key: str  # catalogue key of the text shown to the user
    title: str = "error"  # catalogue key of the alert's title


class AppError(Exception):
    """A refused operation. `params` fill the catalogue text's {placeholders}."""

    def __init__(self, code: str, message: str = "", **params: int | str):
        if code not in REGISTRY:
            raise KeyError(f"unregistered error code: {code}")
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.message = message or code
        self.params = params

    @property
    def spec(self) -> ErrorSpec:
        return REGISTRY[self.code]


def _server(status: int, key: str, title: str = "error") -> ErrorSpec:
    return ErrorSpec(status, key, title)


def _client(key: str) -> ErrorSpec:
    return ErrorSpec(400, key)


REGISTRY: dict[str, ErrorSpec] = {
    # ---- sessions and accounts
    "not_authenticated": _server(401, "err_not_authenticated"),
    "foreign_origin": _server(403, "err_foreign_origin"),
    "no_address": _server(409, "err_no_address"),
    "backup_not_current": _server(409, "err_backup_not_current"),  # /backup/touch of another address
    "wallet_changed": _server(409, "err_wallet_changed"),  # /me/address from a page that knew another wallet
    "invalid_locale": _server(400, "err_invalid_locale"),
    # ---- sign-in (services.google)
    "google_auth_failed": _server(401, "err_google_auth_failed"),
    "invalid_id_token": _server(401, "err_invalid_id_token"),
    "identity_provider_error": _server(502, "err_identity_provider_error"),
    "email_not_verified": _server(401, "err_email_not_verified"),
    "invalid_code": _server(401, "err_invalid_code"),
    "code_exchange_refused": _server(401, "err_code_exchange_refused"),
    # ---- DOORS (issue 12 item 5): sign-in bound to a login attempt (nonce / state)
    "login_attempt_expired": _server(401, "err_login_attempt_expired"),
    "login_attempt_mismatch": _server(401, "err_login_attempt_mismatch"),
    # ---- addresses, amounts, chains (services.eth, services.amounts)
    "invalid_chain_id": _server(400, "err_unsupported_chain"),
    "unsupported_chain": _server(400, "err_unsupported_chain"),
    "invalid_address": _server(400, "err_invalid_address"),
    "invalid_recipient": _server(400, "err_invalid_recipient"),
    "bad_checksum": _server(400, "err_bad_checksum"),
    "invalid_amount": _server(400, "err_invalid_amount"),
    "amount_empty": _server(400, "err_amount_empty"),
    "max_decimals": _server(400, "err_max_decimals"),
    "native_blocked": _server(400, "err_native_blocked"),
    # ---- EIP-681 payment URIs read by Send (services.payment_uri, issue 14 item 5)
    "uri_invalid": _server(400, "err_uri_invalid"),
    "uri_unsupported": _server(400, "err_uri_unsupported"),
    "uri_unsupported_chain": _server(400, "err_uri_unsupported_chain"),  # params: chain_id
    "uri_unsupported_token": _server(400, "err_uri_unsupported_token"),  # params: token, chain
    # ---- the Send form's input checks (services.txlink.check_send_form)
    "need_chain": _server(400, "send_need_chain", "send_input_needed"),
    "need_token": _server(400, "send_need_token", "send_input_needed"),
    "need_recipient": _server(400, "send_need_recipient", "send_input_needed"),
    "need_amount": _server(400, "send_need_amount", "send_input_needed"),
    "token_info_missing": _server(400, "send_token_info_missing"),
    # ---- chain reads and transactions (services.chain)
    "not_a_contract": _server(400, "err_not_a_contract"),
    "not_erc20": _server(400, "err_not_erc20"),
    "rpc_unavailable": _server(503, "err_rpc_unavailable"),
    "estimate_failed": _server(400, "err_estimate_failed"),
    "invalid_tx": _server(400, "err_invalid_tx"),
    # ---- /sign refusals (services.txpreview.refusal)
    "sign_no_recipient": _server(400, "err_sign_no_recipient"),
    "fee_too_high": _server(400, "err_fee_too_high"),
    "sign_nonce_used": _server(400, "err_sign_nonce_used"),
    "sign_nonce_pending": _server(400, "err_sign_nonce_pending"),
    "sign_nonce_ahead": _server(400, "err_sign_nonce_ahead"),
    "fee_unaffordable": _server(400, "err_fee_unaffordable"),
    "fee_outdated": _server(400, "err_fee_outdated"),  # also /tx/submit's (services.transfers)
    "sign_fails_now": _server(400, "err_sign_fails_now"),  # /sign's own, after the PIN (state/sign.py)
    "sign_tx_mismatch": _server(400, "err_sign_tx_mismatch"),
    "invalid_raw_tx": _server(400, "err_invalid_raw_tx"),
    "wrong_chain": _server(400, "err_wrong_chain"),
    "sender_mismatch": _server(400, "err_sender_mismatch"),
    "rejected": _server(400, "err_rejected"),
    "bad_config": _server(500, "err_bad_config"),
    # ---- speeding up or cancelling a pending send (services.pending)
    "unknown_activity": _server(404, "err_unknown_activity"),
    "not_replaceable": _server(400, "err_not_replaceable"),
    "already_mined": _server(409, "err_already_mined"),
    "nonce_used": _server(409, "err_nonce_used"),
    "replacement_mismatch": _server(400, "err_replacement_mismatch"),
    "replacement_underpriced": _server(400, "err_replacement_underpriced"),
    # ---- merchant payments (services.payments, services.relayer)
    "payments_unavailable": _server(400, "err_payments_unavailable"),
    "invalid_merchant": _server(400, "err_invalid_merchant"),
    "merchant_is_payer": _server(400, "err_merchant_is_payer"),
    "invalid_token": _server(400, "err_invalid_token"),
    "invalid_payment_id": _server(400, "err_invalid_payment_id"),
    "invalid_signature": _server(400, "err_invalid_signature"),
    "invalid_deadline": _server(400, "err_invalid_deadline"),
    "unknown_payment": _server(404, "err_unknown_payment"),
    "quote_mismatch": _server(409, "err_quote_mismatch"),
    "payment_id_used": _server(409, "err_payment_id_used"),
    # ---- merchants (issue 14 item 6: a link's ref, services.merchant_payments)
    "payment_ref_used": _server(409, "err_payment_ref_used"),
    "payment_not_found": _server(404, "err_payment_not_found"),
    # also the payment page's, for its own deadline refused as too near (state.payment.ran_out)
    "expired": _server(400, "err_expired"),
    "bad_signer": _server(400, "err_bad_signer"),
    "pay_would_fail": _server(400, "err_pay_would_fail"),
    "replayed": _server(400, "err_replayed"),
    "insufficient_allowance": _server(400, "err_insufficient_allowance"),
    "insufficient_balance": _server(400, "err_insufficient_balance"),
    "transfer_failed": _server(400, "err_transfer_failed"),
    "reverted": _server(400, "err_reverted"),
    "relay_error": _server(500, "err_relay_error"),
    "dropped": _server(400, "err_dropped"),
    "relay_nonce_conflict": _server(409, "err_relay_nonce_conflict"),
    # ---- gasless payments (issue 14: EIP-2612 permit with execute)
    "invalid_permit": _server(400, "err_invalid_permit"),  # owner, spender, value, deadline or signature wrong
    "permit_nonce_stale": _server(409, "err_permit_nonce_stale"),  # the token's permit nonce moved on
    "permit_unsupported": _server(400, "err_permit_unsupported"),  # a permit for a token without EIP-2612
    "permit_failed": _server(400, "err_permit_failed"),  # the token refused the permit and no allowance is there
    # ---- rate limits and caps (issue 12 RATE: core.ratelimit, services.tokens)
    "rate_limited": _server(429, "err_rate_limited"),  # params: retry_after (seconds, the Retry-After header)
    "too_many_tokens": _server(400, "err_too_many_tokens"),  # params: max
    "token_changed": _server(409, "err_token_changed"),  # services.tokens.add_token: not as the probe showed it
    # ---- shared state across workers (issue 13 SCALE: core.shared; Redis not answering)
    "shared_state_unavailable": _server(503, "err_shared_state_unavailable"),
    # ---- the relayer's limits (issue 12, RELAY part: services.payments, services.relayer)
    "token_not_payable": _server(400, "err_token_not_payable"),
    "payment_gas_too_high": _server(400, "err_payment_gas_too_high"),
    "payment_quota_exceeded": _server(429, "err_payment_quota_exceeded"),  # params: retry_after (Retry-After)
    "too_many_open_quotes": _server(429, "err_too_many_open_quotes"),  # params: retry_after (Retry-After)
    # ---- a request whose body or parameters fail the route's schema (api.__init__)
    "invalid_request": _server(422, "err_invalid_request"),
    # ---- what no route refuses: the database out of reach, or a fault (unexpected_code)
    "database_unavailable": _server(503, "err_database_unavailable"),
    "internal_error": _server(500, "err_internal_error"),
    # ---- the browser's own (custom_components/wallet_js/*.js{,x}; tests/unit/test_errors.py finds them)
    "UNKNOWN": _client("err_UNKNOWN"),  # errors.js errorText() for a code not in this registry
    # PIN, local materials, signing (errors.js ERRORS: vault.js, keyring.js)
    "PIN_FORMAT": _client("err_PIN_FORMAT"),
    "INVALID_PIN": _client("err_INVALID_PIN"),
    "NO_OWNER": _client("err_NO_OWNER"),
    "EXPORT_NO_OWNER": _client("err_EXPORT_NO_OWNER"),  # a backup without an owner (spec section 5)
    "OWNER_INVALID": _client("err_OWNER_INVALID"),
    "MATERIALS_MISSING": _client("err_MATERIALS_MISSING"),
    "MATERIALS_INVALID": _client("err_MATERIALS_INVALID"),
    "MATERIALS_CORRUPT": _client("err_MATERIALS_CORRUPT"),
    "RECOVERY_REQUIRED": _client("err_RECOVERY_REQUIRED"),
    "MNEMONIC_INVALID": _client("err_MNEMONIC_INVALID"),
    "SIGNER_MISMATCH": _client("err_SIGNER_MISMATCH"),
    "INVALID_TX": _client("err_INVALID_TX"),
    "INVALID_TYPED_DATA": _client("err_INVALID_TYPED_DATA"),
    "REQUEST_MISMATCH": _client("err_REQUEST_MISMATCH"),  # keyring.js: the payload differs from what was shown
    "CLOCK_OFF": _client("err_CLOCK_OFF"),  # keyring.js: all as shown but the deadline, against the phone's clock
    "SIGN_FAILED": _client("err_SIGN_FAILED"),  # wallet.jsx: a signing error without a code
    # backup files (errors.js ERRORS; backup.js)
    "INVALID_HEADER": _client("err_INVALID_HEADER"),
    "OWNER_MISMATCH": _client("err_OWNER_MISMATCH"),
    "UNSUPPORTED_VERSION": _client("err_UNSUPPORTED_VERSION"),
    "BUNDLE_INVALID": _client("err_BUNDLE_INVALID"),
    "ADDRESS_MISMATCH": _client("err_ADDRESS_MISMATCH"),
    "NO_BACKUP": _client("err_NO_BACKUP"),
    "BACKUP_VERIFY_FAILED": _client("err_BACKUP_VERIFY_FAILED"),
    # Argon2id (kdf.js)
    "KDF_LOAD": _client("err_KDF_LOAD"),
    "KDF_FAILED": _client("err_KDF_FAILED"),
    "KDF_PARAMS": _client("err_KDF_PARAMS"),
    "KDF_CLOSED": _client("err_KDF_CLOSED"),
    # Google Identity Services and Drive (drive.js; {status}: the HTTP status, 0 for no answer)
    "GIS_LOAD_FAILED": _client("err_GIS_LOAD_FAILED"),
    "NO_ACCESS_TOKEN": _client("err_NO_ACCESS_TOKEN"),
    "DRIVE_LIST_FAILED": _client("err_DRIVE_LIST_FAILED"),
    "DRIVE_UPLOAD_FAILED": _client("err_DRIVE_UPLOAD_FAILED"),
    "DRIVE_DOWNLOAD_FAILED": _client("err_DRIVE_DOWNLOAD_FAILED"),
    "DRIVE_ACCOUNT_FAILED": _client("err_DRIVE_ACCOUNT_FAILED"),  # drive.js: about.user could not be read
    "DRIVE_OTHER_ACCOUNT": _client("err_DRIVE_OTHER_ACCOUNT"),  # drive.js: the token is another account's
    # sign-in and logout requests (auth.jsx)
    "NO_AUTH_CODE": _client("err_NO_AUTH_CODE"),
    "HTTP_ERROR": _client("err_HTTP_ERROR"),
    "NETWORK_ERROR": _client("err_NETWORK_ERROR"),
    # QR code and camera (wallet.jsx ReceiveQr, scan_text.js)
    "QR_FAILED": _client("err_QR_FAILED"),
    "CAMERA_PERMISSION": _client("err_CAMERA_PERMISSION"),
    "CAMERA_NOT_FOUND": _client("err_CAMERA_NOT_FOUND"),
    "CAMERA_FAILED": _client("err_CAMERA_FAILED"),
    # ---- DOORS (issue 12 item 5): a backup header asking for KDF parameters other than design.md 4
    "UNSUPPORTED_BACKUP": _client("err_UNSUPPORTED_BACKUP"),
}


def error_texts(catalogue: dict[str, str]) -> dict[str, str]:
    """code -> text in one language, for the JS units (they show codes through this map)."""
    return {code: catalogue[spec.key] for code, spec in REGISTRY.items()}


def unexpected_code(exc: BaseException) -> str:
    """The code shown for an exception no route or handler turned into an AppError:
    database_unavailable when the database could not be reached or used for now (a server
    restarting or failing over, no pooled connection free in time, SQLite's writer busy past its
    timeout), or Redis could not be reached or did not answer in time, which is worth trying again
    in a moment; rpc_unavailable when a chain's node refused a request (a provider's rate limit, a
    node out of sync) or its answer could not be used, and no service expected that; internal_error
    for anything else."""
    from redis import exceptions as kv
    from sqlalchemy import exc as db

    if isinstance(exc, db.OperationalError | db.InterfaceError | db.TimeoutError):
        return "database_unavailable"
    if isinstance(exc, kv.ConnectionError | kv.TimeoutError):
        return "database_unavailable"
    if isinstance(exc, db.DBAPIError) and exc.connection_invalidated:
        return "database_unavailable"
    if isinstance(exc, node_trouble()):
        return "rpc_unavailable"
    return "internal_error"


def database_trouble() -> tuple[type[Exception], ...]:
    """The exceptions unexpected_code calls database_unavailable by their class alone."""
    from redis import exceptions as kv
    from sqlalchemy import exc as db

    return (db.OperationalError, db.InterfaceError, db.TimeoutError, kv.ConnectionError, kv.TimeoutError)


def outage_line(exc: BaseException) -> str:
    """The exception's kind and its driver's first line ("database or disk is full", "database is
    locked", "connection refused"): what tells an operator one outage from another. Not
    SQLAlchemy's own text, which quotes the statement and its parameters."""
    said = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return f"{type(exc).__name__}: {said[0][:200]}" if said else type(exc).__name__


def node_trouble() -> tuple[type[Exception], ...]:
    """A chain node's refusal, or an answer that could not be used or did not come. Not
    ContractLogicError (a call that reverted): the node answered, and the app did not expect it."""
    from web3 import exceptions as node

    return (node.Web3RPCError, node.BadResponseFormat, node.ProviderConnectionError, node.RequestTimedOut)


def node_trouble_line(exc: BaseException) -> str:
    """One log line for node trouble no service expected: its kind and a node's own refusal text,
    not a traceback (a provider past its quota would fill the log with them), and not the
    exception's text otherwise, which names the node's URL (an API key is often in it)."""
    answer = getattr(exc, "rpc_response", None)  # web3's Web3RPCError for a node's error answer
    error = answer.get("error") if isinstance(answer, dict) else None
    said = f": {error.get('code')} {error.get('message')}" if isinstance(error, dict) else ""
    return " ".join(f"{type(exc).__name__}{said}".split())[:300]  # one line, however the node words it


def logged_code(logger: logging.Logger, what: str, exc: BaseException) -> str:
    """unexpected_code(exc), logged for `what` ("an event handler"): a chain node's trouble as one
    warning line (node_trouble_line), anything else with its traceback."""
    code = unexpected_code(exc)
    if code == "rpc_unavailable":
        logger.warning("%s met the chain node's trouble: %s", what, node_trouble_line(exc))
    else:
        logger.error("%s failed", what, exc_info=exc)
    return code


def as_app_error(logger: logging.Logger, what: str, exc: Exception) -> AppError:
    """`exc` as the AppError a page shows: an AppError as it is, any other failure (a node's answer
    no service expected, the database for a moment) as its code's, logged (logged_code)."""
    return exc if isinstance(exc, AppError) else AppError(logged_code(logger, what, exc))
