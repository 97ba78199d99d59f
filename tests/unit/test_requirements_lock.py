"""requirements-lock.txt (what `make setup` installs, with --no-deps) pins every package that
requirements.txt and requirements-dev.txt pin, at the same version: an edit to those files that
the lock does not follow would otherwise be silently ignored by the install."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# name[extras]==version, an optional comment after it.
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s#;]+)")


def normalized(name: str) -> str:
    """PEP 503: case and runs of -, _ and . do not tell names apart."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    """The name -> version pins of a requirements file; ValueError on a line that pins nothing."""
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-r "):
            continue
        match = PIN.match(line)
        if not match:
            raise ValueError(f"{path.name}: not pinned with ==: {line!r}")
        found[normalized(match[1])] = match[3]
    return found


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("reflex==0.10.1", {"reflex": "0.10.1"}),
        ("psycopg[binary]==3.3.9", {"psycopg": "3.3.9"}),
        ("coincurve==21.0.0  # native secp256k1", {"coincurve": "21.0.0"}),
        ("Typing_Extensions==4.15.0", {"typing-extensions": "4.15.0"}),
        ("# a comment", {}),
        ("-r requirements.txt", {}),
    ],
)
def test_pins_reads_a_line(tmp_path, line, expected):
    file = tmp_path / "r.txt"
    file.write_text(line + "\n")
    assert pins(file) == expected


@pytest.mark.parametrize("line", ["reflex>=0.10", "reflex", "reflex==", "git+https://example.org/x.git"])
def test_pins_refuses_a_line_that_pins_nothing(tmp_path, line):
    file = tmp_path / "r.txt"
    file.write_text(line + "\n")
    with pytest.raises(ValueError, match="not pinned"):
        pins(file)


@pytest.mark.parametrize("source", ["requirements.txt", "requirements-dev.txt"])
def test_the_lock_has_every_pin_at_its_version(source):
    lock = pins(ROOT / "requirements-lock.txt")
    wanted = pins(ROOT / source)
    assert wanted, f"{source} pins nothing"
    differing = {name: (version, lock.get(name)) for name, version in wanted.items() if lock.get(name) != version}
    assert not differing, f"{source} against requirements-lock.txt (wanted, locked): {differing}"
