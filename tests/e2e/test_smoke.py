"""Smoke: the production app starts, answers /ping, and / renders on a phone without browser errors."""

import time
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.e2e import helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS


def test_ping(app_server):
    with urllib.request.urlopen(app_server.base_url + "/ping", timeout=10) as r:
        assert r.status == 200
        assert "pong" in r.read().decode()


def test_root_renders_on_phone(page, app_server, browser_issues, screenshot):
    response = page.goto("/")
    assert response is not None and response.ok, f"GET / -> {response and response.status}"
    # React has mounted and rendered something visible (no exact texts: the pages are still moving).
    page.wait_for_function("() => document.body && document.body.innerText.trim().length > 0")
    expect(page.locator("body")).to_be_visible()
    assert page.viewport_size == {"width": 390, "height": 844}
    # Mobile layout: nothing wider than the phone (no horizontal scrolling).
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    path = screenshot("root")
    assert path.stat().st_size > 1000
    browser_issues.assert_clean()


def test_fresh_profile_per_context(page, browser, app_server):
    # Each test gets a new context: storage written in one is not seen by the next one.
    page.goto("/")
    page.evaluate("() => localStorage.setItem('e2e.marker', '1')")
    assert page.evaluate("() => localStorage.getItem('e2e.marker')") == "1"
    with helpers.mobile_page(browser, app_server.base_url, DEFAULT_TIMEOUT_MS) as fresh:
        fresh.goto("/")
        assert fresh.evaluate("() => localStorage.getItem('e2e.marker')") is None


def test_issue_collector_sees_errors(page, browser_issues):
    # The harness itself: console errors, uncaught errors and CSP violations are all caught.
    page.goto("/")
    page.evaluate("() => console.error('e2e-console-probe')")
    page.evaluate("() => { setTimeout(() => { throw new Error('e2e-throw-probe'); }, 0); }")
    # An inline script is refused by the app's CSP (script-src without 'unsafe-inline').
    page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.x = 1';"
                  " document.body.append(s); }")
    expected = [
        lambda: any("e2e-console-probe" in m for m in browser_issues.console_errors),
        lambda: any("e2e-throw-probe" in m for m in browser_issues.page_errors),
        lambda: any(v.get("directive", "").startswith("script-src") for v in browser_issues.csp_violations),
    ]
    for check in expected:
        _wait_until(page, check)
    try:
        browser_issues.assert_clean()
    except AssertionError as e:
        assert "e2e-console-probe" in str(e) and "CSP violation" in str(e)
    else:
        raise AssertionError("assert_clean() passed despite errors")
    browser_issues.assert_clean(ignore=[r"e2e-(console|throw)-probe", r"CSP violation", r"Content Security Policy"])


def _wait_until(page, check, timeout_s: float = 5.0) -> None:
    # Playwright delivers events only while it waits: poll the Python-side condition in short waits.
    end = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < end, "event not seen in time"
        page.wait_for_timeout(50)


@pytest.mark.parametrize(
    ("rpc_url", "expected"),
    [
        ("http://127.0.0.1:8545", "http://127.0.0.1:40001"),
        ("http://localhost:8545/rpc", "http://localhost:40001/rpc"),
        ("https://rpc.example.org", "https://rpc.example.org"),  # not ours to start: unchanged
        ("http://127.0.0.1", "http://127.0.0.1"),  # no port: serve.py starts nothing there
    ],
)
def test_with_free_loopback_ports(rpc_url, expected):
    chains = [{"chain_id": 1, "rpc_url": rpc_url, "tokens": []}]
    out = helpers.with_free_loopback_ports(chains, pick_port=lambda: 40001)
    assert out == [{"chain_id": 1, "rpc_url": expected, "tokens": []}]
    assert chains[0]["rpc_url"] == rpc_url  # input untouched
