"""page.evaluate helpers shared by the browser tests."""

from __future__ import annotations

from pyhelpers import SMALL

ABANDON = " ".join(["abandon"] * 11 + ["about"])
PIN = "123456"

# Runs `body` (an async function body using `a` = the argument) through nb.settle.
SETTLE = "async (a) => nb.settle(async () => { %s })"


def run(page, body: str, arg=None) -> dict:
    return page.evaluate(SETTLE % body, arg)


def ok(page, body: str, arg=None):
    r = run(page, body, arg)
    assert r["ok"], r
    return r["value"]


def fails(page, body: str, arg=None) -> dict:
    r = run(page, body, arg)
    assert not r["ok"], r
    return r


def new_wallet(page, words=ABANDON, pin=PIN, params=SMALL, save=True) -> dict:
    """wrapNew in the page (small KDF params); saved under its owner unless save=False."""
    return ok(page, """
        const w = await nb.vault.wrapNew(a.pin, {words: a.words, params: a.params});
        if (a.save) nb.vault.saveMaterials(w.address, w.materials);
        return w;""", {"words": words, "pin": pin, "params": params, "save": save})
