// Backup to and restore from the Drive app-data folder (pure JS, no React).
//
// runBackup writes safely. The backup file is never replaced by bytes that have not
// already been written to Drive and read back intact:
//   1. createBackup checks that the PIN opens the local bundle and that it derives the
//      owner's address, then encrypts (a mistyped PIN can never produce the backup).
//   2. The new bytes go to a staging file `<backup name>.tmp` (created once, then
//      updated), are downloaded again and compared by SHA-256.
//   3. Only then is the real file updated (or created) with those same bytes; Drive
//      replaces a file's content atomically, so the real file is either the old backup
//      or the new one. It is downloaded and compared again; on a mismatch the previous
//      bytes (read before step 3) are written back and the backup fails.
// So a failure at any step leaves the previous backup on Drive. The staging file stays
// in the app-data folder (the same encrypted content) and is reused by the next backup.
//
// runRestore validates everything (vault.restoreFromBackup) before writing the
// materials, so a failed restore leaves local storage as it was.
//
// Errors carry a stable `code`: VaultError codes (vault.js), DriveError codes (drive.js),
// and BackupError NO_BACKUP / BACKUP_VERIFY_FAILED below.

import {
  backupFileName, createBackup, loadDriveMeta, normalizeOwner, parseBackupFile, restoreFromBackup, saveDriveMeta, sha256Hex,
} from './vault.js';

export const STAGING_SUFFIX = '.tmp';

const MESSAGES = Object.freeze({
  NO_BACKUP: 'No backup file for this address in Google Drive (appDataFolder)',
  BACKUP_VERIFY_FAILED: 'Backup verification failed: Drive returned different bytes',
});

export class BackupError extends Error {
  constructor(code) {
    super(MESSAGES[code] || code);
    this.name = 'BackupError';
    this.code = code;
  }
}

function driveTime(file) {
  return (file && file.modifiedTime) || new Date().toISOString();
}

/** Upload (create or update), read back, compare. Returns the Drive file. */
async function writeVerified(drive, token, name, bytes, wantSha, existingId) {
  const file = await drive.uploadFile(token, name, bytes, existingId);
  const back = await drive.downloadFile(token, file.id);
  if ((await sha256Hex(back)) !== wantSha) throw new BackupError('BACKUP_VERIFY_FAILED');
  return file;
}

/**
 * Encrypts the owner's wallet under the PIN and writes it to Drive as
 * newbl-backup-<owner>.bin (see the top of this file). Saves driveMeta locally and
 * returns {id, sha256, updatedAt}. opts.params: KDF parameters (tests only).
 */
export async function runBackup({ owner, pin, token, drive, params } = {}) {
  const ownerLc = normalizeOwner(owner, 'EXPORT_NO_OWNER');
  const { fileName, bytes } = await createBackup(pin, ownerLc, params ? { params } : {});
  const sha256 = await sha256Hex(bytes);

  const staging = await drive.findFile(token, fileName + STAGING_SUFFIX);
  await writeVerified(drive, token, fileName + STAGING_SUFFIX, bytes, sha256, staging && staging.id);

  const existing = await drive.findFile(token, fileName);
  let previous = null;
  if (existing) {
    try {
      previous = await drive.downloadFile(token, existing.id);
      if (parseBackupFile(previous).owner !== ownerLc) previous = null;
    } catch (e) {
      previous = null; // unreadable or not a backup of this owner: nothing worth rolling back to
    }
  }
  let file;
  try {
    file = await writeVerified(drive, token, fileName, bytes, sha256, existing && existing.id);
  } catch (e) {
    // Only a completed update can have changed the real file; put the old bytes back.
    if (existing && previous && e instanceof BackupError) {
      await drive.uploadFile(token, fileName, previous, existing.id).catch(() => {});
    }
    throw e;
  }
  const meta = { id: file.id, sha256, updatedAt: driveTime(file) };
  saveDriveMeta(ownerLc, meta);
  return meta;
}

/**
 * Finds newbl-backup-<owner>.bin, downloads it and restores it with the PIN.
 * Returns {address, id, sha256}. Errors: NO_BACKUP, Drive errors, and vault's
 * INVALID_HEADER, UNSUPPORTED_BACKUP, OWNER_MISMATCH, INVALID_PIN, UNSUPPORTED_VERSION, BUNDLE_INVALID,
 * ADDRESS_MISMATCH. Local materials are written only after every check passed.
 * params: the KDF parameters to accept (tests only; design.md's otherwise).
 */
export async function runRestore({ owner, pin, token, drive, params } = {}) {
  const ownerLc = normalizeOwner(owner);
  const fileName = backupFileName(ownerLc);
  const file = await drive.findFile(token, fileName);
  if (!file) throw new BackupError('NO_BACKUP');
  const bytes = await drive.downloadFile(token, file.id);
  const address = await restoreFromBackup(pin, bytes, ownerLc, params ? { params } : {});
  const sha256 = await sha256Hex(bytes);
  saveDriveMeta(ownerLc, { id: file.id, sha256, updatedAt: driveTime(file) });
  return { address, id: file.id, sha256 };
}

const TOUCH_ATTEMPTS = 3;
const TOUCH_RETRY_MS = 1000;

/**
 * Tells our server that a backup of `owner` was written (POST /api/v1/backup/touch with
 * {address}: refused when the account's wallet changed meanwhile). Carries no secret. Its
 * failure is ignored: resolves true on success, false otherwise. A lost answer or a server error
 * is tried again (TOUCH_ATTEMPTS in all): a server that never hears of the backup sends a new
 * device to onboarding. Should all fail, the device check tells it later (driveMeta is saved).
 * apiBase: '' for same origin, or the backend URL in `reflex run` dev.
 */
export async function touchBackup(apiBase = '', owner = '', retryMs = TOUCH_RETRY_MS) {
  const init = { method: 'POST', credentials: 'include' };
  if (owner) {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify({ address: normalizeOwner(owner) });
  }
  for (let attempt = 1; ; attempt += 1) {
    try {
      const resp = await fetch(`${apiBase}/api/v1/backup/touch`, init);
      if (resp.ok || resp.status < 500 || attempt >= TOUCH_ATTEMPTS) return resp.ok;
    } catch (e) {
      if (attempt >= TOUCH_ATTEMPTS) return false;
    }
    await new Promise((resolve) => setTimeout(resolve, retryMs * attempt));
  }
}

export { loadDriveMeta };
