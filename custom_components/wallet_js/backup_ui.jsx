// Backup (settings) and restore (device check) dialogs. The PIN and the Drive access token
// stay in this file's closures; Python only hears public outcomes ("ok", an error code or
// an error text that names no secret).
//
// The Drive token popup must open inside the Confirm click (a user gesture), so drive.js
// and the GIS script are loaded beforehand (on mount / when the dialog opens) and
// getDriveToken is called synchronously from the click handler, before any await. Each
// token serves one backup or restore and is revoked right after it (success or failure).
// The token is asked for the signed-in Google account (loginHint, its e-mail, as GIS's
// login_hint), and used only once Drive confirms it is that account's (about.user): with
// several accounts in the browser, another account's Drive would get the backup, or a
// restore would find no file there and send the user to onboarding.
import { useEffect, useRef, useState } from "react";
import { Button, Text } from "@radix-ui/themes";
import { PinModal, usePin } from "./wallet.jsx";
import { ClientError, errorText, errorTextOf } from "./errors.js";

const PIN_RE = /^[0-9]{6}$/;

// drive.js + the GIS script, loaded while `active`. Returns [ref, status]: ref.current is
// {drive, endpoints, ready}; status is "loading" | "ready" | "error" (for rendering).
function useDrive(active, devMode) {
  const ref = useRef({ drive: null, endpoints: null, ready: false });
  const [status, setStatus] = useState("loading");
  useEffect(() => {
    if (!active) return undefined;
    let live = true;
    setStatus("loading");
    import("./drive.js")
      .then((drive) => {
        const endpoints = drive.driveEndpoints(!!devMode);
        ref.current = { drive, endpoints, ready: false };
        return drive.loadGis(endpoints.gisUrl).then(() => { ref.current.ready = true; });
      })
      .catch(() => {}) // not ready: shown as GIS_LOAD_FAILED
      .finally(() => live && setStatus(ref.current.ready ? "ready" : "error"));
    // The heavy part (ethers, argon2 worker client) loads in the background too.
    import("./backup.js").catch(() => {});
    return () => { live = false; };
  }, [active, devMode]);
  return [ref, status];
}

// Starts the token request synchronously (inside the click) and returns its promise; the
// token is for the `loginHint` account. When drive.js or the GIS script failed to load, the
// promise rejects with GIS_LOAD_FAILED.
function requestToken(driveRef, clientId, loginHint) {
  const d = driveRef.current;
  if (!d.drive || !d.ready) return Promise.reject(new ClientError("GIS_LOAD_FAILED"));
  return d.drive.getDriveToken({ clientId, interactive: true, hint: loginHint || undefined });
}

// The Drive client, once the token is known to be the signed-in account's (loginHint):
// login_hint only preselects it in Google's chooser.
async function signedInDrive(d, accessToken, loginHint) {
  const drive = d.drive.createDriveClient(d.endpoints.root);
  await drive.checkAccount(accessToken, loginHint);
  return drive;
}

// A PIN modal whose Confirm runs `run(pin, tokenPromise)`. `run` resolves to a result for
// onDone, or rejects; errors are shown as `errorPrefix + text` and the dialog stays open.
// A failed GIS load is shown at once and reaches `run` on Confirm (as the token's rejection).
function DrivePinDialog({ open, title, description, messages, errors, clientId, loginHint, devMode, errorPrefix,
                          pinMessage, hint, run, onDone, onClose, testId }) {
  const pin = usePin();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [driveRef, driveStatus] = useDrive(!!open, devMode);
  // Confirm waits for GIS: the token popup must open inside the click itself.
  const loadError = driveStatus === "error" ? errorPrefix + errorText(errors, "GIS_LOAD_FAILED") : "";

  useEffect(() => {
    if (!open) { setError(""); setBusy(false); pin.clear(); }
  }, [open]);

  const confirm = () => {
    const digits = pin.pinRef.current;
    if (!PIN_RE.test(digits)) { setError(pinMessage); return; }
    if (driveStatus === "loading") return;
    // Synchronously, still inside the gesture: the popup is not blocked.
    const token = requestToken(driveRef, clientId, loginHint);
    token.catch(() => {}); // handled in run; avoids an unhandled rejection while it waits
    setBusy(true);
    setError("");
    run(digits, token, driveRef.current).then(
      (result) => { pin.clear(); setBusy(false); onDone && onDone(result); },
      (e) => {
        pin.clear();
        setBusy(false);
        setError((e && e.uiText) || errorPrefix + errorTextOf(errors, e));
      },
    );
  };

  return (
    <PinModal open={open} busy={busy} ready={driveStatus !== "loading"} working={busy || driveStatus === "loading"}
      title={title} description={description} hint={hint} error={error || loadError} testId={testId}
      pin={pin} messages={messages} onConfirm={confirm} onClose={onClose} />
  );
}

// Settings: the 'Back up' button and its PIN dialog. onDone("ok") after a verified upload.
export function BackupButton({ owner, clientId, loginHint, devMode, messages, errors, onDone }) {
  const [open, setOpen] = useState(false);
  const run = async (pin, token, d) => {
    const backup = await import("./backup.js");
    const accessToken = await token;
    try {
      const drive = await signedInDrive(d, accessToken, loginHint);
      await backup.runBackup({ owner, pin, token: accessToken, drive });
    } finally {
      await d.drive.revokeDriveToken(accessToken); // used once, success or failure
    }
    await backup.touchBackup("", owner); // its failure is ignored (resolves false): the device check tells it later
    return "ok";
  };
  return (
    <>
      {/* The Drive configuration (client id, dev mode) comes with the page's on_load: opened before
          it, the dialog loaded Google's GIS script in development (refused by the CSP) and kept that
          failed load when the dev stand-in's URL came. */}
      <Button size="3" onClick={() => setOpen(true)} disabled={!owner || !clientId || !loginHint}>
        {messages.backup_now}
      </Button>
      <DrivePinDialog open={open} title={messages.backup_dialog_title} description={messages.backup_dialog_hint}
        messages={messages} errors={errors} clientId={clientId} loginHint={loginHint} devMode={devMode}
        errorPrefix={messages.backup_failed}
        pinMessage={messages.pin_must_be_6_settings} run={run} testId="backup-dialog"
        onDone={(r) => { setOpen(false); onDone && onDone(r); }} onClose={() => setOpen(false)} />
    </>
  );
}

// Device check: the new-device notices and the PIN prompt; one recovery run per Confirm.
// onResult: "ok" | "NO_BACKUP" | "ADDRESS_MISMATCH" | "error:<text>" (catalogue text, GIS load
// failures included). An invalid PIN, or a token of another Google account, stays here.
export function RestoreDialog({ open, owner, clientId, loginHint, devMode, messages, errors, onResult, onClose }) {
  const run = async (pin, token, d) => {
    const backup = await import("./backup.js");
    try {
      const accessToken = await token;
      try {
        const drive = await signedInDrive(d, accessToken, loginHint);
        await backup.runRestore({ owner, pin, token: accessToken, drive });
      } finally {
        await d.drive.revokeDriveToken(accessToken); // used once, success or failure
      }
      return "ok";
    } catch (e) {
      const code = e && e.code;
      if (code === "INVALID_PIN" || code === "PIN_FORMAT" || code === "DRIVE_OTHER_ACCOUNT") {
        const again = new Error("try again"); // the prompt stays, saying why
        again.uiText = errorTextOf(errors, e);
        throw again;
      }
      if (code === "NO_BACKUP" || code === "ADDRESS_MISMATCH") return code;
      return "error:" + errorTextOf(errors, e);
    }
  };
  return (
    <DrivePinDialog open={open} title={messages.new_device} description={messages.restore_required}
      messages={messages} errors={errors} clientId={clientId} loginHint={loginHint} devMode={devMode}
      errorPrefix={messages.recovery_failed}
      pinMessage={errorText(errors, "PIN_FORMAT")} hint={messages.restore_pin_hint} run={run} testId="restore-dialog"
      onDone={(r) => onResult && onResult(r)} onClose={() => onClose && onClose()} />
  );
}

// Epoch seconds in the given language's date/time format (the browser's time zone); `empty`
// when there is no time.
export function formatEpoch(seconds, locale) {
  const n = Number(seconds);
  if (!Number.isFinite(n) || n <= 0) return null;
  try {
    return new Intl.DateTimeFormat(locale === "ko" ? "ko-KR" : locale || undefined,
      { dateStyle: "medium", timeStyle: "short" }).format(new Date(n * 1000));
  } catch (e) {
    return new Date(n * 1000).toLocaleString();
  }
}

export function LocalTime({ seconds, locale, empty, ...rest }) {
  const text = formatEpoch(seconds, locale);
  return <Text {...rest}>{text === null ? (empty === undefined ? "-" : empty) : text}</Text>;
}
