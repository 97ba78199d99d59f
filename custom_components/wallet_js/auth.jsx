// Sign-in with Google's code flow (popup, redirect_uri 'postmessage') and logout.
// The authorization code goes to our server once; Google tokens never touch Python state.
import { useEffect, useState } from "react";
import { Button, Flex } from "@radix-ui/themes";
import { ClientError, errorTextOf } from "./errors.js";

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
        reject(new ClientError("GIS_LOAD_FAILED"));
      };
      document.head.appendChild(el);
    });
  }
  return scripts[src];
}

// A refused request as a ClientError: the server's error code ({"detail": code}), else
// HTTP_ERROR with the status.
async function responseError(response) {
  let detail = null;
  try {
    detail = (await response.json()).detail;
  } catch (e) {
    // not JSON: the status tells
  }
  return new ClientError(typeof detail === "string" ? detail : "HTTP_ERROR", response.status);
}

// Reflex keeps a tab's page state on the server under the token in the tab's sessionStorage
// (Reflex's utils/state.js, TOKEN_KEY). The same tab signed out and in again kept it: the signed-out
// page, and the next account's, were sent the last account's state (its address, balances, token
// list, activity). Dropped before the full page load that follows a sign-in or sign-out, the page
// starts on a new, empty state.
function newPageState() {
  try {
    window.sessionStorage.removeItem("token");
  } catch (e) {
    // storage unavailable: Reflex could not have kept a token there either
  }
}

// fetch, with a failure to reach the server as NETWORK_ERROR.
async function send(path, init) {
  try {
    return await fetch(path, { credentials: "include", ...init });
  } catch (e) {
    throw new ClientError("NETWORK_ERROR");
  }
}

async function postJson(path, body) {
  const response = await send(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await responseError(response);
  return response.status === 204 ? null : response.json();
}

// The sign-in reports an error as its code and HTTP status (0 without one); the page's state
// shows the code's catalogue text, so / loads no table of error texts.
export function GoogleSignIn({ clientId, scriptUrl, locale, label, otherLabel, onStart, onCancel, onError }) {
  const [ready, setReady] = useState(false);
  const report = (e) => onError && onError((e && typeof e.code === "string" && e.code) || "UNKNOWN", (e && e.status) || 0);

  useEffect(() => {
    if (!scriptUrl) return;
    loadScript(scriptUrl).then(() => setReady(true), report);
  }, [scriptUrl]);

  const signIn = async (selectAccount) => {
    const oauth2 = window.google && window.google.accounts && window.google.accounts.oauth2;
    if (!oauth2) {
      report(new ClientError("GIS_LOAD_FAILED"));
      return;
    }
    // The attempt's nonce (its twin sits in an HttpOnly cookie) travels as the OAuth state:
    // the server accepts the code only together with this browser's attempt.
    let attempt;
    try {
      attempt = await postJson("/api/v1/auth/login-attempt");
    } catch (e) {
      report(e);
      return;
    }
    const client = oauth2.initCodeClient({
      client_id: clientId,
      scope: "openid email profile",
      ux_mode: "popup",
      redirect_uri: "postmessage",
      select_account: selectAccount,
      state: attempt.nonce,
      callback: async (response) => {
        if (!response || !response.code) {
          // Google's own error texts are English: the catalogue's text is shown instead.
          report(new ClientError("NO_AUTH_CODE"));
          return;
        }
        try {
          const me = await postJson("/api/v1/auth/google/code", { code: response.code, state: response.state || "", locale });
          // A full page load, so the Reflex websocket reconnects carrying the new session cookie.
          newPageState();
          window.location.assign(me.address ? "/home" : "/onboarding");
        } catch (e) {
          report(e);
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

export function LogoutButton({ label, errors, onError }) {
  const [busy, setBusy] = useState(false);
  const logout = async () => {
    setBusy(true);
    try {
      const response = await send("/api/v1/auth/logout", { method: "POST" });
      // 401: the session was already gone, which is what logging out wants.
      if (!response.ok && response.status !== 401) throw await responseError(response);
      newPageState();
      window.location.assign("/");
    } catch (e) {
      setBusy(false);
      onError && onError(errorTextOf(errors, e));
    }
  };
  return (
    <Button size="3" color="red" variant="soft" disabled={busy} onClick={logout}>{label}</Button>
  );
}
