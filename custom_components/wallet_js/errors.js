// The browser's error model. Every error a JS unit throws or reports carries a stable `code`
// registered in wallet_app/errors.REGISTRY (the CLIENT section); the UI never shows an
// error's English message but errorText(errors, code), where `errors` is the code -> text map
// of the current language (wallet_app.i18n.error_messages(), a prop of each wrapper), or it
// reports the code itself to its state, which shows the text (auth.jsx's sign-in, on /).
// Messages are for logs and tests; they never contain secrets or user data.
//
// ERRORS: the codes and fixed English messages of vault.js / keyring.js (spec section 5 / 8).

export const ERRORS = Object.freeze({
  PIN_FORMAT: 'PIN must be 6 digits.',
  INVALID_PIN: 'Invalid PIN',
  NO_OWNER: 'No active owner address',
  EXPORT_NO_OWNER: 'No active owner address',
  OWNER_INVALID: 'Invalid owner address',
  MATERIALS_MISSING: 'Local materials missing for bundle',
  MATERIALS_INVALID: 'Local materials are invalid',
  MATERIALS_CORRUPT: 'Local materials are corrupted',
  RECOVERY_REQUIRED: 'Re-onboard/recover required',
  MNEMONIC_INVALID: 'Invalid recovery phrase',
  INVALID_HEADER: 'Invalid backup header',
  UNSUPPORTED_BACKUP: 'Unsupported backup: KDF parameters other than this wallet\'s',
  OWNER_MISMATCH: 'Backup owner mismatch',
  UNSUPPORTED_VERSION: 'Unsupported bundle version',
  BUNDLE_INVALID: 'Invalid backup bundle',
  ADDRESS_MISMATCH: 'Address derived from mnemonic does not match the active owner',
  SIGNER_MISMATCH: 'Signer address does not match the active owner',
  INVALID_TX: 'invalid transaction',
  INVALID_TYPED_DATA: 'Invalid typed data',
  REQUEST_MISMATCH: 'The request does not match what you confirmed.',
  CLOCK_OFF: 'The payment deadline is not within 10 minutes ahead of this device\'s clock',
});

export class VaultError extends Error {
  constructor(code) {
    super(ERRORS[code] || code);
    this.name = 'VaultError';
    this.code = code;
  }
}

/** An error that carries only a code (and, for an HTTP answer, its `status`). */
export class ClientError extends Error {
  constructor(code, status = null) {
    super(status === null ? code : `${code} ${status}`);
    this.name = 'ClientError';
    this.code = code;
    this.status = status;
  }
}


/**
 * The text of `code` in the `errors` map, its {placeholders} filled from `params`
 * (e.g. {status}). A code not in the map shows the generic UNKNOWN text, never the code.
 */
export function errorText(errors, code, params = {}) {
  const texts = errors || {};
  const own = typeof code === 'string' && Object.prototype.hasOwnProperty.call(texts, code);
  return fillText((own ? texts[code] : texts.UNKNOWN) || '', params);
}

/** `text` with its {placeholders} filled from `params` (a missing one stays empty). */
export function fillText(text, params = {}) {
  return String(text || '').replace(/\{(\w+)\}/g, (_, name) => {
    const value = params && params[name];
    return value === undefined || value === null ? '' : String(value);
  });
}

/**
 * errorText for a thrown error: its code if the catalogue has it, else `fallback` (a library's
 * own error: ethers' carry codes such as INVALID_ARGUMENT, which would show the generic
 * UNKNOWN text instead of the fallback's), with its HTTP `status` (Drive and API errors) as
 * {status} and its own `params`, if any, as the other placeholders.
 */
export function errorTextOf(errors, error, fallback = 'UNKNOWN') {
  const own = error && typeof error.code === 'string' && Object.prototype.hasOwnProperty.call(errors || {}, error.code);
  const code = own ? error.code : fallback;
  return errorText(errors, code, { ...((error && error.params) || {}), status: error && error.status });
}
