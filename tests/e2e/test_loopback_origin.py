"""Development answers at both loopback names: the server the harness starts at localhost,
opened at http://127.0.0.1:<port> (what `make run` prints), signs in and creates a wallet (the
websocket, the dev provider's popup and the API writes all accept that origin)."""

from tests.e2e import flows, helpers
from tests.e2e.conftest import DEFAULT_TIMEOUT_MS


def test_opened_at_127_0_0_1_signs_in(browser, app_server, browser_issues):
    assert app_server.base_url.startswith("http://localhost:")
    origin = app_server.base_url.replace("http://localhost:", "http://127.0.0.1:")
    with helpers.mobile_page(browser, origin, DEFAULT_TIMEOUT_MS) as page:
        page.context.on("weberror", lambda err: browser_issues.page_errors.append(str(err.error)))
        page.on("console", lambda m: m.type == "error" and browser_issues.console_errors.append(m.text))
        address = flows.create_wallet(page, flows.new_email("loopback"))
        assert page.url.startswith(origin + "/home")
        assert flows.me(page)["address"] == address  # the /me/address write was accepted from 127.0.0.1
        browser_issues.assert_clean()
