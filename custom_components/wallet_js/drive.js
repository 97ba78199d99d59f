// Google Drive (app-data folder) from the browser only: the Google Identity Services
// token flow and a small Drive v3 client. The access token lives in the caller's locals
// and is sent only to the Drive root given to createDriveClient (www.googleapis.com, or
// origin + '/dev-drive' for the development stand-in, design.md section 5).
//
// Errors are DriveError with a stable `code`, the fixed English message of the
// specification and, for HTTP failures, the `status` (0 for a network error or timeout).

export const DRIVE_SCOPE = 'https://www.googleapis.com/auth/drive.appdata';
export const GOOGLE_DRIVE_ROOT = 'https://www.googleapis.com';
export const GOOGLE_GIS_URL = 'https://accounts.google.com/gsi/client';
export const DEV_DRIVE_PATH = '/dev-drive';
export const DEV_GIS_PATH = '/dev-idp/gsi/client';

const FILE_FIELDS = 'id,name,modifiedTime,size,md5Checksum';
const DEFAULT_TIMEOUT_MS = 30000;

const MESSAGES = Object.freeze({
  NO_ACCESS_TOKEN: () => 'No access_token for Drive',
  GIS_LOAD_FAILED: () => 'Failed to load Google Identity Services',
  DRIVE_LIST_FAILED: (s) => `Drive list failed: ${s}`,
  DRIVE_UPLOAD_FAILED: (s) => `Drive upload failed: ${s}`,
  DRIVE_DOWNLOAD_FAILED: (s) => `Drive download failed: ${s}`,
  DRIVE_ACCOUNT_FAILED: (s) => `Drive account check failed: ${s}`,
  DRIVE_OTHER_ACCOUNT: () => 'The Drive token is for another Google account than the signed-in one',
});

export class DriveError extends Error {
  /** `reason`: GIS error type (popup_closed, access_denied, ...) when there was one;
   * `params`: more {placeholders} of the code's text than its status. */
  constructor(code, status = null, reason = null, params = null) {
    super(MESSAGES[code] ? MESSAGES[code](status) : code);
    this.name = 'DriveError';
    this.code = code;
    this.status = status;
    this.reason = reason;
    this.params = params;
  }
}

// ---------------------------------------------------------------- Google Identity Services

let gisLoading = null; // {url, promise}: the load in flight

function gisReady() {
  return !!(window.google && window.google.accounts && window.google.accounts.oauth2);
}

/**
 * Loads the GIS script once (Google's, or the dev stand-in's). Rejects with
 * GIS_LOAD_FAILED on a load error or timeout; a later call tries again. A call for another
 * URL than the load in flight starts its own: it never gets the other script's outcome.
 */
export function loadGis(scriptUrl = GOOGLE_GIS_URL, timeoutMs = DEFAULT_TIMEOUT_MS) {
  if (gisReady()) return Promise.resolve();
  if (gisLoading && gisLoading.url === scriptUrl) return gisLoading.promise;
  const promise = new Promise((resolve, reject) => {
    const el = document.createElement('script');
    el.src = scriptUrl;
    el.async = true;
    const timer = setTimeout(() => done(false), timeoutMs);
    function done(ok) {
      clearTimeout(timer);
      el.onload = el.onerror = null;
      if (ok && gisReady()) return resolve();
      el.remove();
      if (gisLoading && gisLoading.promise === promise) gisLoading = null; // a failed load is not cached
      reject(new DriveError('GIS_LOAD_FAILED'));
    }
    el.onload = () => done(true);
    el.onerror = () => done(false);
    document.head.appendChild(el);
  });
  gisLoading = { url: scriptUrl, promise };
  return promise;
}

/**
 * Drive app-data access token through initTokenClient (popup). interactive: show the
 * consent prompt. hint: the signed-in e-mail (skips the account chooser). Call it from a
 * user gesture (a click), with GIS already loaded, or the browser may block the popup.
 * Resolves to the token string; rejects DriveError NO_ACCESS_TOKEN (with `reason`).
 */
export function getDriveToken({ clientId, interactive = true, hint } = {}) {
  return new Promise((resolve, reject) => {
    if (!gisReady()) {
      reject(new DriveError('GIS_LOAD_FAILED'));
      return;
    }
    const config = {
      client_id: clientId,
      scope: DRIVE_SCOPE,
      callback: (resp) => {
        const granted = String((resp && resp.scope) || '').split(' ');
        if (resp && resp.access_token && !resp.error && granted.includes(DRIVE_SCOPE)) {
          resolve(resp.access_token);
        } else {
          reject(new DriveError('NO_ACCESS_TOKEN', null, (resp && resp.error) || 'no_access_token'));
        }
      },
      error_callback: (err) => reject(new DriveError('NO_ACCESS_TOKEN', null, (err && err.type) || 'unknown')),
    };
    if (hint) config.login_hint = hint;
    try {
      const client = window.google.accounts.oauth2.initTokenClient(config);
      client.requestAccessToken({ prompt: interactive ? 'consent' : '' });
    } catch (e) {
      reject(new DriveError('NO_ACCESS_TOKEN', null, 'init_failed'));
    }
  });
}

/**
 * Revokes a Drive access token (GIS google.accounts.oauth2.revoke: POST
 * oauth2.googleapis.com/revoke), so it is useless to anyone who finds it afterwards. Never
 * rejects: resolves true when revoked, false on failure or after `timeoutMs`.
 */
export function revokeDriveToken(token, timeoutMs = 5000) {
  return new Promise((resolve) => {
    const oauth2 = gisReady() ? window.google.accounts.oauth2 : null;
    if (!token || !oauth2 || typeof oauth2.revoke !== 'function') {
      resolve(false);
      return;
    }
    const timer = setTimeout(() => resolve(false), timeoutMs);
    try {
      oauth2.revoke(token, (result) => {
        clearTimeout(timer);
        resolve(!!(result && result.successful));
      });
    } catch (e) {
      clearTimeout(timer);
      resolve(false);
    }
  });
}

// ---------------------------------------------------------------- Drive v3 client

/** A q string literal: backslash and quote escaped as Drive expects. */
export function driveQuote(value) {
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** multipart/related body for uploads: JSON metadata part + content part. Returns {body, contentType}. */
export function multipartBody(metadata, bytes) {
  const boundary = 'nb-' + Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  const enc = new TextEncoder();
  const head = enc.encode(
    `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata)}\r\n` +
    `--${boundary}\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  const body = new Uint8Array(head.length + bytes.length + tail.length);
  body.set(head, 0);
  body.set(bytes, head.length);
  body.set(tail, head.length + bytes.length);
  return { body, contentType: `multipart/related; boundary=${boundary}` };
}

/**
 * Drive client for one root URL. Methods take the access token per call (nothing kept).
 *   checkAccount(token, email) -> resolves when the token is `email`'s Google account
 *   findFile(token, name) -> {id, name, modifiedTime, size, md5Checksum} | null (newest of that name)
 *   uploadFile(token, name, bytes, existingId?) -> same shape (POST create / PATCH update)
 *   downloadFile(token, id) -> Uint8Array
 */
export function createDriveClient(root = GOOGLE_DRIVE_ROOT, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
  const base = String(root).replace(/\/+$/, '');

  // fetch with a bearer token and a timeout; a network error or timeout is status 0.
  async function call(code, token, url, init = {}) {
    if (!token) throw new DriveError('NO_ACCESS_TOKEN');
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), timeoutMs);
    let resp;
    try {
      resp = await fetch(url, {
        ...init,
        headers: { ...(init.headers || {}), Authorization: `Bearer ${token}` },
        cache: 'no-store',
        credentials: 'omit', // Drive needs no cookies; our session cookie must not go along
        signal: ctrl.signal,
      });
      if (!resp.ok) throw new DriveError(code, resp.status);
      return code === 'DRIVE_DOWNLOAD_FAILED' ? new Uint8Array(await resp.arrayBuffer()) : await resp.json();
    } catch (e) {
      if (e instanceof DriveError) throw e;
      throw new DriveError(code, resp ? resp.status : 0);
    } finally {
      clearTimeout(timer);
    }
  }

  // Google's account chooser lets the user pick another account than login_hint's: that
  // account's Drive would get the backup, or a restore would find none there.
  async function checkAccount(token, email) {
    const params = new URLSearchParams({ fields: 'user(emailAddress)' });
    const about = await call('DRIVE_ACCOUNT_FAILED', token, `${base}/drive/v3/about?${params}`);
    const got = about && about.user && typeof about.user.emailAddress === 'string' ? about.user.emailAddress : '';
    if (!email || got.toLowerCase() !== String(email).toLowerCase()) {
      throw new DriveError('DRIVE_OTHER_ACCOUNT', null, null, { email });
    }
  }

  async function findFile(token, name) {
    const params = new URLSearchParams({
      spaces: 'appDataFolder',
      q: `name = ${driveQuote(name)} and trashed = false`,
      fields: `files(${FILE_FIELDS})`,
      pageSize: '10',
    });
    const list = await call('DRIVE_LIST_FAILED', token, `${base}/drive/v3/files?${params}`);
    const files = (list && Array.isArray(list.files) ? list.files : []).filter((f) => f && f.name === name);
    files.sort((a, b) => String(b.modifiedTime || '').localeCompare(String(a.modifiedTime || '')));
    return files[0] || null;
  }

  async function uploadFile(token, name, bytes, existingId) {
    const metadata = existingId
      ? { name, mimeType: 'application/octet-stream' }
      : { name, mimeType: 'application/octet-stream', parents: ['appDataFolder'] };
    const { body, contentType } = multipartBody(metadata, bytes);
    const params = new URLSearchParams({ uploadType: 'multipart', fields: FILE_FIELDS });
    const url = existingId
      ? `${base}/upload/drive/v3/files/${encodeURIComponent(existingId)}?${params}`
      : `${base}/upload/drive/v3/files?${params}`;
    return call('DRIVE_UPLOAD_FAILED', token, url, {
      method: existingId ? 'PATCH' : 'POST',
      headers: { 'Content-Type': contentType },
      body,
    });
  }

  async function downloadFile(token, id) {
    return call('DRIVE_DOWNLOAD_FAILED', token, `${base}/drive/v3/files/${encodeURIComponent(id)}?alt=media`);
  }

  return { root: base, checkAccount, findFile, uploadFile, downloadFile };
}

/** The Drive root and GIS script for this deployment: Google's, or the dev stand-ins on `origin`. */
export function driveEndpoints(devMode, origin = window.location.origin) {
  return devMode
    ? { root: origin + DEV_DRIVE_PATH, gisUrl: origin + DEV_GIS_PATH }
    : { root: GOOGLE_DRIVE_ROOT, gisUrl: GOOGLE_GIS_URL };
}
