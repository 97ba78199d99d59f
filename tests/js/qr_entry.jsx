// Test page for qr_scan.jsx: renders QrScanButton and exposes what it reports on window.qr.
// window.ERROR_TEXTS (the app's English error texts) comes from /error_texts.js (test_qr_scan.py).
// getUserMedia is wrapped (not replaced) to record the real streams and optionally delay them.
import { createRoot } from "react-dom/client";
import { Theme } from "@radix-ui/themes";
import { QrScanButton } from "../../custom_components/wallet_js/qr_scan.jsx";
import { cameraErrorCode, recipientFromScan } from "../../custom_components/wallet_js/scan_text.js";
import { errorText } from "../../custom_components/wallet_js/errors.js";

const MESSAGES = {
  scan_qr: "Scan QR code",
  scan_hint: "Point the camera at a QR code.",
  close: "Close",
};
const ERRORS = window.ERROR_TEXTS;

const streams = [];
const qr = {
  ERRORS, recipientFromScan, cameraErrorCode, errorText,
  scans: [], errors: [], constraints: [], delayMs: 0,
  streamCount: () => streams.length,
  liveTracks: () => streams.flatMap((s) => s.getTracks()).filter((t) => t.readyState === "live").length,
};
const md = navigator.mediaDevices;
if (md) {
  const real = md.getUserMedia.bind(md);
  md.getUserMedia = async (c) => {
    qr.constraints.push(c);
    if (qr.delayMs) await new Promise((r) => setTimeout(r, qr.delayMs));
    const s = await real(c);
    streams.push(s);
    return s;
  };
}
window.qr = qr;

const root = document.createElement("div");
document.body.appendChild(root);
createRoot(root).render(
  <Theme>
    <QrScanButton messages={MESSAGES} errors={ERRORS} onScan={(v) => qr.scans.push(v)} onError={(t) => qr.errors.push(t)} />
  </Theme>,
);
