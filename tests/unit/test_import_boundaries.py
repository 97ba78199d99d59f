"""Production code never imports the development stand-ins (wallet_app.dev) nor the dev
deployment script (contracts.deploy): they reach production only through dev.install()."""

import ast
from pathlib import Path

import pytest

from wallet_app.core.config import REPO_ROOT

PRODUCTION = ("services", "state", "pages", "api", "components")
FORBIDDEN = ("wallet_app.dev", "contracts.deploy")


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import, `from X import y` also as X.y (catches `from wallet_app import dev`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _forbidden(module: str) -> bool:
    return any(module == f or module.startswith(f + ".") for f in FORBIDDEN)


def test_the_check_sees_every_form_of_import():
    source = "import wallet_app.dev.idp\nfrom wallet_app import dev\nfrom contracts.deploy import fund\nimport os\n"
    assert sorted({line for line, m in _imports(ast.parse(source)) if _forbidden(m)}) == [1, 2, 3]


@pytest.mark.parametrize("package", PRODUCTION)
def test_production_code_does_not_import_dev(package):
    files = sorted((REPO_ROOT / "wallet_app" / package).rglob("*.py"))
    assert files, package
    bad = [f"{path.relative_to(REPO_ROOT)}:{line} imports {module}"
           for path in files for line, module in _imports(ast.parse(Path(path).read_text(), str(path)))
           if _forbidden(module)]
    assert bad == []
