"""The page registry: every module in this package that declares `PAGE = routes.Page(...)`.

Adding a screen touches one page module here, its state module in wallet_app/state/ and its
catalogue area file in wallet_app/i18n/areas/ (README "Adding a screen"). Discovery is lazy, so
importing one page module never imports the others.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

from wallet_app.routes import Page

APP_TITLE = "Newbl Wallet"


def discover(package: ModuleType) -> tuple[Page, ...]:
    """The PAGE of every module of `package` that has one, refusing a route declared twice."""
    pages: dict[str, Page] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        page = getattr(module, "PAGE", None)
        if not isinstance(page, Page):
            continue
        if page.route in pages:
            raise ValueError(f"route declared twice: {page.route} ({info.name})")
        pages[page.route] = page
    return tuple(pages.values())


@cache
def registered_pages() -> tuple[Page, ...]:
    import wallet_app.pages as package

    return discover(package)


def add_pages(app, pages: tuple[Page, ...]) -> None:
    """Add every page to the rx.App: the session check first in its on_load (its redirects
    decide before any page loads data), then the page's own events; and the 404 page."""
    from wallet_app.pages import not_found
    from wallet_app.state.session import SessionState

    for page in pages:
        app.add_page(page.view, route=page.route, title=APP_TITLE, on_load=[SessionState.check_session, *page.on_load])
    app.add_page(not_found.not_found_page, route="404", title=APP_TITLE, on_load=SessionState.check_session)
