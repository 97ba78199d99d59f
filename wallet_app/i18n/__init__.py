"""ko/en catalogues and the lookup pages use. Both languages ship to the browser, so a
language switch re-renders at once without a round trip; each area's texts ship as a module of
their own, so a page loads only the areas it shows (/ loads only the core texts: its sign-in
reports error codes, and LoginState shows their texts)."""

import json

import reflex as rx
from reflex.utils.imports import ImportVar
from reflex.vars.base import Var, VarData
from reflex.vars.object import ObjectVar

from wallet_app.core.config import REPO_ROOT
from wallet_app.core.files import write_if_changed
from wallet_app.errors import REGISTRY, error_texts
from wallet_app.i18n.en import EN
from wallet_app.i18n.ko import KO

LANGUAGES = ("ko", "en")
CORE_AREA = "core"  # wallet_app/i18n/en.py and ko.py


def _areas() -> dict[str, dict[str, dict[str, str]]]:
    """area -> lang -> texts: the core catalogues and every area module's, refusing a key defined twice."""
    import importlib
    import pkgutil

    from wallet_app.i18n import areas

    found = {CORE_AREA: {"en": dict(EN), "ko": dict(KO)}}
    seen = set(EN)
    for info in pkgutil.iter_modules(areas.__path__):
        module = importlib.import_module(f"{areas.__name__}.{info.name}")
        clash = seen & set(module.EN)
        if clash:
            raise KeyError(f"catalogue keys defined twice ({info.name}): {sorted(clash)}")
        seen |= set(module.EN)
        found[info.name] = {"en": dict(module.EN), "ko": dict(module.KO)}
    return found


AREAS = _areas()
AREA_OF = {key: area for area, texts in AREAS.items() for key in texts["en"]}


CATALOGUES = {lang: {k: v for texts in AREAS.values() for k, v in texts[lang].items()} for lang in LANGUAGES}
# Error code -> text per language (wallet_app/errors.REGISTRY), for the JS units' errorText().
ERROR_TEXTS = {lang: error_texts(CATALOGUES[lang]) for lang in LANGUAGES}


def normalize_lang(value: str | None) -> str | None:
    """'ko'/'en' for a supported code, else None."""
    return value if value in LANGUAGES else None


def lang_from_accept_language(header: str | None) -> str:
    """Default language: Korean when the browser's first language starts with ko."""
    first = (header or "").split(",")[0].strip().lower()
    return "ko" if first.startswith("ko") else "en"


# The browser's tables, generated under assets/external (not committed): one module per area
# (TEXTS: lang -> key -> text) that t() imports, error_texts.js (ERROR_TEXTS: lang -> code -> text,
# derived from the errors area) and catalogues.js (CATALOGUES: every area merged, for the JS units
# that show their own texts). Written inline instead, every t() would carry its own copy.
CATALOGUE_DIR = REPO_ROOT / "assets" / "external" / "wallet_app" / "i18n"
CATALOGUE_IMPORT = "$/public/external/wallet_app/i18n/"


def catalogue_module_texts() -> dict[str, str]:
    """file name -> module text."""
    files = {
        f"area_{area}.js": f"export const TEXTS = {json.dumps(texts, ensure_ascii=False, sort_keys=True)};\n"
        for area, texts in AREAS.items()
    }
    files["catalogues.js"] = (
        "".join(f'import {{ TEXTS as {area} }} from "./area_{area}.js";\n' for area in AREAS)
        + "export const CATALOGUES = Object.fromEntries("
        + f"{json.dumps(list(LANGUAGES))}.map((lang) => [lang, Object.assign({{}}, "
        + ", ".join(f"{area}[lang]" for area in AREAS)
        + ")]));\n"
    )
    # A code's text is the errors area's err_<code>; the few codes with another key carry theirs.
    errors_area = AREAS["errors"]["en"]
    other = {
        lang: {
            code: CATALOGUES[lang][spec.key]
            for code, spec in REGISTRY.items()
            if spec.key != f"err_{code}" or spec.key not in errors_area
        }
        for lang in LANGUAGES
    }
    files["error_texts.js"] = (
        'import { TEXTS } from "./area_errors.js";\n'
        f"const OTHER = {json.dumps(other, ensure_ascii=False, sort_keys=True)};\n"
        "const codes = (texts) => Object.keys(texts).filter((k) => k.startsWith('err_'));\n"
        "export const ERROR_TEXTS = Object.fromEntries(Object.entries(TEXTS).map(([lang, texts]) => [lang, {\n"
        "  ...Object.fromEntries(codes(texts).map((k) => [k.slice(4), texts[k]])),\n"
        "  ...OTHER[lang],\n"
        "}]));\n"
    )
    return files


def write_catalogue_modules(folder=CATALOGUE_DIR) -> None:
    for name, text in catalogue_module_texts().items():
        write_if_changed(folder / name, text.encode("utf-8"))


write_catalogue_modules()


def _table(module: str, name: str, alias: str | None = None) -> ObjectVar:
    """A lang -> key -> text table of the browser, imported from one generated module."""
    imports = {CATALOGUE_IMPORT + module: [ImportVar(tag=name, alias=alias)]}
    var: Var = Var(_js_expr=alias or name, _var_type=dict[str, dict[str, str]], _var_data=VarData(imports=imports))
    return var.to(ObjectVar, dict[str, dict[str, str]])


def t(key: str) -> rx.Var:
    """The text for `key` in the current language (resolved in the browser)."""
    area = AREA_OF.get(key)
    if area is None:
        raise KeyError(f"missing catalogue key: {key}")
    return t_var(Var.create(key), area)


# The language before the server has answered (SessionState.lang is "en" until then): this
# browser's last one (nb.lang, SessionState.stored_lang), else the browser's own. The installed
# app opens /home from the service worker's cache offline, where nothing else ever comes.
# Evaluated in the browser only where it renders nothing into the prerendered HTML (which has
# no window: "en"), so React's hydration never meets another text.
BROWSER_LANG_JS = (
    '(() => { try { const v = window.localStorage.getItem("nb.lang");'
    ' if (v === "ko" || v === "en") return v;'
    ' return /^ko\\b/i.test(window.navigator.language || "") ? "ko" : "en"; } catch (e) { return "en"; } })()'
)


def page_lang() -> rx.Var:
    """SessionState.lang once the page has its state, BROWSER_LANG_JS before."""
    from wallet_app.state.session import SessionState

    return rx.cond(SessionState.is_hydrated, SessionState.lang, Var(_js_expr=BROWSER_LANG_JS, _var_type=str))


def t_in(key: str, lang: rx.Var | str) -> rx.Var:
    """t(key) in the language `lang` (page_lang(), say) instead of SessionState.lang."""
    area = AREA_OF[key]
    table = _table(f"area_{area}.js", "TEXTS", f"TEXTS_{area}")
    return table[lang].to(ObjectVar, dict[str, str])[key]


def t_var(key: rx.Var, area: str | None = None) -> rx.Var:
    """Like t() for a key held in state (validated by the code that sets it); with `area`, the
    key is one of that area's and only its texts are loaded."""
    if area is None:
        return messages()[key]
    from wallet_app.state.session import SessionState

    table = _table(f"area_{area}.js", "TEXTS", f"TEXTS_{area}")
    return table[SessionState.lang].to(ObjectVar, dict[str, str])[key]


def messages() -> ObjectVar:
    """The whole current catalogue, for JS units that show their own texts."""
    from wallet_app.state.session import SessionState

    return _table("catalogues.js", "CATALOGUES")[SessionState.lang].to(ObjectVar, dict[str, str])


def error_messages() -> ObjectVar:
    """Error code -> text in the current language, for JS units that show error codes."""
    from wallet_app.state.session import SessionState

    return _table("error_texts.js", "ERROR_TEXTS")[SessionState.lang].to(ObjectVar, dict[str, str])
