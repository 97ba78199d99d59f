import json
import re
import subprocess
from pathlib import Path

import pytest

from wallet_app.i18n import (
    CATALOGUES,
    ERROR_TEXTS,
    lang_from_accept_language,
    messages,
    normalize_lang,
    t,
    write_catalogue_module,
)

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


def test_the_browser_module_holds_both_tables_and_is_rewritten_only_on_change(tmp_path):
    path = tmp_path / "catalogues.js"
    write_catalogue_module(path)
    exports = dict(re.findall(r"export const (CATALOGUES|OTHER_ERROR_KEYS) = (.*);\n", path.read_text("utf-8")))
    assert json.loads(exports["CATALOGUES"]) == CATALOGUES
    assert json.loads(exports["OTHER_ERROR_KEYS"]) == {"invalid_chain_id": "err_unsupported_chain",
                                                        **{c: "send_" + c for c in ("need_chain", "need_token",
                                                           "need_recipient", "need_amount")},
                                                        "token_info_missing": "send_token_info_missing"}
    stamp = path.stat().st_mtime_ns
    write_catalogue_module(path)
    assert path.stat().st_mtime_ns == stamp


def test_lookups_read_the_imported_tables_instead_of_inlining_them():
    text = t("subtitle")
    assert str(text).startswith("CATALOGUES?.[") and str(text).endswith('?.["subtitle"]')
    assert "Non-custodial" not in str(messages())


def test_the_browser_module_derives_the_same_error_texts(tmp_path):
    path = tmp_path / "catalogues.mjs"
    write_catalogue_module(path)
    script = f"import({json.dumps(path.as_uri())}).then(m => console.log(JSON.stringify(m.ERROR_TEXTS)))"
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(out) == ERROR_TEXTS
