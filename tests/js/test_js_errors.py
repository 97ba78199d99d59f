"""errors.js in Chromium: which catalogue text a thrown error shows (errorTextOf)."""

from __future__ import annotations

import pytest

from wallet_app.errors import REGISTRY
from wallet_app.i18n import CATALOGUES

from jshelpers import ok

# What the browser's error_texts.js holds for English: every registered code's text.
ERROR_TEXTS = {code: CATALOGUES["en"][spec.key] for code, spec in REGISTRY.items()}

SIGN_FAILED = "PIN check/sign failed"


@pytest.mark.parametrize("error, text", [
    ({"code": "INVALID_PIN"}, "Invalid PIN. Please try again."),  # a registered code: its own text
    ({"code": "INVALID_ARGUMENT"}, SIGN_FAILED),  # ethers' own codes are no catalogue's: the fallback
    ({"code": "toString"}, SIGN_FAILED),  # an inherited name is no registered code
    ({"code": 20}, SIGN_FAILED),  # a DOMException's number
    ({}, SIGN_FAILED),
    (None, SIGN_FAILED),
])
def test_an_error_shows_its_registered_code_else_the_fallback(page, error, text):
    shown = ok(page, "return nb.errors.errorTextOf(a.errors, a.error, 'SIGN_FAILED');",
               {"errors": ERROR_TEXTS, "error": error})
    assert shown == text
