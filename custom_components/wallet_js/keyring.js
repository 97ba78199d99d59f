// Signing with the local wallet. The key exists only inside withUnlocked():
// PIN -> phrase -> ethers Wallet -> fn(wallet) -> references dropped.
// Results (raw transactions, signatures) are public and may go to the server.

import { HDNodeWallet, TypedDataEncoder, Wallet, formatUnits, getAddress } from 'ethers';
import { DERIVATION_PATH, loadMaterials, normalizeOwner, unwrapMnemonic } from './vault.js';
import { VaultError, fillText } from './errors.js';

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
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/** A built transaction's number (bigOrNull's, a BigInt excepted: JSON has none) or, when not
 * `required`, absent as 0n; VaultError INVALID_TX otherwise. */
function dec(value, required) {
  if ((value === undefined || value === null || value === '') && !required) return 0n;
  const n = typeof value === 'bigint' ? null : bigOrNull(value);
  if (n === null) throw new VaultError('INVALID_TX');
  return n;
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
  if (typeof tx.to !== 'string' || !ADDRESS_RE.test(tx.to)) throw new VaultError('INVALID_TX');
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
  return signTxRequest(owner, pin, legacyTxRequest(tx)); // checked before the KDF: a bad tx costs nothing
}

/** Signs a request from legacyTxRequest as it is: the very object a summary was computed from. */
export async function signTxRequest(owner, pin, request) {
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

// ---------------------------------------------------------------- re-checks (what is signed is what was shown)
// `chains` is the build-time table of the bundle (wallet_app/services/chain_table.py):
// chain id (decimal string) -> {payment_contract, native_symbol, native_decimals}.
// `expect` is what the page showed: {chainId, merchant, token, units} (units: decimal string).

const APPROVE_SELECTOR = '0x095ea7b3'; // approve(address,uint256)
export const PAY_DOMAIN_NAME = 'NewblPayment2';
export const PAY_DOMAIN_VERSION = '1';
export const MAX_DEADLINE_AHEAD_SECONDS = 600;
export const PAY_TYPES = Object.freeze([
  ['merchant', 'address'], ['token', 'address'], ['from', 'address'],
  ['amount', 'uint256'], ['paymentRef', 'bytes32'], ['deadline', 'uint48'],
]);

function mismatch() {
  return new VaultError('REQUEST_MISMATCH');
}

/**
 * A Pay or Permit deadline against this phone's clock: in the future and at most 10 minutes
 * ahead (the server sets its now + 5 minutes). Checked after every other field, so CLOCK_OFF
 * says the request is the one confirmed and only the times disagree: this phone's clock with
 * the server's. Either way nothing is signed.
 */
function checkDeadline(value, nowSeconds) {
  const deadline = bigOrNull(value);
  const now = BigInt(nowSeconds);
  if (deadline === null) throw mismatch();
  if (deadline <= now || deadline > now + BigInt(MAX_DEADLINE_AHEAD_SECONDS)) throw new VaultError('CLOCK_OFF');
}

function sameAddress(a, b) {
  return typeof a === 'string' && typeof b === 'string' && ADDRESS_RE.test(a) && ADDRESS_RE.test(b)
    && a.toLowerCase() === b.toLowerCase();
}

/** A non-negative integer (number, bigint or decimal string) as a BigInt, else null. */
function bigOrNull(value) {
  if (typeof value === 'bigint') return value >= 0n ? value : null;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : null;
  return typeof value === 'string' && DEC_RE.test(value) && value.length <= 78 ? BigInt(value) : null;
}

function sameNumber(a, b) {
  const x = bigOrNull(a);
  return x !== null && x === bigOrNull(b);
}

/** `types` holds exactly the type `name` (besides EIP712Domain), its fields as `spec` says, in order. */
function onlyType(types, name, spec) {
  const names = Object.keys(types).filter((k) => k !== 'EIP712Domain');
  const fields = types[name];
  if (names.join(',') !== name || !Array.isArray(fields) || fields.length !== spec.length
      || fields.some((f, i) => !f || f.name !== spec[i][0] || f.type !== spec[i][1])) {
    throw mismatch();
  }
}

/** The chain's payment contract from the shipped table; REQUEST_MISMATCH when it has none. */
export function paymentContract(chains, chainId) {
  const entry = chains && bigOrNull(chainId) !== null ? chains[String(bigOrNull(chainId))] : null;
  const contract = entry && entry.payment_contract;
  if (!contract || !ADDRESS_RE.test(contract)) throw mismatch();
  return contract;
}

/**
 * What a transaction request (legacyTxRequest) does, decoded from the request itself:
 * {chainId, to, value, native_symbol, native_decimals}; the symbol is '' for a chain not in the table.
 */
export function txSummary(request, chains) {
  const entry = (chains && chains[String(request.chainId)]) || {};
  return {
    chainId: request.chainId,
    to: checksumAddress(request.to),
    value: request.value,
    nativeSymbol: entry.native_symbol || '',
    nativeDecimals: Number.isInteger(entry.native_decimals) ? entry.native_decimals : 18,
  };
}

// transfer(address,uint256): the selector, the recipient word (its top 12 bytes zero), the amount word; nothing more.
const TRANSFER_RE = /^0xa9059cbb0{24}([0-9a-f]{40})([0-9a-f]{64})$/;

/**
 * The request's data decoded when it is exactly an ERC-20 transfer(address,uint256) call
 * (4 + 32 + 32 bytes, the address word's top 12 bytes zero): {recipient (EIP-55), units
 * (BigInt, the token's smallest units)}; null for any other data (other calls, other lengths).
 */
export function tokenTransfer(request) {
  const data = request && typeof request.data === 'string' ? request.data.toLowerCase() : '';
  const m = TRANSFER_RE.exec(data);
  return m ? { recipient: getAddress(`0x${m[1]}`), units: BigInt(`0x${m[2]}`) } : null;
}

// The approvals a call can give (services.chain.ERC20_CALLS' approvals), each exactly its arguments:
// address words' top 12 bytes zero, a bool 0 or 1, a uint160 / uint48 in range; nothing more.
const ADDRESS_WORD = '0{24}([0-9a-f]{40})';
const APPROVE_RE = new RegExp(`^0x095ea7b3${ADDRESS_WORD}([0-9a-f]{64})$`);
// increaseAllowance(address,uint256), increaseApproval(address,uint256) (older tokens)
const INCREASE_RE = new RegExp(`^0x(?:39509351|d73dd623)${ADDRESS_WORD}([0-9a-f]{64})$`);
const FOR_ALL_RE = new RegExp(`^0xa22cb465${ADDRESS_WORD}0{63}([01])$`); // setApprovalForAll(address,bool)
// Permit2's approve(address token, address spender, uint160 amount, uint48 expiration)
const PERMIT2_APPROVE_RE = new RegExp(
  `^0x87517c45${ADDRESS_WORD}${ADDRESS_WORD}0{24}([0-9a-f]{40})0{52}([0-9a-f]{12})$`);
/** Uniswap's Permit2, at this address on every chain: its approve is decoded only when called on it. */
export const PERMIT2 = '0x000000000022D473030F116dDEE9F6B43aC78BA3';
/** Approvals of this or more are unlimited (services.txpreview.UNLIMITED). */
export const UNLIMITED = 2n ** 128n;
const MAX_SHOWN_TIME = 253402300800n; // 10000-01-01 UTC: a Permit2 expiration from then on is none

/**
 * The approval the request's data gives, decoded when it is exactly one of: approve,
 * increaseAllowance / increaseApproval ({kind: 'approve' | 'increase', spender, units}),
 * setApprovalForAll ({kind: 'all', operator, approved}), Permit2's approve on PERMIT2 ({kind:
 * 'permit2', token, spender, units, expiration}); addresses EIP-55, numbers BigInt. null otherwise.
 */
export function tokenApproval(request) {
  const data = request && typeof request.data === 'string' ? request.data.toLowerCase() : '';
  const address = (hex) => getAddress(`0x${hex}`);
  let m = APPROVE_RE.exec(data) || INCREASE_RE.exec(data);
  if (m) {
    const kind = data.startsWith(APPROVE_SELECTOR) ? 'approve' : 'increase';
    return { kind, spender: address(m[1]), units: BigInt(`0x${m[2]}`) };
  }
  m = FOR_ALL_RE.exec(data);
  if (m) return { kind: 'all', operator: address(m[1]), approved: m[2] === '1' };
  m = PERMIT2_APPROVE_RE.exec(data);
  if (m && sameAddress(request.to, PERMIT2)) {
    return {
      kind: 'permit2', token: address(m[1]), spender: address(m[2]), units: BigInt(`0x${m[3]}`),
      expiration: BigInt(`0x${m[4]}`),
    };
  }
  return null;
}

/** Permit2's expiration as the preview shows it: 0 is the block it is mined in; from the year 10000, none. */
function expirationText(seconds, messages) {
  if (seconds === 0n) return messages.sign_expires_at_once;
  if (seconds >= MAX_SHOWN_TIME) return messages.sign_expires_never;
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** An approval's lines (tokenApproval): who may take, how much, of which token through Permit2, until when. */
function approvalLines(approval, request, shown, messages) {
  if (approval.kind === 'all') {
    const text = approval.approved ? messages.pin_approve_all : messages.pin_revoke_all;
    return [fillText(text, { address: approval.operator })];
  }
  const spenderText = approval.kind === 'increase' ? messages.pin_approve_more_spender : messages.pin_approve_spender;
  const lines = [fillText(spenderText, { address: approval.spender })];
  if (approval.kind === 'permit2') lines.push(fillText(messages.pin_permit2_token, { address: approval.token }));
  if (approval.units >= UNLIMITED) {
    lines.push(messages.pin_approve_unlimited);
  } else if (approval.kind !== 'permit2' && shownTokenOf(request, shown)) {
    const amount = formatAmount(approval.units, shown.decimals);
    lines.push(fillText(messages.pin_approve_amount, { amount, symbol: shown.symbol }));
  } else {
    lines.push(fillText(messages.pin_approve_units, { units: approval.units.toString() }));
  }
  if (approval.kind === 'permit2') {
    lines.push(fillText(messages.pin_approve_until, { time: expirationText(approval.expiration, messages) }));
  }
  return lines;
}

/** `shown` ({chainId, address, symbol, decimals}: the token the page named) is the request's own
 * contract on its chain, with a symbol and ERC-20 decimals its amounts can be shown in. */
function shownTokenOf(request, shown) {
  return !!shown && sameNumber(request.chainId, shown.chainId) && sameAddress(request.to, shown.address)
    && typeof shown.symbol === 'string' && shown.symbol !== ''
    && Number.isInteger(shown.decimals) && shown.decimals >= 0 && shown.decimals <= 77;
}

/**
 * The PIN dialog's lines for a transaction request, in `messages`' language, all decoded from
 * the request itself: its recipient and native value; for exactly an ERC-20 transfer call
 * (tokenTransfer) also the token's recipient and amount; for exactly an approval (tokenApproval)
 * its spender or operator, its amount (unlimited from UNLIMITED), and for Permit2's the token and
 * the expiration. An amount is in the token's decimals with its symbol when `shown` names this
 * very token (its chain and contract), else in the token's smallest units, said so.
 */
export function txSummaryLines(request, chains, shown, messages) {
  const s = txSummary(request, chains);
  const lines = [
    fillText(messages.pin_tx_to, { address: s.to }),
    fillText(messages.pin_tx_value, { amount: formatAmount(s.value, s.nativeDecimals), symbol: s.nativeSymbol }),
  ];
  const transfer = tokenTransfer(request);
  if (transfer) {
    lines.push(fillText(messages.pin_token_recipient, { address: transfer.recipient }));
    lines.push(shownTokenOf(request, shown)
      ? fillText(messages.pin_token_amount, { amount: formatAmount(transfer.units, shown.decimals), symbol: shown.symbol })
      : fillText(messages.pin_token_units, { units: transfer.units.toString() }));
  }
  const approval = tokenApproval(request);
  return approval ? [...lines, ...approvalLines(approval, request, shown, messages)] : lines;
}

/** The EIP-55 form of an address (any case in). */
export function checksumAddress(address) {
  if (typeof address !== 'string' || !ADDRESS_RE.test(address)) throw mismatch();
  return getAddress(address.toLowerCase());
}

/** `value` (smallest units) in whole units without a trailing '.0' (1500000n, 6 -> '1.5'). */
export function formatAmount(value, decimals) {
  const text = formatUnits(value, decimals);
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}

const word = (hex) => hex.toLowerCase().replace(/^0x/, '').padStart(64, '0');

/**
 * The /payment approve: `to` is the link's token, value 0, the chain the link's, and the data
 * exactly approve(the chain's payment contract, the payment amount). Returns {spender, amount}
 * (as decoded from the request); REQUEST_MISMATCH otherwise.
 */
export function checkApprove(request, expect, chains) {
  if (!expect || !sameNumber(request.chainId, expect.chainId)) throw mismatch();
  const spender = paymentContract(chains, expect.chainId);
  const units = bigOrNull(expect.units);
  if (units === null || units === 0n || !sameAddress(request.to, expect.token) || request.value !== 0n) {
    throw mismatch();
  }
  const data = `${APPROVE_SELECTOR}${word(spender)}${word(units.toString(16))}`;
  if (request.data !== data) throw mismatch();
  return { spender: checksumAddress(spender), amount: units };
}

/**
 * The Pay typed data against what the page showed: fixed domain name/version, the link's chain,
 * that chain's payment contract, the Pay type as it is, message merchant/token/amount equal to
 * the link's, `from` the owner; then the deadline (checkDeadline). Returns the types for
 * signing; REQUEST_MISMATCH (CLOCK_OFF for the deadline alone) otherwise.
 */
export function checkPayTyped(typed, expect, owner, chains, nowSeconds = Math.floor(Date.now() / 1000)) {
  const { domain, types, message } = typed || {};
  if (!domain || !types || !message || !expect) throw mismatch();
  const contract = paymentContract(chains, expect.chainId);
  const domainKeys = Object.keys(domain).sort().join(',');
  if (domainKeys !== 'chainId,name,verifyingContract,version' || domain.name !== PAY_DOMAIN_NAME
      || domain.version !== PAY_DOMAIN_VERSION || !sameNumber(domain.chainId, expect.chainId)
      || !sameAddress(domain.verifyingContract, contract)) {
    throw mismatch();
  }
  onlyType(types, 'Pay', PAY_TYPES);
  if (!sameAddress(message.merchant, expect.merchant) || !sameAddress(message.token, expect.token)
      || !sameAddress(message.from, owner) || !sameNumber(message.amount, expect.units)
      || bigOrNull(expect.units) === 0n) {
    throw mismatch();
  }
  const t = typedDataParts(domain, types, message);
  checkDeadline(message.deadline, nowSeconds);
  return t;
}

/**
 * checkPayTyped (`nowSeconds`: the instant the PIN dialog checked it when it opened), then the
 * EIP-712 signature of exactly that typed data.
 */
export async function signPay(owner, pin, typed, expect, chains, nowSeconds = Math.floor(Date.now() / 1000)) {
  const t = checkPayTyped(typed, expect, owner, chains, nowSeconds);
  return withUnlocked(owner, pin, (wallet) => wallet.signTypedData(typed.domain, t, typed.message));
}

// ---------------------------------------------------------------- gasless payments (EIP-2612 permit)

export const PERMIT_TYPES = Object.freeze([
  ['owner', 'address'], ['spender', 'address'], ['value', 'uint256'], ['nonce', 'uint256'], ['deadline', 'uint256'],
]);

/**
 * The payment's Permit typed data against what the page showed: the domain is the link's token on
 * the link's chain (its name and version as the server read them: the token itself refuses wrong
 * ones), the Permit type as it is, owner the owner, spender the chain's payment contract from the
 * bundle's table, value exactly the payment amount; then the deadline (checkDeadline). Returns the
 * types for signing; REQUEST_MISMATCH (CLOCK_OFF for the deadline alone) otherwise.
 */
export function checkPermitTyped(typed, expect, owner, chains, nowSeconds = Math.floor(Date.now() / 1000)) {
  const { domain, types, message } = typed || {};
  if (!domain || !types || !message || !expect) throw mismatch();
  const contract = paymentContract(chains, expect.chainId);
  const domainKeys = Object.keys(domain).sort().join(',');
  if (domainKeys !== 'chainId,name,verifyingContract,version' || typeof domain.name !== 'string'
      || !domain.name || typeof domain.version !== 'string' || !domain.version
      || !sameNumber(domain.chainId, expect.chainId) || !sameAddress(domain.verifyingContract, expect.token)) {
    throw mismatch();
  }
  onlyType(types, 'Permit', PERMIT_TYPES);
  const messageKeys = Object.keys(message).sort().join(',');
  if (messageKeys !== 'deadline,nonce,owner,spender,value' || !sameAddress(message.owner, owner)
      || !sameAddress(message.spender, contract) || !sameNumber(message.value, expect.units)
      || bigOrNull(expect.units) === 0n || bigOrNull(message.nonce) === null) {
    throw mismatch();
  }
  const t = typedDataParts(domain, types, message);
  checkDeadline(message.deadline, nowSeconds);
  return t;
}

/**
 * checkPermitTyped and checkPayTyped; any other refusal of either comes before a CLOCK_OFF of
 * either, so CLOCK_OFF still means both are what the page showed. Returns [permit types, Pay types].
 */
export function checkPermitAndPay(permitTyped, payTyped, expect, owner, chains, nowSeconds = Math.floor(Date.now() / 1000)) {
  let clockOff = null;
  const checked = (check, typed) => {
    try {
      return check(typed, expect, owner, chains, nowSeconds);
    } catch (e) {
      if (e.code !== 'CLOCK_OFF') throw e;
      clockOff = e;
      return null;
    }
  };
  const parts = [checked(checkPermitTyped, permitTyped), checked(checkPayTyped, payTyped)];
  if (clockOff) throw clockOff;
  return parts;
}

/**
 * Both checks (`nowSeconds` as signPay's), then ONE unlock signs the Permit and the Pay message
 * (the key is derived once). Returns {signature, permit_signature} (public).
 */
export async function signPermitAndPay(owner, pin, permitTyped, payTyped, expect, chains,
  nowSeconds = Math.floor(Date.now() / 1000)) {
  const [pt, t] = checkPermitAndPay(permitTyped, payTyped, expect, owner, chains, nowSeconds);
  return withUnlocked(owner, pin, async (wallet) => ({
    permit_signature: await wallet.signTypedData(permitTyped.domain, pt, permitTyped.message),
    signature: await wallet.signTypedData(payTyped.domain, t, payTyped.message),
  }));
}
