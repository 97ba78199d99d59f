// Signing with the local wallet. The key exists only inside withUnlocked():
// PIN -> phrase -> ethers Wallet -> fn(wallet) -> references dropped.
// Results (raw transactions, signatures) are public and may go to the server.

import { HDNodeWallet, TypedDataEncoder, Wallet } from 'ethers';
import { DERIVATION_PATH, loadMaterials, normalizeOwner, unwrapMnemonic } from './vault.js';
import { VaultError } from './errors.js';

/**
 * Unlocks the owner's wallet for the duration of fn(wallet) and returns fn's
 * result. fn must not keep or return the wallet. Errors: NO_OWNER,
 * RECOVERY_REQUIRED ('Re-onboard/recover required'), PIN_FORMAT, INVALID_PIN,
 * SIGNER_MISMATCH, KDF_LOAD ('failed to load argon2').
 */
export async function withUnlocked(owner, pin, fn) {
  const ownerLc = normalizeOwner(owner);
  const materials = loadMaterials(ownerLc);
  if (!materials) throw new VaultError('RECOVERY_REQUIRED');
  let words = await unwrapMnemonic(pin, materials);
  // A plain Wallet (no mnemonic attached) is all fn needs.
  let wallet = new Wallet(HDNodeWallet.fromPhrase(words, undefined, DERIVATION_PATH).privateKey);
  words = null;
  try {
    if (wallet.address.toLowerCase() !== ownerLc) throw new VaultError('SIGNER_MISMATCH');
    return await fn(wallet);
  } finally {
    wallet = null;
  }
}

const DEC_RE = /^(0|[1-9][0-9]*)$/;

function dec(value, required) {
  if ((value === undefined || value === null || value === '') && !required) return 0n;
  const s = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof s !== 'string' || !DEC_RE.test(s) || s.length > 78) throw new VaultError('INVALID_TX');
  return BigInt(s);
}

/**
 * Pure check of a built transaction {chain_id, to, data, value, nonce,
 * gas_limit, gas_price} (decimal strings, data 0x hex) into an ethers legacy
 * (type 0) request with an EIP-155 chain id. Throws VaultError INVALID_TX.
 */
export function legacyTxRequest(tx) {
  if (!tx || typeof tx !== 'object') throw new VaultError('INVALID_TX');
  const chainId = dec(tx.chain_id, true);
  const nonce = dec(tx.nonce, true);
  if (chainId === 0n || nonce > BigInt(Number.MAX_SAFE_INTEGER)) throw new VaultError('INVALID_TX');
  if (typeof tx.to !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(tx.to)) throw new VaultError('INVALID_TX');
  const data = tx.data === undefined || tx.data === null || tx.data === '' ? '0x' : tx.data;
  if (typeof data !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(data)) throw new VaultError('INVALID_TX');
  return {
    type: 0,
    chainId,
    to: tx.to.toLowerCase(), // lowercase skips ethers' checksum check on mixed case input
    data: data.toLowerCase(),
    value: dec(tx.value, false),
    nonce: Number(nonce),
    gasLimit: dec(tx.gas_limit, true),
    gasPrice: dec(tx.gas_price, true),
  };
}

/** Signs a built transaction as legacy type 0 (EIP-155). Returns the raw 0x hex. */
export async function signLegacyTx(owner, pin, tx) {
  const request = legacyTxRequest(tx); // before the KDF: a bad tx costs nothing
  return withUnlocked(owner, pin, (wallet) => wallet.signTransaction(request));
}

function typedDataParts(domain, types, message) {
  if (!domain || !types || !message || typeof types !== 'object') throw new VaultError('INVALID_TYPED_DATA');
  const t = { ...types };
  delete t.EIP712Domain; // ethers derives the domain type itself
  try {
    TypedDataEncoder.hash(domain, t, message); // validates shapes and values
  } catch (e) {
    throw new VaultError('INVALID_TYPED_DATA');
  }
  return t;
}

/** EIP-712 signature (0x, 65 bytes) of message under domain/types. */
export async function signTypedData(owner, pin, domain, types, message) {
  const t = typedDataParts(domain, types, message);
  return withUnlocked(owner, pin, (wallet) => wallet.signTypedData(domain, t, message));
}
