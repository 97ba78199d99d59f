// <html lang> follows the page's language (ko/en): screen readers choose their voice by it, and
// Reflex writes it once, as "en", into every page. The document's title likewise: Reflex writes
// the English app name into every page; here it becomes "<page> · <app>" in the page's language
// (what a screen reader announces on navigation, and the tab's name).
import { useEffect } from "react";

export function DocumentLang({ lang, title, appTitle }) {
  useEffect(() => {
    if (lang) document.documentElement.lang = lang;
  }, [lang]);
  useEffect(() => {
    if (appTitle) document.title = title ? `${title} · ${appTitle}` : appTitle;
  }, [title, appTitle]);
  return null;
}
