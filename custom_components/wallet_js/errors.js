// Errors thrown by vault.js / keyring.js: a stable machine `code` for the UI's
// catalogue lookup and a fixed English message (spec section 5 / 8 wording).
// Messages never contain secrets or user data.

export const ERRORS = Object.freeze({
  PIN_FORMAT: 'PIN must be 6 digits.',
  INVALID_PIN: 'Invalid PIN',
  NO_OWNER: 'No active owner address',
  OWNER_INVALID: 'Invalid owner address',
  MATERIALS_MISSING: 'Local materials missing for bundle',
  MATERIALS_INVALID: 'Local materials are invalid',
  MATERIALS_CORRUPT: 'Local materials are corrupted',
  RECOVERY_REQUIRED: 'Re-onboard/recover required',
  MNEMONIC_INVALID: 'Invalid recovery phrase',
  INVALID_HEADER: 'Invalid backup header',
  OWNER_MISMATCH: 'Backup owner mismatch',
  UNSUPPORTED_VERSION: 'Unsupported bundle version',
  BUNDLE_INVALID: 'Invalid backup bundle',
  ADDRESS_MISMATCH: 'Address derived from mnemonic does not match the active owner',
  SIGNER_MISMATCH: 'Signer address does not match the active owner',
  INVALID_TX: 'invalid transaction',
  INVALID_TYPED_DATA: 'Invalid typed data',
});

export class VaultError extends Error {
  constructor(code) {
    super(ERRORS[code] || code);
    this.name = 'VaultError';
    this.code = code;
  }
}
