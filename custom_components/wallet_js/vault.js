// Recovery phrase, local materials and the backup file (design.md section 4).
//
// Everything secret stays in this module's locals: the PIN, the phrase, the
// random key K, the device secret and every Argon2id output. Errors are
// VaultError (errors.js) with a stable `code` and a fixed message.
//
// Addresses: addressFromMnemonic() returns the EIP-55 checksummed address;
// storage keys and file names use the lowercase form (normalizeOwner).

import { HDNodeWallet, Mnemonic } from 'ethers';
import { argon2id, checkKdfParams, KdfError, SPEC_KDF_PARAMS } from './kdf.js';
import { b64decode, b64encode, concatBytes, fromUtf8, randomBytes, utf8, wipe, xorBytes } from './bytes.js';
import { VaultError } from './errors.js';

export { VaultError, ERRORS } from './errors.js';

export const DERIVATION_PATH = "m/44'/60'/0'/0/0";
export const MATERIAL_NAMES = Object.freeze([
  'lwrapIv', 'lwrapCt', 'kdfSaltB', 'kdfParams', 'ciphertextIv', 'ciphertext', 'devSecret',
]);
export const BACKUP_PREFIX = 'newbl-backup-';

const GCM_TAG = 16;

// ---------------------------------------------------------------- inputs

function checkPin(pin) {
  if (typeof pin !== 'string' || !/^[0-9]{6}$/.test(pin)) throw new VaultError('PIN_FORMAT');
  return utf8(pin);
}

/** Lowercase 0x address, or VaultError `missing` (NO_OWNER; a backup's: EXPORT_NO_OWNER) / OWNER_INVALID. */
export function normalizeOwner(owner, missing = 'NO_OWNER') {
  if (!owner) throw new VaultError(missing);
  if (typeof owner !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(owner)) throw new VaultError('OWNER_INVALID');
  return owner.toLowerCase();
}

export function backupFileName(owner) {
  return `${BACKUP_PREFIX}${normalizeOwner(owner)}.bin`;
}

// ---------------------------------------------------------------- phrase

function normalizeMnemonic(words) {
  const norm = String(words || '').trim().toLowerCase().split(/\s+/).join(' ');
  if (norm.split(' ').length !== 12 || !Mnemonic.isValidMnemonic(norm)) {
    throw new VaultError('MNEMONIC_INVALID');
  }
  return norm;
}

/** New BIP-39 English phrase (12 words, 128-bit entropy from getRandomValues). */
export function createMnemonic() {
  const entropy = randomBytes(16);
  try {
    return Mnemonic.fromEntropy(entropy).phrase;
  } finally {
    wipe(entropy);
  }
}

/** EIP-55 checksummed address at m/44'/60'/0'/0/0 (no passphrase). */
export function addressFromMnemonic(words) {
  return HDNodeWallet.fromPhrase(normalizeMnemonic(words), undefined, DERIVATION_PATH).address;
}

// ---------------------------------------------------------------- AES-GCM

async function gcmKey(raw) {
  return crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

async function gcmEncrypt(rawKey, iv, plaintext) {
  const key = await gcmKey(rawKey);
  return new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, plaintext));
}

/** Decrypts, or returns null when the tag does not verify. */
async function gcmDecrypt(rawKey, iv, ciphertext) {
  const key = await gcmKey(rawKey);
  try {
    return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, key, ciphertext));
  } catch (e) {
    return null;
  }
}

// ---------------------------------------------------------------- materials

function paramsToString(params) {
  const p = checkKdfParams(params);
  return JSON.stringify({ t: p.t, m: p.m, p: p.p });
}

function parseParams(value) {
  const obj = typeof value === 'string' ? JSON.parse(value) : value;
  return checkKdfParams(obj);
}

/**
 * Decodes and checks the seven fields (strings as stored; kdfParams may also be
 * an object). Throws VaultError(errorCode) when anything is missing or malformed.
 */
export function decodeMaterials(m, errorCode = 'MATERIALS_INVALID') {
  try {
    const d = {
      lwrapIv: b64decode(m.lwrapIv),
      lwrapCt: b64decode(m.lwrapCt),
      kdfSaltB: b64decode(m.kdfSaltB),
      params: parseParams(m.kdfParams),
      ciphertextIv: b64decode(m.ciphertextIv),
      ciphertext: b64decode(m.ciphertext),
      devSecret: b64decode(m.devSecret),
    };
    const ok =
      d.lwrapIv.length === 12 && d.ciphertextIv.length === 12 && d.kdfSaltB.length === 16 &&
      d.devSecret.length === 32 && d.lwrapCt.length === 32 + GCM_TAG && d.ciphertext.length > GCM_TAG;
    if (ok) return d;
  } catch (e) {
    // fall through: the detail could echo stored values
  }
  throw new VaultError(errorCode);
}

/** A backup bundle's seven fields, decoded: VaultError UNSUPPORTED_VERSION unless it is version 1,
 * BUNDLE_INVALID when a field is missing or malformed. */
function decodeBundle(bundle) {
  if (!bundle || bundle.version !== 1) throw new VaultError('UNSUPPORTED_VERSION');
  return decodeMaterials(bundle, 'BUNDLE_INVALID');
}

function canonicalMaterials(m) {
  const out = {};
  for (const name of MATERIAL_NAMES) out[name] = m[name];
  out.kdfParams = paramsToString(parseParams(m.kdfParams));
  return out;
}

/**
 * New wallet: phrase (or opts.words when importing), random K and devSecret,
 * K XOR devSecret wrapped under Argon2id(PIN). Returns {address, materials};
 * materials are the seven localStorage strings. Nothing is stored here.
 * opts.params overrides the KDF parameters (tests only).
 */
export async function wrapNew(pin, opts = {}) {
  const pinBytes = checkPin(pin);
  const params = checkKdfParams(opts.params || SPEC_KDF_PARAMS);
  const words = opts.words ? normalizeMnemonic(opts.words) : createMnemonic();
  const address = addressFromMnemonic(words);
  const k = randomBytes(32);
  const devSecret = randomBytes(32);
  const kdfSaltB = randomBytes(16);
  const lwrapIv = randomBytes(12);
  const ciphertextIv = randomBytes(12);
  let pinKey;
  let wrapped;
  try {
    pinKey = await argon2id(pinBytes, kdfSaltB, params);
    wrapped = xorBytes(k, devSecret);
    const lwrapCt = await gcmEncrypt(pinKey, lwrapIv, wrapped);
    const ciphertext = await gcmEncrypt(k, ciphertextIv, utf8(words));
    return {
      address,
      materials: {
        lwrapIv: b64encode(lwrapIv),
        lwrapCt: b64encode(lwrapCt),
        kdfSaltB: b64encode(kdfSaltB),
        kdfParams: paramsToString(params),
        ciphertextIv: b64encode(ciphertextIv),
        ciphertext: b64encode(ciphertext),
        devSecret: b64encode(devSecret),
      },
    };
  } finally {
    wipe(pinBytes, k, devSecret, pinKey, wrapped);
  }
}

/** PIN + materials -> the 12 words. Wrong PIN: VaultError code INVALID_PIN. */
export async function unwrapMnemonic(pin, materials) {
  const pinBytes = checkPin(pin);
  const d = decodeMaterials(materials || {});
  let pinKey;
  let wrapped;
  let k;
  let plain;
  try {
    pinKey = await argon2id(pinBytes, d.kdfSaltB, d.params);
    wrapped = await gcmDecrypt(pinKey, d.lwrapIv, d.lwrapCt);
    if (!wrapped) throw new VaultError('INVALID_PIN');
    k = xorBytes(wrapped, d.devSecret);
    plain = await gcmDecrypt(k, d.ciphertextIv, d.ciphertext);
    if (!plain) throw new VaultError('MATERIALS_CORRUPT');
    return normalizeMnemonic(fromUtf8(plain));
  } catch (e) {
    if (e instanceof VaultError || e instanceof KdfError) throw e;
    throw new VaultError('MATERIALS_CORRUPT');
  } finally {
    wipe(pinBytes, pinKey, wrapped, k, plain, d.devSecret);
  }
}

// ---------------------------------------------------------------- localStorage

function storageKey(owner, name) {
  return `${normalizeOwner(owner)}:${name}`;
}

/** Writes the seven fields under `<owner>:<name>` (after checking them). */
export function saveMaterials(owner, materials) {
  decodeMaterials(materials);
  const m = canonicalMaterials(materials);
  for (const name of MATERIAL_NAMES) window.localStorage.setItem(storageKey(owner, name), m[name]);
}

/** The seven stored strings, or null when any is missing. */
export function loadMaterials(owner) {
  const out = {};
  for (const name of MATERIAL_NAMES) {
    const v = window.localStorage.getItem(storageKey(owner, name));
    if (v === null) return null;
    out[name] = v;
  }
  return out;
}

export function hasMaterials(owner) {
  return loadMaterials(owner) !== null;
}

/** Removes the seven fields and driveMeta of this owner. */
export function clearMaterials(owner) {
  for (const name of [...MATERIAL_NAMES, 'driveMeta']) window.localStorage.removeItem(storageKey(owner, name));
}

/** driveMeta {id, sha256, updatedAt} saved after an upload. */
export function saveDriveMeta(owner, meta) {
  const value = JSON.stringify({ id: String(meta.id), sha256: String(meta.sha256), updatedAt: String(meta.updatedAt) });
  window.localStorage.setItem(storageKey(owner, 'driveMeta'), value);
}

export function loadDriveMeta(owner) {
  const v = window.localStorage.getItem(storageKey(owner, 'driveMeta'));
  if (v === null) return null;
  try {
    return JSON.parse(v);
  } catch (e) {
    return null;
  }
}

// ---------------------------------------------------------------- backup

/** Bundle {version: 1, ...seven fields} from localStorage. */
export function exportBundle(owner) {
  const key = normalizeOwner(owner, 'EXPORT_NO_OWNER');
  const m = loadMaterials(key);
  if (!m) throw new VaultError('MATERIALS_MISSING');
  decodeMaterials(m, 'MATERIALS_MISSING');
  return { version: 1, ...canonicalMaterials(m) };
}

/**
 * Backup file bytes: header JSON line + '\n' + AES-256-GCM(Argon2id(PIN, salt_rec), iv, bundle JSON).
 * Does not check that the PIN opens the bundle: use createBackup() for that.
 */
export async function encryptBackup(pin, owner, bundle, opts = {}) {
  const pinBytes = checkPin(pin);
  const ownerLc = normalizeOwner(owner);
  decodeBundle(bundle);
  const params = checkKdfParams(opts.params || SPEC_KDF_PARAMS);
  const saltRec = randomBytes(16);
  const iv = randomBytes(12);
  const header = {
    v: 1,
    alg: 'AES-GCM',
    kdf: { kind: 'Argon2id', salt_rec: b64encode(saltRec), t: params.t, m: params.m, p: params.p },
    iv: b64encode(iv),
    owner: ownerLc,
    derivation: DERIVATION_PATH,
  };
  const plain = utf8(JSON.stringify({ version: 1, ...canonicalMaterials(bundle) }));
  let key;
  try {
    key = await argon2id(pinBytes, saltRec, params);
    const body = await gcmEncrypt(key, iv, plain);
    return concatBytes(utf8(JSON.stringify(header) + '\n'), body);
  } finally {
    wipe(pinBytes, key, plain);
  }
}

/**
 * The KDF parameters a restore accepts: exactly design.md section 4's (`expected` is for
 * tests with small parameters). Any other value (a header asking for m = 4 GiB, say) is
 * refused with UNSUPPORTED_BACKUP before any Argon2 work and before anything is written.
 */
export function checkBackupKdf(params, expected = SPEC_KDF_PARAMS) {
  const want = expected || SPEC_KDF_PARAMS;
  if (!params || params.t !== want.t || params.m !== want.m || params.p !== want.p) {
    throw new VaultError('UNSUPPORTED_BACKUP');
  }
  return { t: want.t, m: want.m, p: want.p };
}

/**
 * Pure header parse: {header, owner, saltRec, iv, params, body}, or
 * VaultError INVALID_HEADER (version 1, AES-GCM, Argon2id, salt and iv present).
 */
export function parseBackupFile(fileBytes) {
  try {
    const bytes = fileBytes instanceof Uint8Array ? fileBytes : new Uint8Array(fileBytes);
    const nl = bytes.indexOf(0x0a);
    if (nl > 0 && nl < 4096) {
      const header = JSON.parse(fromUtf8(bytes.subarray(0, nl)));
      const kdf = header.kdf || {};
      const saltRec = b64decode(kdf.salt_rec);
      const iv = b64decode(header.iv);
      const body = bytes.slice(nl + 1);
      if (
        header.v === 1 && header.alg === 'AES-GCM' && kdf.kind === 'Argon2id' &&
        saltRec.length === 16 && iv.length === 12 && typeof header.owner === 'string' &&
        body.length > GCM_TAG
      ) {
        // As written: restore accepts only known values (checkBackupKdf), anything else is
        // an unsupported backup rather than a malformed one.
        const params = { t: kdf.t, m: kdf.m, p: kdf.p };
        return { header, owner: header.owner.toLowerCase(), saltRec, iv, params, body };
      }
    }
  } catch (e) {
    // fall through
  }
  throw new VaultError('INVALID_HEADER');
}

/**
 * Backup file -> bundle. Errors (in this order): PIN_FORMAT, NO_OWNER, INVALID_HEADER,
 * UNSUPPORTED_BACKUP, OWNER_MISMATCH, INVALID_PIN, UNSUPPORTED_VERSION, BUNDLE_INVALID.
 * opts.params: the KDF parameters to accept (tests only; design.md's otherwise).
 */
export async function decryptBackup(pin, fileBytes, activeOwner, opts = {}) {
  const pinBytes = checkPin(pin);
  const owner = normalizeOwner(activeOwner);
  const f = parseBackupFile(fileBytes);
  const params = checkBackupKdf(f.params, opts.params);
  if (f.owner !== owner) throw new VaultError('OWNER_MISMATCH');
  let key;
  let plain;
  try {
    key = await argon2id(pinBytes, f.saltRec, params);
    plain = await gcmDecrypt(key, f.iv, f.body);
    if (!plain) throw new VaultError('INVALID_PIN');
    let bundle;
    try {
      bundle = JSON.parse(fromUtf8(plain));
    } catch (e) {
      throw new VaultError('BUNDLE_INVALID');
    }
    decodeBundle(bundle);
    return { version: 1, ...canonicalMaterials(bundle) };
  } finally {
    wipe(pinBytes, key, plain);
  }
}

/**
 * Opens the bundle with the PIN, checks the derived address equals the active
 * owner, and only then writes the materials to localStorage. Returns the address.
 */
export async function restoreBundle(pin, bundle, activeOwner, opts = {}) {
  const owner = normalizeOwner(activeOwner);
  checkBackupKdf(decodeBundle(bundle).params, opts.params); // the local wrap's too
  const materials = canonicalMaterials(bundle);
  const words = await unwrapMnemonic(pin, materials);
  const address = addressFromMnemonic(words);
  if (address.toLowerCase() !== owner) throw new VaultError('ADDRESS_MISMATCH');
  saveMaterials(owner, materials);
  return address;
}

/** decryptBackup + restoreBundle (two Argon2id runs with the same PIN). opts: as decryptBackup's. */
export async function restoreFromBackup(pin, fileBytes, activeOwner, opts = {}) {
  const bundle = await decryptBackup(pin, fileBytes, activeOwner, opts);
  return restoreBundle(pin, bundle, activeOwner, opts);
}

/**
 * Backup of the local wallet: exports the bundle, checks that this PIN opens it
 * and that it belongs to the owner (a mistyped PIN would make the file
 * unrestorable), then encrypts. Returns {fileName, bytes}.
 */
export async function createBackup(pin, owner, opts = {}) {
  const bundle = exportBundle(owner);
  const words = await unwrapMnemonic(pin, bundle);
  if (addressFromMnemonic(words).toLowerCase() !== normalizeOwner(owner)) {
    throw new VaultError('ADDRESS_MISMATCH');
  }
  const bytes = await encryptBackup(pin, owner, bundle, opts);
  return { fileName: backupFileName(owner), bytes };
}

/** Lowercase hex SHA-256 (for driveMeta.sha256). */
export async function sha256Hex(bytes) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}
