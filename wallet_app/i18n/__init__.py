"""ko/en catalogues and the lookup pages use. Both catalogues ship to the browser, so a
language switch re-renders at once without a round trip."""

import json
import os
import tempfile

import reflex as rx
from reflex.utils.imports import ImportVar
from reflex.vars.base import Var, VarData
from reflex.vars.object import ObjectVar

from wallet_app.core.config import REPO_ROOT
from wallet_app.errors import REGISTRY, error_texts
from wallet_app.i18n.en import EN
from wallet_app.i18n.ko import KO

LANGUAGES = ("ko", "en")


def _merged() -> dict[str, dict[str, str]]:
    """The core catalogues plus every area module's, refusing a key defined twice."""
    import importlib
    import pkgutil

    from wallet_app.i18n import areas

    merged = {"en": dict(EN), "ko": dict(KO)}
    for info in pkgutil.iter_modules(areas.__path__):
        module = importlib.import_module(f"{areas.__name__}.{info.name}")
        for lang, texts in (("en", module.EN), ("ko", module.KO)):
            clash = set(texts) & set(merged[lang])
            if clash:
                raise KeyError(f"catalogue keys defined twice ({info.name}): {sorted(clash)}")
            merged[lang].update(texts)
    return merged


CATALOGUES = _merged()
# Error code -> text per language (wallet_app/errors.REGISTRY), for the JS units' errorText().
ERROR_TEXTS = {lang: error_texts(CATALOGUES[lang]) for lang in LANGUAGES}


def normalize_lang(value: str | None) -> str | None:
    """'ko'/'en' for a supported code, else None."""
    return value if value in LANGUAGES else None


def lang_from_accept_language(header: str | None) -> str:
    """Default language: Korean when the browser's first language starts with ko."""
    first = (header or "").split(",")[0].strip().lower()
    return "ko" if first.startswith("ko") else "en"


# Both tables ship once, as one module the pages import: written inline, every t() would
# carry its own copy of the catalogues into the page's code.
CATALOGUE_FILE = REPO_ROOT / "assets" / "external" / "wallet_app" / "i18n" / "catalogues.js"
CATALOGUE_MODULE = "$/public/external/wallet_app/i18n/catalogues.js"


def write_catalogue_module(path=CATALOGUE_FILE) -> None:
    """The browser module with CATALOGUES and ERROR_TEXTS (generated, not committed). ERROR_TEXTS
    is derived there, so its texts ship once: a code's text is its catalogue's err_<code>, and the
    few codes whose registry key is another one are listed."""
    other_keys = {code: spec.key for code, spec in REGISTRY.items() if spec.key != f"err_{code}"}
    text = (
        f"export const CATALOGUES = {json.dumps(CATALOGUES, ensure_ascii=False, sort_keys=True)};\n"
        f"export const OTHER_ERROR_KEYS = {json.dumps(other_keys, sort_keys=True)};\n"
        "export const ERROR_TEXTS = Object.fromEntries(Object.entries(CATALOGUES).map(([lang, texts]) => [lang,\n"
        "  Object.fromEntries([\n"
        "    ...Object.keys(texts).filter((k) => k.startsWith('err_')).map((k) => [k.slice(4), texts[k]]),\n"
        "    ...Object.entries(OTHER_ERROR_KEYS).map(([code, key]) => [code, texts[key]]),\n"
        "  ])]));\n"
    )
    write_generated_module(path, text)


def write_generated_module(path, text: str) -> None:
    """A generated browser module under assets/external (not committed): rewritten only when
    it changed, atomically, since several builds may run at once."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


write_catalogue_module()


def _table(name: str) -> ObjectVar:
    """The browser's CATALOGUES or ERROR_TEXTS (lang -> key -> text), imported from the module."""
    imports = {CATALOGUE_MODULE: [ImportVar(tag=name)]}
    var: Var = Var(_js_expr=name, _var_type=dict[str, dict[str, str]], _var_data=VarData(imports=imports))
    return var.to(ObjectVar, dict[str, dict[str, str]])


def t(key: str) -> rx.Var:
    """The text for `key` in the current language (resolved in the browser)."""
    if key not in CATALOGUES["en"]:
        raise KeyError(f"missing catalogue key: {key}")
    return messages()[key]


def t_var(key: rx.Var) -> rx.Var:
    """Like t() for a key held in state (validated by the code that sets it)."""
    return messages()[key]


def messages() -> ObjectVar:
    """The whole current catalogue, for JS units that show their own texts."""
    from wallet_app.state.session import SessionState

    return _table("CATALOGUES")[SessionState.lang].to(ObjectVar, dict[str, str])


def error_messages() -> ObjectVar:
    """Error code -> text in the current language, for JS units that show error codes."""
    from wallet_app.state.session import SessionState

    return _table("ERROR_TEXTS")[SessionState.lang].to(ObjectVar, dict[str, str])
