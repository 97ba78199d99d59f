// Test bundle entry: exposes the wallet_js modules on window for page.evaluate.
import * as vault from '../../custom_components/wallet_js/vault.js';
import * as keyring from '../../custom_components/wallet_js/keyring.js';
import * as kdf from '../../custom_components/wallet_js/kdf.js';
import * as bytes from '../../custom_components/wallet_js/bytes.js';
import * as errors from '../../custom_components/wallet_js/errors.js';

const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const unhex = (s) => new Uint8Array(s.match(/../g).map((x) => parseInt(x, 16)));

// Rejects after ms so that a hung promise fails the test instead of blocking it.
function withTimeout(promise, ms, label = 'timeout') {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(label)), ms);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

// Runs fn and reports {ok, value} or {ok: false, code, message, name}.
async function settle(fn, ms = 60000) {
  try {
    return { ok: true, value: await withTimeout(Promise.resolve().then(fn), ms) };
  } catch (e) {
    return { ok: false, code: e.code || null, message: e.message, name: e.name };
  }
}

window.nb = { vault, keyring, kdf, bytes, errors, hex, unhex, withTimeout, settle };
