"""One web worker's share of test_dev_drive.test_two_worker_processes_updating_one_file_lose_nothing:
its own app (the API with the dev stand-ins, as wallet_app.py builds it) updating one Drive
stand-in file N times, starting when <sync_dir>/go appears (after it wrote <sync_dir>/ready-<name>),
so that both processes' updates overlap. Settings come from the environment (the test's)."""

import sys
import time
import warnings
from pathlib import Path

from tests.api.conftest import ORIGIN, make_api
from tests.api.test_dev_drive import UPLOAD, access_token, auth

with warnings.catch_warnings():  # Starlette asks for `httpx2`; the pinned httpx works
    warnings.simplefilter("ignore", UserWarning)
    from starlette.testclient import TestClient


def main(email: str, file_id: str, name: str, updates: int, sync_dir: Path) -> None:
    with TestClient(make_api(), base_url=ORIGIN) as client:
        token = access_token(client, email)
        (sync_dir / f"ready-{name}").touch()
        deadline = time.monotonic() + 60
        while not (sync_dir / "go").exists():
            assert time.monotonic() < deadline, "no go"
            time.sleep(0.01)  # poll interval
        for i in range(updates):
            resp = client.patch(f"{UPLOAD}/{file_id}", params={"uploadType": "media"},
                                content=f"{name} update {i}".encode(),
                                headers={"Content-Type": "application/octet-stream", **auth(token)})
            assert resp.status_code == 200, resp.text


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5]))
