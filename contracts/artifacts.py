"""Compiled contracts: contracts/build/<Name>.json ({abi, bytecode}) written by compile.mjs.

build/ is not committed: a clean checkout compiles on first use (`make build` and the server
start do it up front, see compile_contracts).
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path
from typing import cast

from eth_typing import ABIFunction
from eth_utils import function_abi_to_4byte_selector

REPO_ROOT = Path(__file__).resolve().parents[1]
BUILD_DIR = REPO_ROOT / "contracts" / "build"


def compile_contracts(force: bool = False) -> None:
    """Runs contracts/compile.mjs, which does nothing when the sources are unchanged."""
    cmd = ["node", str(REPO_ROOT / "contracts" / "compile.mjs")] + (["--force"] if force else [])
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"contract compilation failed:\n{result.stdout}{result.stderr}")


def artifact(name: str) -> dict:
    """A contract's {abi, bytecode}; compiles first when it is missing."""
    path = BUILD_DIR / f"{name}.json"
    if not path.exists():
        compile_contracts()
    return json.loads(path.read_text())


@cache
def abi(name: str) -> list[dict]:
    return artifact(name)["abi"]


@cache
def selector(contract: str, function: str) -> bytes:
    """The 4-byte selector of a (not overloaded) function of a compiled contract."""
    entry = next(e for e in abi(contract) if e.get("type") == "function" and e["name"] == function)
    return function_abi_to_4byte_selector(cast(ABIFunction, entry))
