// Argon2id through the classic worker at /kdf-worker.js (assets/kdf-worker.js).
//
// argon2id() starts a fresh worker per hash and always terminates it: that
// returns the ~260 MiB of wasm memory at once and never reuses a worker whose
// load failed. KdfWorker keeps one worker alive for several hashes (used by the
// benchmark's warm mode; the app does not need it).

export const SPEC_KDF_PARAMS = Object.freeze({ t: 3, m: 262144, p: 1 });
export const KDF_LOAD_ERROR = 'failed to load argon2';
const HASH_LEN = 32;

let defaultWorkerUrl = '/kdf-worker.js';

/** Change the worker URL used when none is passed (tests serve it elsewhere). */
export function setKdfWorkerUrl(url) {
  defaultWorkerUrl = url;
}

export function getKdfWorkerUrl() {
  return defaultWorkerUrl;
}

export class KdfError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'KdfError';
    this.code = code;
  }
}

function loadError() {
  return new KdfError('KDF_LOAD', KDF_LOAD_ERROR);
}

function isPositiveInt(x, max) {
  return Number.isSafeInteger(x) && x >= 1 && x <= max;
}

/** Checks {t, m, p} (m in KiB); throws KdfError('KDF_PARAMS') otherwise. */
export function checkKdfParams(params) {
  const ok =
    params &&
    isPositiveInt(params.t, 64) &&
    isPositiveInt(params.p, 16) &&
    isPositiveInt(params.m, 4 * 1024 * 1024) &&
    params.m >= 8 * params.p;
  if (!ok) throw new KdfError('KDF_PARAMS', 'Invalid KDF parameters');
  return { t: params.t, m: params.m, p: params.p };
}

export class KdfWorker {
  constructor(url = defaultWorkerUrl) {
    this._nextId = 1;
    this._pending = null; // {id, resolve, reject}
    this._failed = false;
    this._queue = Promise.resolve();
    try {
      this._worker = new Worker(url);
    } catch (e) {
      this._worker = null; // bad URL or cross-origin: reported as a load failure
      this._failed = true;
      return;
    }
    this._worker.onmessage = (ev) => this._onMessage(ev.data || {});
    // Script 404, CSP refusal or a syntax error in the worker itself.
    this._worker.onerror = (ev) => {
      if (ev && ev.preventDefault) ev.preventDefault();
      this._fail(loadError());
    };
    this._worker.onmessageerror = () => this._fail(loadError());
  }

  _fail(err) {
    this._failed = true;
    const p = this._pending;
    this._pending = null;
    if (p) p.reject(err);
  }

  _onMessage(msg) {
    const p = this._pending;
    if (!p || msg.id !== p.id) return; // late duplicate of a settled job
    this._pending = null;
    if (msg.hash instanceof Uint8Array && msg.hash.length === HASH_LEN) {
      p.resolve(msg.hash);
    } else if (msg.error && msg.error.kind === 'hash') {
      p.reject(new KdfError('KDF_FAILED', 'argon2 failed'));
    } else {
      this._failed = true;
      p.reject(loadError());
    }
  }

  /** One Argon2id hash (32 bytes). Jobs on one worker run one after another. */
  hash(passBytes, saltBytes, params = SPEC_KDF_PARAMS) {
    const run = () => this._hashNow(passBytes, saltBytes, params);
    const result = this._queue.then(run, run);
    this._queue = result.catch(() => undefined);
    return result;
  }

  _hashNow(passBytes, saltBytes, params) {
    if (!(passBytes instanceof Uint8Array) || !(saltBytes instanceof Uint8Array)) {
      return Promise.reject(new TypeError('argon2id expects Uint8Array password and salt'));
    }
    if (saltBytes.length < 8) return Promise.reject(new KdfError('KDF_PARAMS', 'Salt too short'));
    let prm;
    try {
      prm = checkKdfParams(params);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this._failed || !this._worker) return Promise.reject(loadError());
    return new Promise((resolve, reject) => {
      const id = this._nextId++;
      this._pending = { id, resolve, reject };
      // Copies, transferred: the caller keeps (and may wipe) its own buffers.
      const pass = new Uint8Array(passBytes);
      const salt = new Uint8Array(saltBytes);
      this._worker.postMessage(
        { id, pass, salt, t: prm.t, m: prm.m, p: prm.p, len: HASH_LEN },
        [pass.buffer, salt.buffer],
      );
    });
  }

  close() {
    if (this._worker) this._worker.terminate();
    this._worker = null;
    this._fail(new KdfError('KDF_CLOSED', 'KDF worker closed'));
  }
}

/**
 * Argon2id(password, salt, {t, m, p}) -> Uint8Array(32), in a fresh worker that
 * is terminated afterwards. Rejects with Error('failed to load argon2')
 * (code 'KDF_LOAD') when the worker script or the wasm cannot be loaded.
 */
export async function argon2id(passBytes, saltBytes, params = SPEC_KDF_PARAMS, options = {}) {
  const worker = new KdfWorker(options.workerUrl || defaultWorkerUrl);
  try {
    return await worker.hash(passBytes, saltBytes, params);
  } finally {
    worker.close();
  }
}
