// Wallet UI units whose inputs are secret: the PIN never leaves this file's closures.
// Results handed to Python (addresses, raw transactions, signatures, status codes) are public.
// vault.js/keyring.js (ethers, argon2) and qrcode load on demand, so / stays light.
import { useEffect, useId, useRef, useState } from "react";
import { Button, Checkbox, Dialog, Flex, Grid, Text } from "@radix-ui/themes";

import { errorText, errorTextOf, fillText } from "./errors.js";
import { dialogClosed, dialogOpened } from "./focus.js";

const PIN_LENGTH = 6;
const loadVault = () => import("./vault.js");
const loadKeyring = () => import("./keyring.js");
const BULLET = "\u2022";
// The digits of typed or pasted text, full-width ones (U+FF10..FF19, an East Asian IME's) as ASCII.
const pinDigits = (text) =>
  text.replace(/[\uFF10-\uFF19]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xFEE0)).replace(/[^0-9]/g, "");
const VISUALLY_HIDDEN = {
  position: "absolute", width: 1, height: 1, padding: 0, margin: -1, overflow: "hidden",
  clip: "rect(0, 0, 0, 0)", whiteSpace: "nowrap", border: 0,
};

// A polite live region telling screen readers how many digits are in ("3 of 6 digits"): the
// count only, never a digit of the PIN.
function PinProgress({ count, messages }) {
  return (
    <div role="status" aria-live="polite" data-testid="pin-progress" style={VISUALLY_HIDDEN}>
      {fillText(messages.pin_progress, { count, total: PIN_LENGTH })}
    </div>
  );
}

function PinDots({ count }) {
  return (
    <Flex gap="3" justify="center" aria-hidden="true" my="3">
      {Array.from({ length: PIN_LENGTH }, (_, i) => (
        <span
          key={i}
          style={{
            width: 14, height: 14, borderRadius: "50%",
            border: "2px solid var(--accent-9)",
            background: i < count ? "var(--accent-9)" : "transparent",
          }}
        />
      ))}
    </Flex>
  );
}

// A 3x4 pad of digit buttons plus delete. The digits live in a ref, never in rendered text;
// only their count is state (for the dots, the live region and the enabled Continue button).
// The keyboard works too: digits, Backspace, Escape (clears), Enter (Continue); Enter and Space
// on a focused button press that button, and keys meant for an open dialog are left alone.
function PinPad({ disabled, label, deleteLabel, messages, onComplete, autoSubmit = true, submitLabel,
                  canSubmit = true }) {
  const digits = useRef("");
  const root = useRef(null);
  const [count, setCount] = useState(0);

  const reset = () => { digits.current = ""; setCount(0); };
  const submit = () => {
    if (digits.current.length !== PIN_LENGTH || disabled || !canSubmit) return;
    const pin = digits.current;
    reset();
    onComplete(pin);
  };
  const press = (d) => {
    if (disabled || digits.current.length >= PIN_LENGTH) return;
    digits.current += d;
    setCount(digits.current.length);
    if (autoSubmit && digits.current.length === PIN_LENGTH && canSubmit) submit();
  };
  const erase = () => {
    if (disabled) return;
    digits.current = digits.current.slice(0, -1);
    setCount(digits.current.length);
  };

  useEffect(() => {
    const onKey = (e) => {
      const target = e.target instanceof Element ? e.target : null;
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
      if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
      if (target && target.closest('[role="dialog"],[role="alertdialog"]') && !root.current.contains(target)) return;
      const onControl = target && target.closest("button, a, [role=checkbox]");
      if (/^[0-9]$/.test(e.key)) { e.preventDefault(); press(e.key); }
      else if (e.key === "Backspace") { e.preventDefault(); erase(); }
      else if (e.key === "Escape") { if (!disabled) reset(); }
      else if (e.key === "Enter" && !onControl) { e.preventDefault(); submit(); }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });
  useEffect(() => () => { digits.current = ""; }, []);

  const key = (d) => (
    <Button key={d} type="button" size="4" variant="soft" disabled={disabled} aria-label={d}
      onClick={() => press(d)} style={{ height: 56, fontSize: 22 }}>{d}</Button>
  );
  return (
    <Flex ref={root} direction="column" gap="2" width="100%" role="group" aria-label={label}>
      <PinDots count={count} />
      <PinProgress count={count} messages={messages} />
      <Grid columns="3" gap="2" width="100%">
        {["1", "2", "3", "4", "5", "6", "7", "8", "9"].map(key)}
        <span />
        {key("0")}
        <Button type="button" size="4" variant="ghost" disabled={disabled || count === 0}
          aria-label={deleteLabel} onClick={erase} style={{ height: 56 }}>⌫</Button>
      </Grid>
      {submitLabel ? (
        <Button type="button" size="4" mt="2" disabled={disabled || count !== PIN_LENGTH || !canSubmit}
          onClick={submit}>{submitLabel}</Button>
      ) : null}
    </Flex>
  );
}

// Onboarding: 6 digits -> new phrase, wrapped under Argon2id(PIN) -> register the address
// (failure ignored, as the specification says) -> store materials -> onCreated(address).
export function CreateWallet({ messages, errors, replaceAddress, onCreated, onError }) {
  const [busy, setBusy] = useState(false);
  const [confirmed, setConfirmed] = useState(false);
  const needsConfirm = !!replaceAddress;

  const create = async (pin) => {
    setBusy(true);
    try {
      const vault = await loadVault();
      const { address, materials } = await vault.wrapNew(pin);
      const owner = address.toLowerCase();
      try {
        await fetch("/api/v1/me/address", {
          method: "POST", credentials: "include",
          headers: { "Content-Type": "application/json" },
          // The account's wallet as this page knew it: the cookie is the browser's, and since this page
          // loaded another tab may have given the account a wallet, or signed in another account.
          body: JSON.stringify({ address: owner, replaces: (replaceAddress || "").toLowerCase() }),
        });
      } catch (e) {
        // Registration failure is ignored; the device check settles it later.
      }
      vault.saveMaterials(owner, materials);
      onCreated && onCreated(owner);
    } catch (e) {
      setBusy(false);
      onError && onError(errorTextOf(errors, e));
    }
  };

  return (
    <Flex direction="column" gap="3" width="100%">
      {needsConfirm ? (
        <Text as="label" size="2">
          <Flex gap="2" align="start">
            <Checkbox checked={confirmed} onCheckedChange={(v) => setConfirmed(v === true)} />
            {messages.replace_wallet_confirm}
          </Flex>
        </Text>
      ) : null}
      <PinPad disabled={busy} label={messages.pin_label} deleteLabel={messages.delete} messages={messages}
        submitLabel={messages.continue} canSubmit={!needsConfirm || confirmed} onComplete={create} />
      {/* There, out of sight, before its text: a live region added along with its text is not always announced. */}
      <Text size="2" role="status" align="center" data-testid="creating-wallet" style={busy ? undefined : VISUALLY_HIDDEN}>
        {busy ? messages.creating_wallet : ""}
      </Text>
    </Flex>
  );
}

const short = (address) => `${address.slice(0, 6)}…${address.slice(-4)}`;
// A deadline (epoch seconds) as the local time of day, 24-hour HH:MM (the same in ko and en).
const clock = (seconds) => {
  const d = new Date(Number(seconds) * 1000);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
};

// A payment's deadline is checked against this phone's clock once, when the dialog opens (in the
// future, at most 10 minutes ahead: CLOCK_OFF otherwise), and sign(pin) checks it again against
// that same instant. Whether the time ran out while the dialog was open is the server's to say
// (its own clock, then the chain's): a phone two minutes fast said 'expired' after three minutes
// of the server's five, and one whose clock was set meanwhile refused a payment the server would take.
const openedAt = () => Math.floor(Date.now() / 1000);

// What the PIN dialog can do: prepare(keyring, input) parses and checks the payload once,
// gives the summary lines shown (computed from that very parsed payload) and sign(pin), which
// signs exactly it. input: {owner, payload, expect, chains, token, shown, messages} (shown: the
// token props as the page passed them, unset ones undefined). Results are public.
const ACTIONS = {
  // Unlock only: proves the PIN opens this device's wallet.
  unlock: (keyring, { owner }) => ({
    lines: [],
    sign: (pin) => keyring.withUnlocked(owner, pin, (wallet) => wallet.address.toLowerCase()),
  }),
  // Any built transaction: the dialog shows its recipient and native value as decoded here, for
  // an ERC-20 transfer call the token's recipient and amount, for an approval call its spender or
  // operator and amount (Permit2's: also its token and expiration); amounts in the decimals and
  // symbol of the token the page named, `shown`, when it is this very contract, else in smallest units.
  sign_tx: (keyring, { owner, payload, chains, shown, messages }) => {
    const request = keyring.legacyTxRequest(JSON.parse(payload));
    return {
      lines: keyring.txSummaryLines(request, chains, shown, messages),
      sign: (pin) => keyring.signTxRequest(owner, pin, request),
    };
  },
  // /payment's approve: exactly approve(the chain's payment contract, the payment amount) on the link's token.
  sign_approve: (keyring, { owner, payload, expect, chains, token, messages }) => {
    const request = keyring.legacyTxRequest(JSON.parse(payload));
    const { spender, amount } = keyring.checkApprove(request, expect, chains);
    return {
      lines: [fillText(messages.pin_allow_spend, {
        contract: short(spender), amount: keyring.formatAmount(amount, token.decimals), symbol: token.symbol,
      })],
      sign: (pin) => keyring.signTxRequest(owner, pin, request),
    };
  },
  // /payment's Pay typed data, checked against the link and the bundle's chains table (again when signing).
  sign_pay: (keyring, { owner, payload, expect, chains, token, messages }) => {
    const typed = JSON.parse(payload);
    const now = openedAt();
    keyring.checkPayTyped(typed, expect, owner, chains, now);
    return {
      lines: [fillText(messages.pin_pay_summary, {
        merchant: keyring.checksumAddress(typed.message.merchant),
        amount: keyring.formatAmount(BigInt(typed.message.amount), token.decimals), symbol: token.symbol,
      })],
      sign: (pin) => keyring.signPay(owner, pin, typed, expect, chains, now),
    };
  },
  // /payment gasless: the token's Permit for the payment contract and the Pay typed data, both
  // checked, signed with one PIN entry (one key derivation). The result is JSON {signature, permit_signature}.
  sign_pay_permit: (keyring, { owner, payload, expect, chains, token, messages }) => {
    const { permit, pay } = JSON.parse(payload);
    const now = openedAt();
    keyring.checkPermitAndPay(permit, pay, expect, owner, chains, now);
    const amount = keyring.formatAmount(BigInt(pay.message.amount), token.decimals);
    return {
      lines: [
        fillText(messages.pin_allow_spend_until, {
          contract: short(keyring.checksumAddress(permit.message.spender)), amount: keyring.formatAmount(
            BigInt(permit.message.value), token.decimals), symbol: token.symbol, time: clock(permit.message.deadline),
        }),
        fillText(messages.pin_pay_summary, {
          merchant: keyring.checksumAddress(pay.message.merchant), amount, symbol: token.symbol,
        }),
      ],
      sign: async (pin) => JSON.stringify(
        await keyring.signPermitAndPay(owner, pin, permit, pay, expect, chains, now)),
    };
  },
};

// The 6-digit PIN field. Its digits live in `pinRef` only: every edit is intercepted before it
// reaches the field (beforeinput), which then holds one bullet per digit, so no digit is ever in
// the DOM's value or the accessibility tree; the count is reported (onLength) for Confirm and
// the live region. A text field outside any form and named nothing password-like: password
// managers offer to save type=password fields (and forms holding one), and a PIN must never be
// stored or synced by them. Enter confirms (what the form's implicit submission did).
// `errorId`: the id of the error shown under it (a wrong PIN), which then describes it and marks
// it invalid: a screen reader back in the emptied field hears why, not only "PIN, edit text".
// An IME's composition (Japanese and Chinese IMEs compose digits, full-width by default; Korean's
// full-width mode, some phone keyboards) is left alone until it ends: rewritten mid-way, the IME
// sent its whole text again ("1", then "12": 112…) and the PIN was never the one typed. Its
// digits are taken at compositionend; full-width digits count as the digits they are.
export function PinInput({ inputRef, pinRef, label, disabled, errorId, onLength, onEnter }) {
  useEffect(() => {
    const el = inputRef.current;
    if (!el) return undefined;
    const onBeforeInput = (e) => {
      if (!e.cancelable) return; // an IME composition and the like: reconciled once it is in the field
      const all = el.selectionStart === 0 && el.selectionEnd === el.value.length;
      e.preventDefault();
      if (e.inputType.startsWith("insert")) {
        const text = e.data || (e.dataTransfer ? e.dataTransfer.getData("text/plain") : "") || "";
        pinRef.current = ((all ? "" : pinRef.current) + pinDigits(text)).slice(0, PIN_LENGTH);
      } else if (e.inputType.startsWith("delete")) {
        pinRef.current = all ? "" : pinRef.current.slice(0, -1);
      } else {
        return; // undo/redo and the like: nothing to restore, the digits are not in the field
      }
      el.value = BULLET.repeat(pinRef.current.length);
      onLength(pinRef.current.length);
    };
    // The field as an edit the page could not cancel left it: the bullets kept stand for the
    // digits held, any other text brings new digits.
    const reconcile = () => {
      const value = el.value;
      const kept = value.split(BULLET).length - 1;
      pinRef.current = (pinRef.current.slice(0, kept) + pinDigits(value)).slice(0, PIN_LENGTH);
      el.value = BULLET.repeat(pinRef.current.length);
      onLength(pinRef.current.length);
    };
    const onInput = (e) => { if (!e.isComposing) reconcile(); };
    el.addEventListener("beforeinput", onBeforeInput);
    el.addEventListener("input", onInput);
    el.addEventListener("compositionend", reconcile);
    return () => {
      el.removeEventListener("beforeinput", onBeforeInput);
      el.removeEventListener("input", onInput);
      el.removeEventListener("compositionend", reconcile);
    };
  });
  return (
    <input ref={inputRef} type="text" inputMode="numeric" autoComplete="off" autoCorrect="off"
      autoCapitalize="off" spellCheck={false} maxLength={PIN_LENGTH} aria-label={label}
      aria-invalid={errorId ? true : undefined} aria-describedby={errorId || undefined}
      disabled={disabled} data-autofocus="" data-testid="pin-input"
      // Enter that ends a composition is the IME's (keyCode 229 where isComposing is not set).
      onKeyDown={(e) => {
        if (e.key !== "Enter" || e.nativeEvent.isComposing || e.keyCode === 229) return;
        e.preventDefault();
        onEnter && onEnter();
      }}
      onCopy={(e) => e.preventDefault()} onCut={(e) => e.preventDefault()}
      style={{
        width: "100%", fontSize: 28, letterSpacing: 12, textAlign: "center", padding: "10px 0",
        margin: "16px 0 8px", borderRadius: 8, border: "1px solid var(--gray-a7)",
        background: "var(--color-surface)", color: "var(--gray-12)",
        WebkitTextSecurity: "disc",
      }} />
  );
}

// The PIN a PinModal holds: refs for the field and the digits, the count, and clear().
export function usePin() {
  const inputRef = useRef(null);
  const pinRef = useRef("");
  const [length, setLength] = useState(0);
  const clear = () => {
    pinRef.current = "";
    if (inputRef.current) inputRef.current.value = "";
    setLength(0);
  };
  useEffect(() => () => { pinRef.current = ""; }, []);
  return { inputRef, pinRef, length, setLength, clear };
}

// The PIN modal shared by the signing and backup/restore dialogs: title, description, optional
// hint, the PIN field, error/working lines, Cancel and Confirm. Closing is blocked while busy;
// Confirm needs 6 digits and `ready`. Focus goes to the PIN field and back to the opener.
export function PinModal({ open, busy, ready = true, working, title, description, hint, summary, error, testId,
                           pin, messages, onConfirm, onClose }) {
  const canConfirm = !busy && pin.length === PIN_LENGTH && ready;
  const errorId = useId();
  // Enter pressed before the dialog is ready (its signing code still loading): confirmed once it
  // is, unless the digits change meanwhile. Keyboard and screen-reader users cannot see Confirm
  // turn on, so their Enter must not be lost.
  const enterWaiting = useRef(false);
  const enter = () => {
    if (busy || pin.pinRef.current.length !== PIN_LENGTH) return;
    if (ready) onConfirm();
    else enterWaiting.current = true;
  };
  useEffect(() => {
    if (!open) enterWaiting.current = false;
    if (ready && enterWaiting.current) {
      enterWaiting.current = false;
      if (!busy && pin.pinRef.current.length === PIN_LENGTH) onConfirm();
    }
  }, [ready, open]);
  // The field is disabled while busy (and loses focus): a failed attempt gives it focus back.
  const wasBusy = useRef(false);
  useEffect(() => {
    if (wasBusy.current && !busy && open && pin.inputRef.current) pin.inputRef.current.focus();
    wasBusy.current = busy;
  }, [busy, open]);
  return (
    <Dialog.Root open={!!open} onOpenChange={(next) => { if (!next && !busy) onClose && onClose(); }}>
      <Dialog.Content maxWidth="400px" data-testid={testId} onEscapeKeyDown={(e) => busy && e.preventDefault()}
        onPointerDownOutside={(e) => busy && e.preventDefault()} onOpenAutoFocus={dialogOpened}
        onCloseAutoFocus={dialogClosed}>
        <Dialog.Title>{title}</Dialog.Title>
        <Dialog.Description size="2">{description}</Dialog.Description>
        {hint ? <Text as="p" size="2" color="gray" mt="2">{hint}</Text> : null}
        {summary && summary.length ? (
          <Flex direction="column" gap="1" mt="3" data-testid="pin-summary">
            {summary.map((line, i) => (
              <Text key={i} as="p" size="3" weight="medium" style={{ overflowWrap: "anywhere" }}>{line}</Text>
            ))}
          </Flex>
        ) : null}
        <div>
          <PinInput inputRef={pin.inputRef} pinRef={pin.pinRef} label={messages.pin_label} disabled={busy}
            errorId={error ? errorId : ""}
            onLength={(n) => { enterWaiting.current = false; pin.setLength(n); }}
            // The digits' ref, not pin.length: an Enter right after the sixth digit comes before the re-render.
            onEnter={enter} />
          <PinProgress count={pin.length} messages={messages} />
          {error ? <Text as="p" size="2" color="red" role="alert" id={errorId}>{error}</Text> : null}
          {/* Always there (empty while idle): "Working…" put into it after Confirm is announced. */}
          <Text as="p" size="2" role="status" data-testid="pin-working">{working ? messages.working : ""}</Text>
          <Flex gap="3" justify="end" mt="3">
            <Button type="button" variant="soft" color="gray" size="3" disabled={busy}
              onClick={() => onClose && onClose()}>{messages.cancel}</Button>
            <Button type="button" size="3" disabled={!canConfirm} onClick={() => onConfirm()}>{messages.confirm}</Button>
          </Flex>
        </div>
      </Dialog.Content>
    </Dialog.Root>
  );
}

// Asks for the PIN and runs ACTIONS[action]: the payload is parsed and checked when the dialog
// opens (a mismatch shows its error and Confirm stays off), the summary shown is computed from
// that parsed payload, and the PIN signs exactly it. onDone gets the public result.
// expect* props: what the page showed (the link's chain, merchant, token, amount in smallest units).
export function PinDialog({ open, title, owner, action, payload, chains, expectChainId, expectMerchant, expectToken,
                            expectUnits, tokenSymbol, tokenDecimals, messages, errors, onDone, onClose }) {
  const pin = usePin();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const [prepared, setPrepared] = useState(null);

  useEffect(() => {
    setPrepared(null);
    if (!open) { setError(""); setBusy(false); pin.clear(); return undefined; }
    let live = true;
    const prepare = ACTIONS[action];
    const expect = { chainId: expectChainId, merchant: expectMerchant, token: expectToken, units: expectUnits };
    const token = { symbol: tokenSymbol || "", decimals: Number.isInteger(tokenDecimals) ? tokenDecimals : 18 };
    const shown = { chainId: expectChainId, address: expectToken, symbol: tokenSymbol, decimals: tokenDecimals };
    loadKeyring()
      .then((keyring) => {
        if (!prepare) throw new Error("unknown action");
        return prepare(keyring, { owner, payload, expect, chains: chains || {}, token, shown, messages });
      })
      .then((p) => { if (live) { setPrepared(p); setError(""); } })
      .catch((e) => live && setError(errorTextOf(errors, e, "SIGN_FAILED")));
    return () => { live = false; };
  }, [open, action, payload, owner, chains, expectChainId, expectMerchant, expectToken, expectUnits, tokenSymbol,
      tokenDecimals]);

  const confirm = async () => {
    const digits = pin.pinRef.current;
    if (!/^[0-9]{6}$/.test(digits)) { setError(errorText(errors, "PIN_FORMAT")); return; }
    if (!prepared) return;
    setBusy(true);
    setError("");
    try {
      const result = await prepared.sign(digits);
      pin.clear();
      setBusy(false);
      onDone && onDone(result);
    } catch (e) {
      pin.clear();
      setBusy(false);
      setError(errorTextOf(errors, e, "SIGN_FAILED"));
    }
  };

  return (
    <PinModal open={open} busy={busy} working={busy} ready={!!prepared} title={title || messages.pin_dialog_title}
      description={messages.pin_dialog_hint} summary={prepared ? prepared.lines : null} error={error}
      pin={pin} messages={messages} onConfirm={confirm} onClose={onClose} testId="pin-dialog" />
  );
}

// The address as a QR code (error correction M, margin 2, scale 4), shown at 220 px.
export function ReceiveQr({ text, errors }) {
  const [src, setSrc] = useState("");
  const [error, setError] = useState("");
  useEffect(() => {
    let live = true;
    setSrc("");
    setError("");
    if (!text) return undefined;
    import("qrcode")
      .then((mod) => (mod.default || mod).toDataURL(text, { errorCorrectionLevel: "M", margin: 2, scale: 4 }))
      .then((url) => live && setSrc(url))
      .catch(() => live && setError(errorText(errors, "QR_FAILED")));
    return () => { live = false; };
  }, [text]);
  if (error) return <Text color="red" role="alert">{error}</Text>;
  if (!src) return <div style={{ width: 220, height: 220 }} aria-busy="true" />;
  return <img src={src} width={220} height={220} alt={text} style={{ imageRendering: "pixelated" }} />;
}

// Reports whether this browser holds the owner's local materials: at mount (every route
// change mounts it) and whenever the tab becomes visible again.
export function DeviceCheck({ owner, onCheck }) {
  useEffect(() => {
    if (!owner) return undefined;
    const check = () => {
      if (document.visibilityState !== "visible") return;
      const lc = owner.toLowerCase();
      const present = ["lwrapIv", "lwrapCt", "kdfSaltB", "kdfParams", "ciphertextIv", "ciphertext", "devSecret"]
        .every((name) => window.localStorage.getItem(`${lc}:${name}`) !== null);
      // backed_up: this browser wrote or restored this address's backup on Drive (its driveMeta).
      const backedUp = present && window.localStorage.getItem(`${lc}:driveMeta`) !== null;
      onCheck && onCheck(backedUp ? "backed_up" : present ? "present" : "missing");
    };
    // After this render's effects, not in them: Reflex takes an event's route from a ref its
    // provider updates in its own effect, which runs after this one. Reported at once, a move
    // within the app sent the previous page's route, and the alert was bound to that page.
    const first = setTimeout(check, 0);
    document.addEventListener("visibilitychange", check);
    return () => {
      clearTimeout(first);
      document.removeEventListener("visibilitychange", check);
    };
  }, [owner]);
  return null;
}
