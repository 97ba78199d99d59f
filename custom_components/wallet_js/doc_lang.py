"""Python wrapper for doc_lang.jsx: <html lang> set to the page's language."""

import reflex as rx


class DocumentLang(rx.Component):
    """Renders nothing; keeps document.documentElement.lang equal to `lang`."""

    library = rx.asset("doc_lang.jsx", shared=True).importable_path
    tag = "DocumentLang"

    lang: rx.Var[str]


document_lang = DocumentLang.create
