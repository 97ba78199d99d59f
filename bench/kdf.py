"""Argon2id with the spec parameters: the app's worker in headless Chromium vs argon2-cffi.

Each round runs native, fresh-worker browser hash, native, warm-worker browser
hash, native; every browser time is divided by the mean of the native runs just
before and after it (paired, so machine load drifts cancel out). Fresh = a new
worker per hash as the app does it (worker start + wasm load + hash); warm = a
second hash in a worker kept alive (KdfWorker). Prints medians and ratios;
targets: fresh <= 1.7x, warm <= 1.5x, outputs equal to argon2-cffi (exit 1 otherwise).
--shipped serves argon2-browser's wasm as published instead of the build's
inlined copy (custom_components/wallet_js/vendor.py), for comparison.

    .venv/bin/python bench/kdf.py [--pairs 5] [--shipped]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "js"))

from argon2.low_level import Type, hash_secret_raw  # noqa: E402

from custom_components.wallet_js.vendor import ARGON2_FILES, ARGON2_PACKAGE  # noqa: E402

import browser_harness  # noqa: E402

SPEC = {"t": 3, "m": 262144, "p": 1}
TARGET_FRESH = 1.7
TARGET_WARM = 1.5

FRESH_JS = """async (a) => {
  const pw = nb.unhex(a.pw), salt = nb.unhex(a.salt);
  const t0 = performance.now();
  const h = await nb.withTimeout(nb.kdf.argon2id(pw, salt, a.params), 120000);
  return {ms: performance.now() - t0, hex: nb.hex(h)};
}"""

# The first hash loads the wasm and grows memory; only the second one is timed.
WARM_JS = """async (a) => {
  const w = new nb.kdf.KdfWorker();
  try {
    await nb.withTimeout(w.hash(nb.unhex(a.pw), nb.unhex(a.warmup_salt), a.params), 120000);
    const pw = nb.unhex(a.pw), salt = nb.unhex(a.salt);
    const t0 = performance.now();
    const h = await nb.withTimeout(w.hash(pw, salt, a.params), 120000);
    return {ms: performance.now() - t0, hex: nb.hex(h)};
  } finally { w.close(); }
}"""


def native(pw: bytes, salt: bytes) -> tuple[float, str]:
    t0 = time.perf_counter()
    h = hash_secret_raw(pw, salt, time_cost=SPEC["t"], memory_cost=SPEC["m"],
                        parallelism=SPEC["p"], hash_len=32, type=Type.ID)
    return time.perf_counter() - t0, h.hex()


def job() -> dict:
    return {"pw": os.urandom(3).hex().encode().hex(), "salt": os.urandom(16).hex(),
            "warmup_salt": os.urandom(16).hex(), "params": SPEC}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--shipped", action="store_true", help="argon2-browser's wasm as published")
    args = ap.parse_args()

    fresh_r, warm_r, fresh_s, warm_s, nat_s = [], [], [], [], []
    mismatches = checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = browser_harness.prepare_site(Path(tmp))
        if args.shipped:
            for rel in ARGON2_FILES:
                if rel.endswith(".wasm"):
                    shutil.copyfile(ARGON2_PACKAGE / rel, root / "argon2" / rel)
        with browser_harness.serve(root) as url, browser_harness.chromium() as browser:
            _, page = browser_harness.open_page(browser, url)

            def browser_hash(js: str, j: dict) -> tuple[float, str]:
                r = page.evaluate(js, j)
                return r["ms"] / 1000, r["hex"]

            # One untimed round: page JIT, file caches, native allocator.
            j = job()
            native(bytes.fromhex(j["pw"]), bytes.fromhex(j["salt"]))
            browser_hash(FRESH_JS, j)

            for i in range(args.pairs):
                jf, jw = job(), job()
                n0, hf = native(bytes.fromhex(jf["pw"]), bytes.fromhex(jf["salt"]))
                f, bf = browser_hash(FRESH_JS, jf)
                n1, hw = native(bytes.fromhex(jw["pw"]), bytes.fromhex(jw["salt"]))
                w, bw = browser_hash(WARM_JS, jw)
                n2, _ = native(bytes.fromhex(jw["pw"]), bytes.fromhex(jw["salt"]))
                checks += 2
                mismatches += (hf != bf) + (hw != bw)
                fresh_r.append(f / ((n0 + n1) / 2))
                warm_r.append(w / ((n1 + n2) / 2))
                fresh_s.append(f)
                warm_s.append(w)
                nat_s.extend([n0, n1, n2])
                print(f"round {i + 1}: native {n0:.3f}/{n1:.3f}/{n2:.3f} s  "
                      f"fresh {f:.3f} s ({fresh_r[-1]:.2f}x)  warm {w:.3f} s ({warm_r[-1]:.2f}x)")

    fr, wr = statistics.median(fresh_r), statistics.median(warm_r)
    fresh_ok, warm_ok = fr <= TARGET_FRESH, wr <= TARGET_WARM
    wasm = "as published" if args.shipped else "small functions inlined"
    print(f"argon2id t={SPEC['t']} m={SPEC['m']} KiB p={SPEC['p']}, {args.pairs} rounds, wasm {wasm}")
    print(f"native argon2-cffi   median {statistics.median(nat_s):.3f} s")
    print(f"browser fresh worker median {statistics.median(fresh_s):.3f} s  "
          f"ratio {fr:.2f}x (target <= {TARGET_FRESH}) {'ok' if fresh_ok else 'MISSED'}")
    print(f"browser warm worker  median {statistics.median(warm_s):.3f} s  "
          f"ratio {wr:.2f}x (target <= {TARGET_WARM}) {'ok' if warm_ok else 'MISSED'}")
    print(f"outputs equal argon2-cffi: {checks - mismatches}/{checks}")
    print(f"kdf: fresh {fr:.2f}x warm {wr:.2f}x")
    return 0 if fresh_ok and warm_ok and not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
