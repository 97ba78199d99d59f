// QR-scan button for the Send page's recipient field: a camera dialog that decodes with
// jsQR and hands onScan an EIP-681 "ethereum:" URI or a merchant link to this wallet's
// /payment whole, else the recipient (first 0x + 40 hex, else the trimmed text).
// jsqr is imported only when the dialog opens, so /send stays light.
import { useEffect, useRef, useState } from "react";
import { Button, Dialog, Flex, IconButton, Text } from "@radix-ui/themes";
import { cameraErrorCode, recipientFromScan } from "./scan_text.js";
import { errorText } from "./errors.js";

export const SCAN_INTERVAL_MS = 500;
export const CAMERA_TIMEOUT_MS = 5000;
// Rear camera preferred; `ideal` never fails (an `exact` size raises OverconstrainedError).
const CONSTRAINTS = {
  audio: false,
  video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 720 } },
};

const stopStream = (stream) => stream && stream.getTracks().forEach((t) => t.stop());

function ScanIcon() {
  return (
    <svg width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2"
      strokeLinecap="round" strokeLinejoin="round" aria-hidden="true">
      <path d="M3 7V5a2 2 0 0 1 2-2h2M17 3h2a2 2 0 0 1 2 2v2M21 17v2a2 2 0 0 1-2 2h-2M7 21H5a2 2 0 0 1-2-2v-2" />
      <path d="M7 12h10" />
    </svg>
  );
}

export function QrScanButton({ messages, errors, onScan, onError }) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState("");
  // The <video> exists only while the dialog content is mounted (Radix portals it in a
  // render later than `open` flips), so the camera session is keyed on the element itself.
  const [video, setVideo] = useState(null);
  // Latest props for callbacks fired long after the session started.
  const props = useRef({});
  props.current = { errors, onScan, onError };

  useEffect(() => {
    if (!open || !video) return undefined;
    let ended = false; // closed, unmounted, decoded or failed: nothing more may happen
    let stream = null;
    let interval = null;
    let timeout = null;

    const end = () => {
      ended = true;
      clearInterval(interval);
      clearTimeout(timeout);
      stopStream(stream);
      stream = null;
      video.srcObject = null;
    };
    const fail = (e) => {
      if (ended) return;
      end();
      const text = errorText(props.current.errors, cameraErrorCode(e));
      setError(text);
      props.current.onError && props.current.onError(text);
    };

    const startCamera = async () => {
      // Only secure contexts (https, loopback) have navigator.mediaDevices.
      if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) throw new Error("");
      const s = await navigator.mediaDevices.getUserMedia(CONSTRAINTS);
      if (ended) { stopStream(s); return; } // arrived after close or after the timeout
      stream = s;
      video.srcObject = s;
      await video.play();
    };
    // A timeout is CAMERA_FAILED.
    timeout = setTimeout(() => fail(new Error("")), CAMERA_TIMEOUT_MS);
    const loadJsQr = import("jsqr").then((mod) => mod.default || mod);

    const canvas = document.createElement("canvas");
    const context = canvas.getContext("2d", { willReadFrequently: true });
    Promise.all([loadJsQr, startCamera()])
      .then(([jsQR]) => {
        if (ended) return;
        clearTimeout(timeout);
        interval = setInterval(() => {
          const w = video.videoWidth;
          const h = video.videoHeight;
          if (ended || !w || !h || video.readyState < 2) return; // no frame yet
          canvas.width = w;
          canvas.height = h;
          context.drawImage(video, 0, 0, w, h);
          const code = jsQR(context.getImageData(0, 0, w, h).data, w, h);
          if (!code || !code.data) return;
          end();
          setOpen(false);
          props.current.onScan && props.current.onScan(recipientFromScan(code.data, window.location.origin));
        }, SCAN_INTERVAL_MS);
      })
      .catch(fail);
    return end;
  }, [open, video]);

  const m = messages || {};
  return (
    <Dialog.Root open={open} onOpenChange={(next) => { setError(""); setOpen(next); }}>
      <Dialog.Trigger>
        <IconButton type="button" size="3" variant="soft" aria-label={m.scan_qr} title={m.scan_qr}
          style={{ width: 44, height: 44 }}>
          <ScanIcon />
        </IconButton>
      </Dialog.Trigger>
      <Dialog.Content maxWidth="480px">
        <Dialog.Title>{m.scan_qr}</Dialog.Title>
        <Dialog.Description size="2">{m.scan_hint}</Dialog.Description>
        <video ref={setVideo} muted playsInline autoPlay aria-label={m.scan_qr}
          style={{
            display: "block", width: "100%", aspectRatio: "4 / 3", objectFit: "cover",
            background: "black", borderRadius: 8, marginTop: 12,
          }} />
        {error ? <Text as="p" size="2" color="red" role="alert" mt="2">{error}</Text> : null}
        <Flex justify="end" mt="3">
          <Dialog.Close>
            <Button type="button" variant="soft" color="gray" size="3">{m.close}</Button>
          </Dialog.Close>
        </Flex>
      </Dialog.Content>
    </Dialog.Root>
  );
}
