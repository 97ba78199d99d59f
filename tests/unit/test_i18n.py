import re
from pathlib import Path

import pytest

from wallet_app.i18n import CATALOGUES, lang_from_accept_language, normalize_lang

ROOT = Path(__file__).resolve().parents[2]


def test_catalogues_have_the_same_keys_and_no_empty_text():
    assert set(CATALOGUES["ko"]) == set(CATALOGUES["en"])
    for lang, catalogue in CATALOGUES.items():
        assert all(text.strip() for text in catalogue.values()), lang


def test_korean_catalogue_is_korean():
    # Every Korean text but the language names and the brand contains Hangul.
    skip = {"lang_en", "lang_ko"}
    for key, text in CATALOGUES["ko"].items():
        if key not in skip:
            assert re.search("[\uac00-\ud7a3]", text), key


@pytest.mark.parametrize(
    "key, english",
    [
        ("subtitle", "Non-custodial wallet for mobile browsers"),
        ("continue_google", "Continue with Google"),
        ("card_unavailable", "Not supported yet."),
        ("login_failed", "Login failed: "),
    ],
)
def test_specification_texts_word_for_word(key, english):
    assert CATALOGUES["en"][key] == english


@pytest.mark.parametrize(
    "header, expected",
    [
        ("ko-KR,ko;q=0.9,en;q=0.8", "ko"),
        ("ko", "ko"),
        ("KO-kr", "ko"),
        ("en-US,en;q=0.9,ko;q=0.8", "en"),
        ("ja-JP", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_default_language_from_browser(header, expected):
    assert lang_from_accept_language(header) == expected


@pytest.mark.parametrize("value, expected", [("ko", "ko"), ("en", "en"), ("fr", None), ("", None), (None, None)])
def test_normalize_lang(value, expected):
    assert normalize_lang(value) == expected


def test_every_catalogue_key_used_in_pages_exists():
    used = set()
    for path in (ROOT / "wallet_app").rglob("*.py"):
        used |= set(re.findall(r"\bt\(\"([a-z0-9_]+)\"\)", path.read_text()))
    assert used, "no catalogue lookups found"
    assert used <= set(CATALOGUES["en"]), used - set(CATALOGUES["en"])
