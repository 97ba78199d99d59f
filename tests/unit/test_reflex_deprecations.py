"""Building every page prints no Reflex deprecation (e.g. form controls submitted by their id,
removed in Reflex 0.11). In a fresh interpreter: Reflex logs each deprecation once per process."""

import json
import subprocess
import sys

from wallet_app.core.config import REPO_ROOT

BUILD_PAGES = """
import json, logging, warnings
seen = []
class Record(logging.Handler):
    def emit(self, record):
        seen.append(record.getMessage())
logging.getLogger("reflex.deprecation").addHandler(Record())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from wallet_app.pages import not_found, registered_pages
    views = [p.view for p in registered_pages()] + [not_found.not_found_page]
    for view in views:
        view()
seen += [f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, DeprecationWarning)]
print(json.dumps({"pages": len(views), "deprecations": seen}))
"""


def test_pages_build_without_deprecations(settings_env):
    proc = subprocess.run([sys.executable, "-c", BUILD_PAGES], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["pages"] > 5 and result["deprecations"] == []
