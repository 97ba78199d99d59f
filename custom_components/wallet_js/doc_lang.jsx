// <html lang> follows the page's language (ko/en): screen readers choose their voice by it, and
// Reflex writes it once, as "en", into every page.
import { useEffect } from "react";

export function DocumentLang({ lang }) {
  useEffect(() => {
    if (lang) document.documentElement.lang = lang;
  }, [lang]);
  return null;
}
