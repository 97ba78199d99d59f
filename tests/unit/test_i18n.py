import ast
import json
import re
import subprocess
from pathlib import Path

import pytest

from wallet_app.i18n import (
    AREAS,
    CATALOGUES,
    ERROR_TEXTS,
    catalogue_module_texts,
    lang_from_accept_language,
    messages,
    normalize_lang,
    t,
    write_catalogue_modules,
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


def browser_tables(folder, module: str, name: str):
    """`name` exported by a generated module, as node computes it from the written files."""
    (folder / "package.json").write_text('{"type": "module"}')  # the modules are ES modules
    script = f"import({json.dumps((folder / module).as_uri())}).then(m => console.log(JSON.stringify(m.{name})))"
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


def test_each_area_ships_as_its_own_module_and_files_are_rewritten_only_on_change(tmp_path):
    write_catalogue_modules(tmp_path)
    for area, texts in AREAS.items():
        assert browser_tables(tmp_path, f"area_{area}.js", "TEXTS") == texts
    assert browser_tables(tmp_path, "catalogues.js", "CATALOGUES") == CATALOGUES
    stamp = (tmp_path / "catalogues.js").stat().st_mtime_ns
    write_catalogue_modules(tmp_path)
    assert (tmp_path / "catalogues.js").stat().st_mtime_ns == stamp


def test_the_error_module_carries_the_few_texts_kept_outside_the_errors_area():
    other = re.search(r"const OTHER = (.*);\n", catalogue_module_texts()["error_texts.js"]).group(1)
    assert set(json.loads(other)["en"]) == {"invalid_chain_id", "need_chain", "need_token", "need_recipient",
                                           "need_amount", "token_info_missing",
                                           "database_unavailable"}  # core: the busy notice on every page


def test_lookups_read_the_imported_tables_instead_of_inlining_them():
    text = t("subtitle")  # a core text: the core area's module only
    assert str(text).startswith("TEXTS_core?.[") and str(text).endswith('?.["subtitle"]')
    assert str(t("scan_qr")).startswith("TEXTS_send?.[")
    assert "Non-custodial" not in str(messages())


def test_the_browser_module_derives_the_same_error_texts(tmp_path):
    write_catalogue_modules(tmp_path)
    assert browser_tables(tmp_path, "error_texts.js", "ERROR_TEXTS") == ERROR_TEXTS


def test_the_sign_in_page_loads_only_the_core_texts():
    # bench/page_weight.py: / ships no error table (its sign-in reports codes to LoginState).
    from wallet_app.i18n import CATALOGUE_IMPORT
    from wallet_app.pages.login import login_page

    imports = login_page()._get_all_imports()
    tables = {k.removeprefix(CATALOGUE_IMPORT) for k in imports if k.startswith(CATALOGUE_IMPORT)}
    assert tables == {"area_core.js"}


# Components whose positional string arguments are text a user sees or a screen reader reads,
# and the props that are read out (aria-label, title, placeholder, alt).
_TEXT_CALLS = re.compile(
    r"rx\.(text|heading|button|badge|link|code|callout(\.text)?|checkbox|skeleton|"
    r"(alert_)?dialog\.(title|description)|select\.item|segmented_control\.item|el\.[a-z0-9]+)$"
)
_READ_PROPS = {"aria_label", "title", "placeholder", "alt", "label", "aria_description", "aria_roledescription"}
_WORD = re.compile(r"[A-Za-z]{2,}|[\uac00-\ud7a3]+")


def _literal_words(node) -> list[str]:
    """Words in the string constants directly in `node` (a str, or an f-string's literal parts)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _WORD.findall(node.value)
    if isinstance(node, ast.JoinedStr):
        return [w for part in node.values for w in _literal_words(part)]
    return []


def hard_coded_texts(source: str) -> list[str]:
    """'line: call: text' for every literal word given to a text component or a read-out prop."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        texts = list(node.args) if _TEXT_CALLS.search(name) else []
        texts += [k.value for k in node.keywords if k.arg in _READ_PROPS]
        found += [f"{node.lineno}: {name}: {w}" for arg in texts for w in _literal_words(arg)]
    return found


@pytest.mark.parametrize(
    "source, expected",
    [
        ('rx.text("Transfer")', ["1: rx.text: Transfer"]),
        ('rx.skeleton(rx.text("Sent 0"), width="90px")', ["1: rx.text: Sent"]),
        ('rx.input(placeholder="Token address")', ["1: rx.input: Token", "1: rx.input: address"]),
        ('rx.icon_button(rx.icon("copy"), aria_label="복사")', ["1: rx.icon_button: 복사"]),
        ('rx.el.label(f"Amount {x}")', ["1: rx.el.label: Amount"]),
        ('rx.text(t("send"), "0.0", " · ")', []),
        ('rx.icon("arrow-up-right")', []),
        ('rx.input(placeholder="0x…", id="send-recipient")', []),
        ('rx.text(s.amount, size="2", color_scheme="gray")', []),
    ],
)
def test_hard_coded_texts_finds_literal_words(source, expected):
    assert hard_coded_texts(source) == expected


def test_no_page_or_component_shows_a_hard_coded_text():
    """Every word a page shows or a screen reader reads comes from the catalogues (t())."""
    found = {}
    for folder in ("pages", "components"):
        for path in sorted((ROOT / "wallet_app" / folder).rglob("*.py")):
            if hits := hard_coded_texts(path.read_text()):
                found[str(path.relative_to(ROOT))] = hits
    assert found == {}
