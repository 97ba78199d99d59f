"""Python wrapper for doc_lang.jsx: <html lang> and the document's title in the page's language."""

import reflex as rx


class DocumentLang(rx.Component):
    """Renders nothing; keeps document.documentElement.lang equal to `lang` and the document's
    title "<title> · <app_title>" (the app's alone without a page title)."""

    library = rx.asset("doc_lang.jsx", shared=True).importable_path
    tag = "DocumentLang"

    lang: rx.Var[str]
    title: rx.Var[str]
    app_title: rx.Var[str]


document_lang = DocumentLang.create
