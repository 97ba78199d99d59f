// The page was built for another version of the app than the server it reached (a deploy: the
// previous and the new release serve side by side for a while). Reflex reloads the page once by
// itself; when that reload landed on the same mismatch it shows a banner of its own instead, in
// English whatever the page's language, over the page's heading. That banner gives way to this
// notice, in the page's language, with a Reload button (Reflex's reload, and its cooldown mark).
import { useEffect, useState } from "react";

const REFLEX_BANNER_ID = "reflex-new-version-banner"; // NEW_VERSION_BANNER_ID in Reflex's state.js
const LAST_RELOADED_KEY = "reflex_last_reloaded_on_error"; // the same file's reload cooldown

function reload() {
  try {
    window.sessionStorage.setItem(LAST_RELOADED_KEY, Date.now().toString());
  } catch (e) {
    // storage refused: the reload still gets the new version
  }
  window.location.reload();
}

// Whether Reflex's banner was taken in this page load. Reflex shows it once, when the socket
// connects; each page of the app mounts a notice of its own (components.layout.page), so the
// next page's must show from the start: the page is still of the other release.
let taken = false;

export function NewVersionNotice({ text, reloadLabel, bottom }) {
  const [shown, setShown] = useState(taken);
  useEffect(() => {
    const take = () => {
      const banner = document.getElementById(REFLEX_BANNER_ID);
      if (banner) {
        banner.remove();
        taken = true;
      }
      if (taken) setShown(true);
    };
    take();
    const observer = new MutationObserver(take);
    observer.observe(document.body, { childList: true });
    return () => observer.disconnect();
  }, []);
  if (!shown) return null;
  return (
    <div
      id="new-version-notice"
      role="alert"
      style={{
        position: "fixed",
        bottom,
        left: "16px",
        right: "16px",
        maxWidth: "448px",
        margin: "0 auto",
        padding: "10px 14px",
        borderRadius: "12px",
        zIndex: 30,
        display: "flex",
        alignItems: "center",
        gap: "12px",
        backgroundColor: "var(--amber-3)",
        color: "var(--amber-11)",
        border: "1px solid var(--amber-6)",
        font: "inherit",
      }}
    >
      <span style={{ flex: 1, fontWeight: 500 }}>{text}</span>
      <button
        type="button"
        onClick={reload}
        style={{
          minHeight: "44px",
          padding: "0 14px",
          borderRadius: "8px",
          border: "1px solid var(--amber-7)",
          background: "var(--amber-4)",
          color: "var(--amber-11)",
          font: "inherit",
          fontWeight: 500,
          cursor: "pointer",
        }}
      >
        {reloadLabel}
      </button>
    </div>
  );
}
