"""ko/en catalogues and the lookup pages use. Both catalogues ship to the browser, so a
language switch re-renders at once without a round trip."""

import reflex as rx

from wallet_app.errors import error_texts
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


def t(key: str) -> rx.Var:
    """The text for `key` in the current language (resolved in the browser)."""
    if key not in CATALOGUES["en"]:
        raise KeyError(f"missing catalogue key: {key}")
    from wallet_app.state.session import SessionState

    return rx.Var.create(CATALOGUES)[SessionState.lang][key]


def t_var(key: rx.Var) -> rx.Var:
    """Like t() for a key held in state (validated by the code that sets it)."""
    from wallet_app.state.session import SessionState

    return rx.Var.create(CATALOGUES)[SessionState.lang][key]


def messages() -> rx.Var:
    """The whole current catalogue, for JS units that show their own texts."""
    from wallet_app.state.session import SessionState

    return rx.Var.create(CATALOGUES)[SessionState.lang]


def error_messages() -> rx.Var:
    """Error code -> text in the current language, for JS units that show error codes."""
    from wallet_app.state.session import SessionState

    return rx.Var.create(ERROR_TEXTS)[SessionState.lang]
