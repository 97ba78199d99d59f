/* Argon2id in a classic Web Worker (design.md section 6).
 *
 * Served from assets/ at /kdf-worker.js; argon2-browser's files are copied by
 * custom_components/wallet_js/vendor.py into assets/argon2/ (lib/ and dist/), so
 * they resolve relative to this script. This response needs
 * `script-src 'self' 'wasm-unsafe-eval'` (a URL worker takes its own CSP).
 *
 * Protocol: in  {id, pass: Uint8Array, salt: Uint8Array, t, m, p, len}
 *           out {id, hash: Uint8Array}  or  {id, error: {kind: 'load'|'hash', message}}
 * The worker stays alive between jobs (warm mode); kdf.js terminates it after
 * one job unless asked otherwise. A failed load is cached by argon2-browser, so
 * after any load error the worker reports 'load' for every later job.
 */
'use strict';

var ARGON2_ID = 2;
var loadState = 'idle'; // idle | ready | failed
var currentId = null;

// A 1-function module using a v128 instruction: validates only with wasm SIMD.
// The library does not pick its SIMD build by itself.
var SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0,
  65, 0, 253, 15, 253, 98, 11,
]);

function hasSimd() {
  try {
    return WebAssembly.validate(SIMD_PROBE);
  } catch (e) {
    return false;
  }
}

function asset(path) {
  return new URL(path, self.location.href).href;
}

self.loadArgon2WasmBinary = function () {
  var file = hasSimd() ? 'argon2/dist/argon2-simd.wasm' : 'argon2/dist/argon2.wasm';
  return fetch(asset(file)).then(function (r) {
    if (!r.ok) throw new Error('wasm fetch failed: ' + r.status);
    return r.arrayBuffer();
  }).then(function (ab) {
    return new Uint8Array(ab);
  });
};

self.loadArgon2WasmModule = function () {
  importScripts(asset('argon2/dist/argon2.js'));
};

function postLoadError(err) {
  loadState = 'failed';
  self.postMessage({
    id: currentId,
    error: { kind: 'load', message: String((err && err.message) || err || 'load failed') },
  });
}

// A wasm compile/instantiate failure inside emscripten's glue is an unhandled
// rejection: without this, argon2.hash() would stay pending forever.
self.onunhandledrejection = function (ev) {
  ev.preventDefault();
  if (loadState !== 'ready') postLoadError(ev.reason);
};

function ensureLib() {
  if (loadState === 'failed') throw new Error('argon2 load failed earlier');
  if (typeof self.argon2 === 'undefined') importScripts(asset('argon2/lib/argon2.js'));
}

self.onmessage = function (ev) {
  var job = ev.data || {};
  currentId = job.id;
  try {
    ensureLib();
  } catch (e) {
    postLoadError(e);
    return;
  }
  var wasReady = loadState === 'ready';
  self.argon2
    .hash({
      pass: job.pass,
      salt: job.salt,
      time: job.t,
      mem: job.m,
      parallelism: job.p,
      hashLen: job.len,
      type: ARGON2_ID,
    })
    .then(function (res) {
      loadState = 'ready';
      if (job.pass && job.pass.fill) job.pass.fill(0); // best effort: drop the PIN copy
      var hash = new Uint8Array(res.hash);
      self.postMessage({ id: job.id, hash: hash }, [hash.buffer]);
    })
    .catch(function (err) {
      // argon2-browser rejects with {message, code} for hashing errors (code is
      // an argon2 status number) and with a plain Error when loading failed.
      if (!wasReady && !(err && typeof err.code === 'number')) {
        postLoadError(err);
      } else {
        loadState = 'ready';
        self.postMessage({
          id: job.id,
          error: { kind: 'hash', message: String((err && err.message) || err) },
        });
      }
    });
};
