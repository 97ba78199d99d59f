"""Python wrapper for new_version.jsx: the notice that this page is of another version of the app
than the server (a deploy), in the page's language, in place of Reflex's English banner."""

import reflex as rx


class NewVersionNotice(rx.Component):
    """Renders nothing until Reflex would show its new-version banner; then `text` and a
    `reload_label` button that reloads the page, fixed at `bottom`."""

    library = rx.asset("new_version.jsx", shared=True).importable_path
    tag = "NewVersionNotice"

    text: rx.Var[str]
    reload_label: rx.Var[str]
    bottom: rx.Var[str]


new_version_notice = NewVersionNotice.create
