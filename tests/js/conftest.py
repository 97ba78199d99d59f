"""Fixtures for the browser crypto tests: one built site and one Chromium per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import browser_harness  # noqa: E402


@pytest.fixture(scope="session")
def site_url(tmp_path_factory):
    root = browser_harness.prepare_site(tmp_path_factory.mktemp("wallet_js_site"))
    with browser_harness.serve(root) as url:
        yield url


@pytest.fixture(scope="session")
def browser(pw):
    b = browser_harness.launch(pw)
    yield b
    b.close()


@pytest.fixture(scope="session")
def _shared_page(browser, site_url):
    context, pg = browser_harness.open_page(browser, site_url)
    yield pg
    context.close()


@pytest.fixture()
def page(_shared_page):
    """The session's page with window.nb loaded, reset: empty localStorage, default worker URL.

    One page for all tests: a new context per test costs about a second here.
    """
    _shared_page.evaluate("() => { localStorage.clear(); nb.kdf.setKdfWorkerUrl('/kdf-worker.js'); }")
    return _shared_page
