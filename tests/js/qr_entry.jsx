// Test page for qr_scan.jsx: renders QrScanButton and exposes what it reports on window.qr.
// getUserMedia is wrapped (not replaced) to record the real streams and optionally delay them.
import { createRoot } from "react-dom/client";
import { Theme } from "@radix-ui/themes";
import { QrScanButton } from "../../custom_components/wallet_js/qr_scan.jsx";
import { cameraErrorMessage, recipientFromScan } from "../../custom_components/wallet_js/scan_text.js";

const MESSAGES = {
  scan_qr: "Scan QR code",
  scan_hint: "Point the camera at a QR code.",
  close: "Close",
  camera_permission: "Camera permission is required.",
  camera_not_found: "No usable camera found.",
  camera_failed: "Failed to access camera.",
};

const streams = [];
const qr = {
  MESSAGES, recipientFromScan, cameraErrorMessage,
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
    <QrScanButton messages={MESSAGES} onScan={(v) => qr.scans.push(v)} onError={(t) => qr.errors.push(t)} />
  </Theme>,
);
