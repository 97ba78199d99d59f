// Sign-in with Google's code flow (popup, redirect_uri 'postmessage') and logout.
// The authorization code goes to our server once; Google tokens never touch Python state.
import { useEffect, useState } from "react";
import { Button, Flex } from "@radix-ui/themes";

const scripts = {};

function loadScript(src) {
  if (!scripts[src]) {
    scripts[src] = new Promise((resolve, reject) => {
      const el = document.createElement("script");
      el.src = src;
      el.async = true;
      el.onload = () => resolve();
      el.onerror = () => {
        delete scripts[src];
        reject(new Error("Failed to load Google Identity Services"));
      };
      document.head.appendChild(el);
    });
  }
  return scripts[src];
}

export async function errorText(response) {
  try {
    const body = await response.json();
    const detail = body && body.detail;
    if (typeof detail === "string") return detail;
    if (detail) return JSON.stringify(detail);
  } catch (e) {
    // not JSON: fall back to the status
  }
  return `HTTP ${response.status}`;
}

async function postJson(path, body) {
  const response = await fetch(path, {
    method: "POST",
    credentials: "include",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(await errorText(response));
  return response.status === 204 ? null : response.json();
}

export function GoogleSignIn({ clientId, scriptUrl, locale, label, otherLabel, onStart, onCancel, onError }) {
  const [ready, setReady] = useState(false);

  useEffect(() => {
    if (!scriptUrl) return;
    loadScript(scriptUrl).then(
      () => setReady(true),
      (e) => onError && onError(e.message),
    );
  }, [scriptUrl]);

  const signIn = (selectAccount) => {
    const oauth2 = window.google && window.google.accounts && window.google.accounts.oauth2;
    if (!oauth2) {
      onError && onError("Failed to load Google Identity Services");
      return;
    }
    const client = oauth2.initCodeClient({
      client_id: clientId,
      scope: "openid email profile",
      ux_mode: "popup",
      redirect_uri: "postmessage",
      select_account: selectAccount,
      callback: async (response) => {
        if (!response || !response.code) {
          onError && onError((response && (response.error_description || response.error)) || "No authorization code");
          return;
        }
        try {
          const me = await postJson("/api/v1/auth/google/code", { code: response.code, locale });
          // A full page load, so the Reflex websocket reconnects carrying the new session cookie.
          window.location.assign(me.address ? "/home" : "/onboarding");
        } catch (e) {
          onError && onError(e.message || String(e));
        }
      },
      error_callback: () => onCancel && onCancel(),
    });
    onStart && onStart();
    client.requestCode();
  };

  return (
    <Flex direction="column" gap="3" width="100%">
      <Button size="4" disabled={!ready} onClick={() => signIn(false)}>{label}</Button>
      <Button size="3" variant="soft" disabled={!ready} onClick={() => signIn(true)}>{otherLabel}</Button>
    </Flex>
  );
}

export function LogoutButton({ label, onError }) {
  const [busy, setBusy] = useState(false);
  const logout = async () => {
    setBusy(true);
    try {
      const response = await fetch("/api/v1/auth/logout", { method: "POST", credentials: "include" });
      // 401: the session was already gone, which is what logging out wants.
      if (!response.ok && response.status !== 401) throw new Error(await errorText(response));
      window.location.assign("/");
    } catch (e) {
      setBusy(false);
      onError && onError(e.message || String(e));
    }
  };
  return (
    <Button size="3" color="red" variant="soft" disabled={busy} onClick={logout}>{label}</Button>
  );
}
