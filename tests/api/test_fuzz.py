"""schemathesis over the served /api/v1/openapi.json with a signed-in session on a real anvil.

Every generated request (valid and invalid bodies and parameters) must answer without a 5xx, and
every 4xx must be a JSON error {"detail": "<code>"}. Each operation is one test item with a fresh
database, a signed-in user and a registered wallet address; the session cookie rides on every case.
(schemathesis' own pytest loader, from_fixture, does not run under pytest 9: the operations are
driven here with hypothesis directly.)
"""

import time

import pytest
import schemathesis
from eth_account import Account
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from wallet_app.api import build_api
from wallet_app.dev import faucet
from wallet_app.services import relayer, sessions

ORIGIN = "http://testserver"
EXAMPLES = 60  # hypothesis' budget per operation and mode (fewer when the input space is small)
MIN_CASES = 1000  # the floor for one run

# Logout revokes the session the fuzz runs with: every later case would only test 401. The other
# routes keep the session (a failed sign-in leaves it alone; a successful one cannot be generated).
EXCLUDED = {("POST", "/api/v1/auth/logout")}
OPERATIONS = sorted(
    (method.upper(), path)
    for path, item in build_api().openapi()["paths"].items()
    for method in item
    if (method.upper(), path) not in EXCLUDED
)
RUN = {"cases": 0, "started": 0.0}


@pytest.fixture
def signed_in(chain_env, app, client, login):
    """A signed-in user with a registered address; yields the session cookie."""
    login("fuzz@example.com")
    resp = client.post("/api/v1/me/address", json={"address": Account.create().address})
    assert resp.status_code == 200, resp.text
    assert faucet.wait_idle(60)
    yield {sessions.SESSION_COOKIE: client.cookies.get(sessions.SESSION_COOKIE)}
    relayer.forget_process_state()


def check_case(case, cookies: dict) -> None:
    # Origin: every write must come from the app's own origin (api.deps.require_same_origin).
    response = case.call(headers={"Origin": ORIGIN}, cookies=cookies)
    RUN["cases"] += 1
    case.validate_response(response, checks=[not_a_server_error])
    if 400 <= response.status_code < 500:
        where = (case.method, case.formatted_path, case.query, case.body, response.status_code, response.text)
        assert response.headers.get("content-type") == ["application/json"], where
        body = response.json()
        assert isinstance(body, dict) and list(body) == ["detail"] and isinstance(body["detail"], str), where


def test_fuzz_starts():
    RUN["started"] = time.monotonic()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("method,path", OPERATIONS)
def test_operation_survives_fuzzing(app, signed_in, method, path):
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", app)
    [operation] = [r.ok() for r in schema.include(method=method, path=path).get_all_operations()]
    has_inputs = operation.body or any(True for _ in operation.iter_parameters())
    # An operation without parameters or body has no invalid input to generate.
    for mode in [GenerationMode.POSITIVE, GenerationMode.NEGATIVE] if has_inputs else [GenerationMode.POSITIVE]:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def fuzz(case):
            check_case(case, signed_in)

        fuzz()


def test_fuzz_ran_enough_cases():
    elapsed = time.monotonic() - RUN["started"]
    print(f"\nfuzz: {RUN['cases']} cases over {len(OPERATIONS)} operations in {elapsed:.0f} s")
    assert RUN["cases"] >= MIN_CASES, RUN
