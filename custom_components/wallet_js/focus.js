// Focus for every dialog (Radix's onOpenAutoFocus / onCloseAutoFocus): into the dialog's
// [data-autofocus] element (else Radix's first focusable) when it opens, back to what opened
// it when it closes. Radix itself returns focus only to a Dialog.Trigger; our dialogs open from
// state (no trigger), so without this focus fell to <body>, the top of the page.
const openers = new WeakMap();
const IN_DIALOG = '[role="dialog"],[role="alertdialog"]';

// The last element focused outside any dialog: the opener when the button that opened a dialog
// lost focus on the way (it became disabled while its action runs) or another dialog held it.
let lastFocused = null;
if (typeof document !== "undefined") {
  document.addEventListener("focusin", (e) => {
    const el = e.target;
    if (el instanceof HTMLElement && !el.closest(IN_DIALOG)) lastFocused = el;
  }, true);
}

const usable = (el) => el instanceof HTMLElement && el !== document.body && el.isConnected && !el.closest(IN_DIALOG);

export function dialogOpened(event) {
  const container = event.currentTarget;
  const active = document.activeElement;
  openers.set(container, usable(active) ? active : (usable(lastFocused) ? lastFocused : null));
  const target = container.querySelector("[data-autofocus]");
  if (target && !target.disabled) {
    event.preventDefault();
    target.focus();
  }
}

export function dialogClosed(event) {
  event.preventDefault();
  giveBack(openers.get(event.currentTarget), 60);
}

// The opener once it can take focus (the state that closed the dialog may re-enable it a frame
// later), unless something else took focus meanwhile (another dialog). An opener that left the
// page (a redirect) gives way to the page's heading, so focus stays at the top of the content.
function giveBack(opener, frames) {
  if (document.activeElement && document.activeElement !== document.body) return;
  if (opener && opener.isConnected) {
    if (!opener.disabled) { opener.focus(); return; }
    if (frames > 0) { requestAnimationFrame(() => giveBack(opener, frames - 1)); return; }
  }
  const heading = document.querySelector("main h1, h1");
  if (heading) {
    if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
    heading.focus();
  }
}

// A form's keydown: a held Enter's repeats are no new submit. Held down (a phone's keyboard, a
// slow finger), Enter submitted the form again at the key repeat's rate: the add-token form's
// first Enter probed the token, a repeat once its answer was shown added it, warning and all,
// before anyone had read it.
export function heldEnterIgnored(event) {
  if (event.key === "Enter" && event.repeat) event.preventDefault();
}
