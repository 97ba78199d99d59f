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
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from wallet_app.api import build_api
from wallet_app.dev import faucet
from wallet_app.services import relayer, sessions
from wallet_app.services.eth import ZERO_ADDRESS

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
RUN: dict = {"cases": 0, "operations": 0, "started": 0.0, "statuses": {}}


@pytest.fixture
def signed_in(chain_env, app, client, login):
    """A signed-in user with a registered (funded) address; yields the session cookie and the user's address."""
    login("fuzz@example.com")
    address = Account.create().address
    resp = client.post("/api/v1/me/address", json={"address": address})
    assert resp.status_code == 200, resp.text
    assert faucet.wait_idle(60)
    yield {sessions.SESSION_COOKIE: client.cookies.get(sessions.SESSION_COOKIE)}, address
    relayer.forget_process_state()


def real_values(deployed: dict, user: str) -> st.SearchStrategy[dict]:
    """Values that pass the first checks (a known chain, deployed tokens, funded addresses), so
    most valid cases reach the chain, the quotes and the relayer instead of stopping at
    'invalid address': random strings almost never are one."""
    tokens = list(deployed["tokens"].values())
    token = st.sampled_from([*tokens, *tokens, ZERO_ADDRESS, user])
    account = st.sampled_from([Account.create().address, Account.create().address, user, tokens[0]])
    return st.fixed_dictionaries({
        "chain_id": st.sampled_from([31337, "31337", 31337, 1]),
        "token_address": token, "to": account, "merchant": account, "merchant_address": account, "address": account,
        "amount": st.sampled_from(["1", "0.5", "250", "1000", "0", "10000000000000000000000", 1, 10**6]),
    })


def with_real_values(case, real: dict) -> None:
    for part in (case.query, case.body):
        if isinstance(part, dict):
            for key in part.keys() & real.keys():
                part[key] = str(real[key]) if case.query is part else real[key]


def check_case(case, cookies: dict) -> None:
    # Origin: every write must come from the app's own origin (api.deps.SameOriginWrites).
    response = case.call(headers={"Origin": ORIGIN}, cookies=cookies)
    RUN["cases"] += 1
    key = f"{case.method} {case.path} {response.status_code}"
    RUN["statuses"][key] = RUN["statuses"].get(key, 0) + 1
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
def test_operation_survives_fuzzing(app, signed_in, deployed, method, path):
    cookies, user = signed_in
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", app)
    [operation] = [r.ok() for r in schema.include(method=method, path=path).get_all_operations()]
    if not (operation.body or any(True for _ in operation.iter_parameters())):
        # Nothing to generate (and no invalid input): one request.
        check_case(operation.Case(), cookies)
    else:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = operation.as_strategy(generation_mode=mode)

            @given(case=strategy, real=real_values(deployed, user), use=st.integers(0, 3))
            @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def fuzz(case, real, use):
                # 3 in 4 valid cases
                if use and mode is GenerationMode.POSITIVE:  # noqa: B023 (called in this iteration)
                    with_real_values(case, real)
                check_case(case, cookies)

            fuzz()
    RUN["operations"] += 1


def test_fuzz_ran_enough_cases():
    if RUN["operations"] < len(OPERATIONS):
        pytest.skip("counts a full run of the operations above (some failed or were deselected)")
    elapsed = time.monotonic() - RUN["started"]
    print(f"\nfuzz: {RUN['cases']} cases over {len(OPERATIONS)} operations in {elapsed:.0f} s")
    print("\n".join(f"  {k}: {n}" for k, n in sorted(RUN["statuses"].items())))
    assert RUN["cases"] >= MIN_CASES, RUN["cases"]
