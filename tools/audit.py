"""make audit: known vulnerabilities in what ships, from the public advisory services.

- Python: pip-audit over requirements.txt (resolved with its dependencies), PyPI's advisory data.
- JavaScript: npm audit over the packages the browser receives: tools/package.json's runtime
  packages (bundled into assets/) and the Reflex frontend's dependencies (.web/package.json, once
  built). npm audit reads a lock file; the one written here lists exactly the installed tree of
  those packages (tools/package-lock.json also holds the build tools, and .web has only bun.lock).

Fails (exit 1) on any finding, on a package the service could not check, and when a service
cannot be reached: every network step has a timeout, so an offline machine fails within minutes.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# tools/package.json's packages that reach the browser (the others build or test: anvil, solc, ...).
TOOLS_SHIPPED = ["argon2-browser", "ethers", "jsqr", "qrcode", "swagger-ui-dist"]
NET_TIMEOUT_S = 20  # per request
STEP_TIMEOUT_S = 600  # per audit step (pip-audit resolves requirements.txt in a fresh virtualenv)


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"  FAILED: no answer within {STEP_TIMEOUT_S} s: {' '.join(cmd)}")
        return None


def pip_audit() -> bool:
    print("pip-audit: requirements.txt")
    cmd = [
        sys.executable,
        "-m",
        "pip_audit",
        "-r",
        "requirements.txt",
        "-f",
        "json",
        "--progress-spinner",
        "off",
        "--timeout",
        str(NET_TIMEOUT_S),
    ]
    proc = run(cmd, ROOT)
    if proc is None:
        return False
    try:
        deps = json.loads(proc.stdout)["dependencies"]
    except (ValueError, KeyError):
        print(f"  FAILED: pip-audit did not finish (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        return False
    vulns = [(d["name"], d["version"], v["id"], v.get("fix_versions")) for d in deps for v in d.get("vulns", [])]
    skipped = [d["skip_reason"] for d in deps if "skip_reason" in d]
    for name, version, vid, fixes in vulns:
        print(f"  {name} {version}: {vid} (fixed in {', '.join(fixes or []) or 'no release yet'})")
    if skipped:
        print(f"  {len(skipped)} of {len(deps)} packages could not be checked (advisory service unreachable?):")
        print("\n".join(f"    {s}" for s in skipped[:10]) + ("\n    ..." if len(skipped) > 10 else ""))
    print(f"  {len(deps)} packages, {len(vulns)} known vulnerabilities")
    return not vulns and not skipped


def installed_tree(root: Path, names: list[str]) -> dict[str, dict]:
    """package-lock v3 `packages` entries for `names` and their dependencies as installed under
    root/node_modules (Node's lookup: the nearest node_modules up from the dependent)."""
    entries: dict[str, dict] = {}
    todo = [("", name) for name in names]
    while todo:
        parent, name = todo.pop()
        base = parent
        while True:
            key = f"{base}/node_modules/{name}".lstrip("/")
            if (root / key / "package.json").exists():
                break
            if not base:
                raise SystemExit(f"{name} (needed by {parent or 'the root'}) is not installed under {root}")
            base = base.rsplit("/node_modules/", 1)[0] if "/node_modules/" in base else ""
        if key in entries:
            continue
        meta = json.loads((root / key / "package.json").read_text())
        deps = meta.get("dependencies", {})
        entries[key] = {"version": meta["version"], "dependencies": deps} if deps else {"version": meta["version"]}
        todo += [(key, dep) for dep in deps]
    return entries


def npm_audit(label: str, root: Path, names: list[str]) -> bool:
    print(f"npm audit: {label}")
    tree = installed_tree(root, names)
    deps = {name: tree[f"node_modules/{name}"]["version"] for name in names}
    lock = {
        "name": "audit",
        "lockfileVersion": 3,
        "requires": True,
        "packages": {"": {"name": "audit", "dependencies": deps}, **tree},
    }
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "package.json").write_text(json.dumps({"name": "audit", "private": True, "dependencies": deps}))
        (Path(tmp) / "package-lock.json").write_text(json.dumps(lock))
        proc = run(
            [
                "npm",
                "audit",
                "--json",
                "--package-lock-only",
                "--fetch-retries=0",
                f"--fetch-timeout={NET_TIMEOUT_S * 1000}",
            ],
            Path(tmp),
        )
    if proc is None:
        return False
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {}
    if "error" in report or "metadata" not in report:
        said = [line for line in proc.stderr.splitlines() if "audit" in line]
        print(
            f"  FAILED: npm audit could not reach the advisory service (exit {proc.returncode}), {len(tree)} "
            f"packages unchecked:\n" + "\n".join(f"    {line}" for line in said)
        )
        return False
    for name, v in report.get("vulnerabilities", {}).items():
        print(f"  {name}: {v['severity']} ({v['range']})")
    counts = report["metadata"]["vulnerabilities"]
    print(f"  {len(tree)} packages, {counts['total']} known vulnerabilities")
    return counts["total"] == 0


def main() -> int:
    results = [pip_audit(), npm_audit("tools (shipped packages)", ROOT / "tools", TOOLS_SHIPPED)]
    web = ROOT / ".web"
    if (web / "node_modules").is_dir():
        web_deps = list(json.loads((web / "package.json").read_text())["dependencies"])
        results.append(npm_audit("Reflex frontend (.web)", web, web_deps))
    else:
        print("npm audit: Reflex frontend skipped (.web not built: make build)")
    print("audit: " + ("clean" if all(results) else "FAILED"))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
