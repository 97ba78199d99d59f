"""The rate limits the tests run with: far above any test's pace, so that only the tests of the
limits themselves (tests/api/test_rate_limits.py, tests/e2e/test_rate_limit_messages.py: they set
their own) ever meet one. The shipped defaults (core/config.py) are checked by tests/unit/test_ratelimit.py."""

from wallet_app.core.ratelimit import KINDS

GENEROUS_LIMITS = {f"RATE_LIMIT_{kind.upper()}": "100000/minute" for kind in KINDS}
