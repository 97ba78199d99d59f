// Pure helpers for the QR scanner (no DOM, no React): table-tested in a real browser
// by tests/js/test_qr_scan.py.

// Lowercase "0x" then 40 hex digits of either case, as the specification words it.
// Not anchored on the right: "0x" + 41 hex yields its first 40 (the spec's "first
// occurrence of 0x followed by 40 hex characters" is a substring rule). The case is
// kept, so the Send page's EIP-55 check still catches a mistyped mixed-case address.
const ADDRESS = /0x[0-9a-fA-F]{40}/;

// An EIP-681 payment URI ("ethereum:…", any case): handed over whole, trimmed, for the
// server to read (wallet_app/services/payment_uri.py): its first address is the token's.
const PAYMENT_URI = /^ethereum:/i;

// A merchant link to this wallet's own payment page (`origin` + "/payment?…"): handed over
// whole, trimmed, for the Send page to open it (wallet_app/services/merchant_links.py,
// own_payment_path). Its first address is the merchant's, or the token contract's in another
// order of its parameters: as a bare recipient it lost the amount and the order's ref.
function isOwnPaymentLink(text, origin) {
  if (!origin) return false;
  try {
    const url = new URL(text);
    return url.origin === origin && url.pathname.replace(/\/+$/, "") === "/payment" && url.search.length > 1;
  } catch (e) {
    return false;
  }
}

// What to hand the Send page from a scanned QR text: a payment URI or a merchant link to this
// wallet (`origin`, the page's own) as it is, else the recipient, e.g. "pay 0xAbC… now" ->
// "0xAbC…"; with no address in it, the trimmed text.
export function recipientFromScan(text, origin = "") {
  const s = text == null ? "" : String(text);
  if (PAYMENT_URI.test(s.trim()) || isOwnPaymentLink(s.trim(), origin)) return s.trim();
  const m = ADDRESS.exec(s);
  return m ? m[0] : s.trim();
}

// The error code of a camera failure (specification section 8, Camera; texts in the
// catalogue). getUserMedia rejects with DOMExceptions; only their name is stable across
// browsers, and their messages are English, so every other failure is CAMERA_FAILED.
export function cameraErrorCode(error) {
  const name = error && error.name;
  if (name === "NotAllowedError" || name === "SecurityError") return "CAMERA_PERMISSION";
  if (name === "NotFoundError" || name === "OverconstrainedError") return "CAMERA_NOT_FOUND";
  return "CAMERA_FAILED";
}
