"""Drive backup and restore in real Chromium against the real app served by uvicorn.

The test site (wallet_js bundle + KDF worker) and the API (with /dev-idp and /dev-drive)
share one origin on a free loopback port, so the browser takes a Drive token through the
real gsi/client popup flow and talks to the Drive stand-in over HTTP. Python checks what
the stand-in holds with its own token and decrypts the file with argon2-cffi and
cryptography only (pyhelpers), never with the app's code.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from tests.e2e.drive_api import DriveApi, backup_name
from tests.e2e.helpers import close_context, free_port, serve_asgi_in_thread
from wallet_app import dev
from wallet_app.api import build_api
from wallet_app.core.config import get_settings
from wallet_app.dev import idp

import browser_harness
from jshelpers import ABANDON, PIN
from pyhelpers import SMALL, address, decrypt_backup, encrypt_backup, unwrap, wrap

ALICE = "alice@example.com"
LEGAL = "legal winner thank year wave sausage worth useful legal winner thank yellow"
API_PATHS = ("/api/", "/dev-idp", "/dev-drive")


@pytest.fixture(scope="session")
def drive_site(tmp_path_factory) -> Path:
    """The test site of browser_harness, with a bundle that also exposes nb.drive and nb.backup."""
    root = browser_harness.prepare_site(tmp_path_factory.mktemp("drive_site"))
    browser_harness.build_bundle(root / "bundle.js", entry=browser_harness.REPO / "tests" / "js" / "entry_drive.js")
    return root


def site_and_api(root: Path, api):
    """One origin: /api, /dev-idp, /dev-drive go to the app, the rest is the test site; every
    response gets the strict CSP the harness uses (the KDF worker its wasm variant)."""
    static = Starlette(routes=[Mount("/", StaticFiles(directory=str(root)))])  # 404s as responses

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return await api(scope, receive, send)
        path = scope["path"]
        csp = browser_harness.WORKER_CSP if path.endswith("kdf-worker.js") else browser_harness.PAGE_CSP

        async def send_csp(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"content-security-policy", csp.encode())]
            await send(message)

        target = api if path.startswith(API_PATHS) else static
        await target(scope, receive, send_csp)

    return app


@pytest.fixture
def server(db, drive_site, tmp_path, monkeypatch):
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("PUBLIC_BASE_URL", origin)
    monkeypatch.setenv("DEV_DRIVE_DIR", str(tmp_path / "dev-drive"))
    get_settings.cache_clear()
    api = build_api()
    dev.install(api)  # /dev-idp and /dev-drive, as wallet_app.py does in development
    with serve_asgi_in_thread(site_and_api(drive_site, api), port, lifespan="off"):
        yield origin


class Device:
    """A browser profile (fresh context = a new device) on the app's origin."""

    def __init__(self, browser, origin: str):
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.requests: list = []
        self.page.on("request", lambda req: self.requests.append(req))
        self.page.goto(origin + "/index.html")
        self.page.wait_for_function("() => window.nb !== undefined && window.nb.drive !== undefined")
        self.page.evaluate(
            "() => { window.driveClient = () => nb.drive.createDriveClient(location.origin + '/dev-drive'); }"
        )

    def run(self, body: str, arg=None) -> dict:
        return self.page.evaluate(f"async (a) => nb.settle(async () => {{ {body} }})", arg)

    def ok(self, body: str, arg=None):
        r = self.run(body, arg)
        assert r["ok"], r
        return r["value"]

    def fails(self, body: str, arg=None) -> dict:
        r = self.run(body, arg)
        assert not r["ok"], r
        return r

    def drive_token(self, email: str | None = ALICE) -> dict:
        """getDriveToken from a click (a user gesture), through the gsi/client popup.
        The token stays in window.__tok; returns {ok} or {ok: false, code, reason}."""
        self.ok("await nb.drive.loadGis('/dev-idp/gsi/client');")
        self.page.evaluate(
            """([clientId, hint]) => {
              window.__tok = undefined;
              const b = document.createElement('button');
              b.id = 'drive-token';
              b.textContent = 'Drive';
              b.onclick = () => nb.drive.getDriveToken({clientId, interactive: true, hint: hint || undefined}).then(
                (t) => { window.__tok = t; window.__tokResult = {ok: true}; },
                (e) => { window.__tokResult = {ok: false, code: e.code, message: e.message, reason: e.reason}; });
              document.body.replaceChildren(b);
              window.__tokResult = undefined;
            }""",
            [idp.DEV_CLIENT_ID, email],
        )
        with self.page.expect_popup() as info:
            self.page.click("#drive-token")
        self.popup = info.value
        if email is not None:
            self.page.wait_for_function("() => window.__tokResult !== undefined", timeout=15_000)
            return self.page.evaluate("() => window.__tokResult")
        return {}

    def storage(self) -> dict:
        return self.page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")

    def close(self) -> None:
        close_context(self.context)


@pytest.fixture
def devices(browser, server):
    opened: list[Device] = []

    def _open() -> Device:
        d = Device(browser, server)
        opened.append(d)
        return d

    yield _open
    for d in opened:
        d.close()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


NEW_WALLET = """const w = await nb.vault.wrapNew(a.pin, {words: a.words, params: a.params});
  nb.vault.saveMaterials(w.address, w.materials); return w;"""
BACKUP = """return nb.backup.runBackup({owner: a.owner, pin: a.pin, token: window.__tok,
  drive: driveClient(), params: a.params});"""
RESTORE = """return nb.backup.runRestore({owner: a.owner, pin: a.pin, token: window.__tok, drive: driveClient(),
  params: a.params});"""


def new_wallet(dev: Device, words: str = ABANDON) -> dict:
    return dev.ok(NEW_WALLET, {"pin": PIN, "words": words, "params": SMALL})


def backup(dev: Device, owner: str, pin: str = PIN) -> dict:
    return dev.ok(BACKUP, {"owner": owner, "pin": pin, "params": SMALL})


def restore(dev: Device, owner: str, pin: str = PIN) -> dict:
    return dev.run(RESTORE, {"owner": owner, "pin": pin, "params": SMALL})


def backed_up_wallet(devices, server) -> tuple[Device, dict, dict, DriveApi]:
    dev = devices()
    assert dev.drive_token() == {"ok": True}
    w = new_wallet(dev)
    r = backup(dev, w["address"])
    return dev, w, r, DriveApi(server, ALICE)


# ------------------------------------------------------------------------------------------


def test_backup_update_and_restore_on_new_device(devices, server):
    a = devices()
    assert a.drive_token() == {"ok": True}
    w = new_wallet(a)
    owner = w["address"]
    r1 = backup(a, owner)
    drive = DriveApi(server, ALICE)

    # The stand-in holds exactly one backup file with these bytes, plus the verified staging copy.
    [f1] = drive.files(backup_name(owner))
    assert f1["id"] == r1["id"] and sha(drive.download(f1["id"])) == r1["sha256"]
    assert f1["modifiedTime"] == r1["updatedAt"]
    [staging] = drive.files(backup_name(owner) + ".tmp")
    assert sha(drive.download(staging["id"])) == r1["sha256"]
    assert json.loads(a.storage()[f"{owner.lower()}:driveMeta"]) == r1

    # A second backup updates the same file (new salt and iv: new bytes).
    r2 = backup(a, owner)
    assert r2["id"] == r1["id"] and r2["sha256"] != r1["sha256"]
    [f2] = drive.files(backup_name(owner))
    assert sha(drive.download(f2["id"])) == r2["sha256"]
    assert len(drive.files(backup_name(owner) + ".tmp")) == 1

    # touch after the upload: /me follows.
    nonce = a.ok("""
        const r = await fetch('/api/v1/auth/login-attempt', {method: 'POST', credentials: 'include'});
        return (await r.json()).nonce;""")
    me = a.ok("""
        const post = (p, body) => fetch(p, {method: 'POST', credentials: 'include',
          headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
        await post('/api/v1/auth/google', {id_token: a.idt, locale: 'en'});
        await post('/api/v1/me/address', {address: a.owner});
        const touched = await nb.backup.touchBackup('');
        const me = await (await fetch('/api/v1/me')).json();
        const info = await (await fetch('/api/v1/backup/info')).json();
        return {touched, me, info};""", {"idt": idp.issue_id_token(ALICE, nonce=nonce), "owner": owner})
    assert me["touched"] is True and me["me"]["hasBackup"] is True
    assert abs(me["info"]["last_backup_at"] - time.time()) < 60

    # A new device (fresh profile): wrong PIN first, nothing written; then the right one.
    b = devices()
    assert b.drive_token() == {"ok": True}
    bad = restore(b, owner, "000000")
    assert (bad["code"], bad["message"]) == ("INVALID_PIN", "Invalid PIN")
    assert b.storage() == {}
    good = restore(b, owner)
    assert good["ok"], good
    assert good["value"] == {"address": owner, "id": r1["id"], "sha256": r2["sha256"]}
    assert b.ok("return nb.vault.loadMaterials(a);", owner) == w["materials"]
    assert b.ok("return nb.vault.unwrapMnemonic('123456', nb.vault.loadMaterials(a));", owner) == ABANDON
    assert b.ok("return nb.vault.loadDriveMeta(a).id;", owner) == r1["id"]

    # The Drive token went only to /dev-drive (as it would only go to googleapis.com);
    # no request to our API carried it or the PIN.
    for device in (a, b):
        token = device.page.evaluate("() => window.__tok")
        for req in device.requests:
            text = req.url + json.dumps(req.headers) + (req.post_data or "")
            if req.url.startswith(server + "/dev-drive/"):
                assert req.headers.get("authorization") == f"Bearer {token}"
                assert "cookie" not in req.headers  # credentials: 'omit'
            else:
                assert token not in text, req.url
                # (a random ID token could contain the digits by chance)
                if not req.url.endswith("/api/v1/auth/google"):
                    assert PIN not in text, req.url


SIGNED_IN_WITH_ADDRESS = """
    const post = (p, body) => fetch(p, {method: 'POST', credentials: 'include',
      headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
    await post('/api/v1/auth/google', {id_token: a.idt, locale: 'en'});
    await post('/api/v1/me/address', {address: a.owner});"""


def test_touch_is_tried_again_when_lost_and_names_the_wallet(devices, server):
    """A touch whose answer is lost or a server error is tried again (3 attempts in all): a server
    that never hears of a backup sends a new device to onboarding. A refusal is not tried again."""
    a = devices()
    owner = "0x" + "ab" * 20
    nonce = a.ok("""
        const r = await fetch('/api/v1/auth/login-attempt', {method: 'POST', credentials: 'include'});
        return (await r.json()).nonce;""")
    a.ok(SIGNED_IN_WITH_ADDRESS, {"idt": idp.issue_id_token(ALICE, nonce=nonce), "owner": owner})
    sent: list[str] = []
    plan: list[str] = []

    def touch(route):
        sent.append(route.request.post_data)
        step = plan.pop(0) if plan else "pass"
        if step == "lost":
            route.abort()
        elif step == "busy":
            route.fulfill(status=503, body='{"detail": "database_unavailable"}')
        else:
            route.continue_()

    a.page.route("**/api/v1/backup/touch", touch)
    touch_js = "return await nb.backup.touchBackup('', a, 10);"
    for steps, owner_sent, touched, attempts in [
        (["lost", "busy"], owner, True, 3),
        (["lost", "lost", "busy"], owner, False, 3),
        ([], "0x" + "cd" * 20, False, 1),  # another wallet: 409 backup_not_current, not tried again
    ]:
        sent.clear()
        plan[:] = steps
        assert a.ok(touch_js, owner_sent) is touched, steps
        assert sent == [json.dumps({"address": owner_sent}, separators=(",", ":"))] * attempts, steps
    assert a.ok("return (await (await fetch('/api/v1/me')).json()).hasBackup;") is True


def test_python_decrypts_the_drive_file(devices, server):
    """Cross-implementation: argon2-cffi + cryptography + eth-account recover the wallet."""
    _, w, r, drive = backed_up_wallet(devices, server)
    owner = w["address"]
    data = drive.download(r["id"])
    assert sha(data) == r["sha256"]
    header_line, _, _ = data.partition(b"\n")
    header = json.loads(header_line)
    assert header["v"] == 1 and header["alg"] == "AES-GCM" and header["owner"] == owner.lower()
    assert header["kdf"]["kind"] == "Argon2id" and len(base64.b64decode(header["kdf"]["salt_rec"])) == 16
    bundle = decrypt_backup(PIN, data)
    assert bundle["version"] == 1
    words = unwrap(PIN, bundle)
    assert words == ABANDON and address(words) == owner


def test_tampered_file_fails_and_leaves_local_state(devices, server):
    a, w, r, drive = backed_up_wallet(devices, server)
    owner = w["address"]
    good = drive.download(r["id"])
    nl = good.index(b"\n")
    body_flip = bytearray(good)
    body_flip[nl + 1 + 5] ^= 0x01
    drive.replace(r["id"], bytes(body_flip))

    # The device that holds the wallet: the failed restore changes nothing.
    before = a.storage()
    res = restore(a, owner)
    # AES-GCM cannot tell a changed body from a wrong PIN: the tag fails either way.
    assert (res["code"], res["message"]) == ("INVALID_PIN", "Invalid PIN")
    assert a.storage() == before

    # A new device stays empty.
    b = devices()
    assert b.drive_token() == {"ok": True}
    assert restore(b, owner)["code"] == "INVALID_PIN"
    assert b.storage() == {}

    # A broken header line is named as such.
    header_flip = bytearray(good)
    header_flip[0] ^= 0x01  # '{' -> 'z'
    drive.replace(r["id"], bytes(header_flip))
    res = restore(b, owner)
    assert (res["code"], res["message"]) == ("INVALID_HEADER", "Invalid backup header")
    assert b.storage() == {}


def test_owner_mismatch_and_address_mismatch(devices, server):
    a, w, r, drive = backed_up_wallet(devices, server)
    owner = w["address"]
    other = address(LEGAL)
    other_bundle = {"version": 1, **wrap(PIN, LEGAL, SMALL)}
    before = a.storage()

    # Someone else's backup under this owner's file name.
    drive.replace(r["id"], encrypt_backup(PIN, other, other_bundle, SMALL))
    res = restore(a, owner)
    assert (res["code"], res["message"]) == ("OWNER_MISMATCH", "Backup owner mismatch")
    assert a.storage() == before

    # Header claims this owner but the bundle derives another address.
    drive.replace(r["id"], encrypt_backup(PIN, owner, other_bundle, SMALL))
    res = restore(a, owner)
    assert (res["code"], res["message"]) == (
        "ADDRESS_MISMATCH", "Address derived from mnemonic does not match the active owner")
    assert a.storage() == before

    # Bundle version 2.
    drive.replace(r["id"], encrypt_backup(PIN, owner, {**other_bundle, "version": 2}, SMALL))
    res = restore(a, owner)
    assert (res["code"], res["message"]) == ("UNSUPPORTED_VERSION", "Unsupported bundle version")
    assert a.storage() == before


def test_no_backup_file(devices, server):
    dev = devices()
    assert dev.drive_token("nobody@example.com") == {"ok": True}
    res = restore(dev, address(LEGAL))
    assert (res["code"], res["message"]) == (
        "NO_BACKUP", "No backup file for this address in Google Drive (appDataFolder)")
    assert dev.storage() == {}
    # Backup preconditions.
    res = dev.fails(BACKUP, {"owner": "", "pin": PIN, "params": SMALL})
    assert (res["code"], res["message"]) == ("EXPORT_NO_OWNER", "No active owner address")
    res = dev.fails(BACKUP, {"owner": address(LEGAL), "pin": PIN, "params": SMALL})
    assert (res["code"], res["message"]) == ("MATERIALS_MISSING", "Local materials missing for bundle")
    new_wallet(dev, LEGAL)
    res = dev.fails(BACKUP, {"owner": address(LEGAL), "pin": "654321", "params": SMALL})
    assert res["code"] == "INVALID_PIN"
    assert DriveApi(server, "nobody@example.com").files(backup_name(address(LEGAL))) == []


# Drive clients that fail in one place, wrapped around the real one (chosen by name).
WRAPPERS = """
  const real = driveClient();
  let written = false;
  const flip = (b) => { const c = b.slice(); c[c.length - 1] ^= 1; return c; };
  const recipes = {
    corruptAll: {...real, downloadFile: async (t, id) => flip(await real.downloadFile(t, id))},
    // Drive keeps bad bytes once the real file is written: its reads come back wrong.
    corruptReal: {...real,
      uploadFile: async (t, name, bytes, id) => {
        if (id === a.realId) written = true;
        return real.uploadFile(t, name, bytes, id);
      },
      downloadFile: async (t, id) =>
        (written && id === a.realId ? flip(await real.downloadFile(t, id)) : real.downloadFile(t, id))},
    failRealUpload: {...real, uploadFile: async (t, name, bytes, id) => {
      if (name.endsWith('.bin')) throw new nb.drive.DriveError('DRIVE_UPLOAD_FAILED', 503);
      return real.uploadFile(t, name, bytes, id); }},
  };
  return nb.backup.runBackup({owner: a.owner, pin: '123456', token: window.__tok,
    drive: recipes[a.recipe], params: a.params});
"""


@pytest.mark.parametrize("recipe,code", [
    ("corruptAll", "BACKUP_VERIFY_FAILED"),  # the staging copy does not read back: real file untouched
    ("failRealUpload", "DRIVE_UPLOAD_FAILED"),  # the real update fails: Drive keeps the old content
    ("corruptReal", "BACKUP_VERIFY_FAILED"),  # the real file reads back wrong: previous bytes restored
])
def test_failed_backup_keeps_the_previous_one(devices, server, recipe, code):
    a, w, r, drive = backed_up_wallet(devices, server)
    owner = w["address"]
    meta_before = a.storage()[f"{owner.lower()}:driveMeta"]
    res = a.run(WRAPPERS, {"owner": owner, "recipe": recipe, "realId": r["id"], "params": SMALL})
    assert not res["ok"] and res["code"] == code, res
    [f] = drive.files(backup_name(owner))
    assert f["id"] == r["id"] and sha(drive.download(f["id"])) == r["sha256"]
    assert a.storage()[f"{owner.lower()}:driveMeta"] == meta_before
    # The previous backup still restores.
    b = devices()
    assert b.drive_token() == {"ok": True}
    assert restore(b, owner)["ok"]


def test_drive_client_and_gis_errors(devices, server):
    dev = devices()
    res = dev.fails("return nb.drive.getDriveToken({clientId: 'x'});")
    assert (res["code"], res["message"]) == ("GIS_LOAD_FAILED", "Failed to load Google Identity Services")
    res = dev.fails("return nb.drive.loadGis('/no-such-script.js');")
    assert (res["code"], res["message"]) == ("GIS_LOAD_FAILED", "Failed to load Google Identity Services")
    # A load of another URL while one is in flight is its own: the failing one does not fail it.
    got = dev.ok(
        """const failing = nb.drive.loadGis('/no-such-script.js').then(() => 'loaded', (e) => e.code);
           const other = nb.drive.loadGis('/dev-idp/gsi/client').then(() => 'loaded', (e) => e.code);
           return [await failing, await other];"""
    )
    assert got == ["GIS_LOAD_FAILED", "loaded"]

    # No account in this profile yet: the popup asks for an e-mail; closing it -> no token.
    dev.drive_token(email=None)
    dev.popup.wait_for_selector("input[type=email]")
    dev.popup.close()
    dev.page.wait_for_function("() => window.__tokResult !== undefined")
    got = dev.page.evaluate("() => window.__tokResult")
    assert got == {"ok": False, "code": "NO_ACCESS_TOKEN", "message": "No access_token for Drive",
                   "reason": "popup_closed"}

    assert dev.drive_token() == {"ok": True}
    bad = "const d = driveClient();"
    res = dev.fails(bad + "return d.findFile('bad-token', 'x.bin');")
    assert res["message"] == "Drive list failed: 401"
    res = dev.fails(bad + "return d.uploadFile('bad-token', 'x.bin', new Uint8Array([1]));")
    assert res["message"] == "Drive upload failed: 401"
    res = dev.fails(bad + "return d.downloadFile(window.__tok, 'devNoSuchFile000000000000');")
    assert (res["code"], res["message"]) == ("DRIVE_DOWNLOAD_FAILED", "Drive download failed: 404")
    res = dev.fails(bad + "return d.findFile('', 'x.bin');")
    assert res["code"] == "NO_ACCESS_TOKEN"
    # The token's account, from Drive's about.user: the signed-in one (any case) or refused.
    dev.ok(bad + "return d.checkAccount(window.__tok, 'ALICE@example.com');")
    res = dev.fails(bad + "return d.checkAccount(window.__tok, 'bob@example.com');")
    assert (res["code"], res["message"]) == ("DRIVE_OTHER_ACCOUNT",
                                             "The Drive token is for another Google account than the signed-in one")
    assert dev.fails(bad + "return d.checkAccount(window.__tok, '');")["code"] == "DRIVE_OTHER_ACCOUNT"
    res = dev.fails(bad + "return d.checkAccount('bad-token', 'alice@example.com');")
    assert (res["code"], res["message"]) == ("DRIVE_ACCOUNT_FAILED", "Drive account check failed: 401")
    # Unreachable root (refused by the page's CSP, like a network error): status 0.
    res = dev.fails("return nb.drive.createDriveClient('http://127.0.0.1:9').findFile(window.__tok, 'x');")
    assert res["message"] == "Drive list failed: 0"
    # Names with quotes and backslashes round-trip through q.
    got = dev.ok(bad + """const name = "it's a \\\\ test.bin";
        const up = await d.uploadFile(window.__tok, name, new Uint8Array([7, 13, 10, 0]));
        const found = await d.findFile(window.__tok, name);
        const back = await d.downloadFile(window.__tok, found.id);
        return [up.id === found.id, found.name === name, Array.from(back), found.size];""")
    assert got == [True, True, [7, 13, 10, 0], "4"]
