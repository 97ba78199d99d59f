"""/api/v1/docs: Swagger UI from our own origin, so it works offline and under the CSP.

FastAPI's default page loads Swagger UI from a CDN (blocked by script-src 'self') and starts it
with an inline script (no hash for it). Here the page, its start script (docs_assets/, ours) and
swagger-ui-dist's bundle and stylesheet (tools/node_modules, from npm; never committed) are all
served by this router.
"""

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse

from wallet_app.api.deps import API_PREFIX
from wallet_app.core.config import REPO_ROOT

PREFIX = API_PREFIX + "/docs"
SWAGGER_DIST = REPO_ROOT / "tools" / "node_modules" / "swagger-ui-dist"
OWN_ASSETS = Path(__file__).resolve().parent / "docs_assets"
# name served -> file: only these (no path from the request reaches the file system).
FILES = {
    "swagger-ui.css": SWAGGER_DIST / "swagger-ui.css",
    "swagger-ui-bundle.js": SWAGGER_DIST / "swagger-ui-bundle.js",
    "favicon-32x32.png": SWAGGER_DIST / "favicon-32x32.png",
    "swagger-init.js": OWN_ASSETS / "swagger-init.js",
}
PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Newbl Wallet API</title>
<link rel="stylesheet" href="{PREFIX}/swagger-ui.css">
<link rel="icon" type="image/png" href="{PREFIX}/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="{PREFIX}/swagger-ui-bundle.js"></script>
<script src="{PREFIX}/swagger-init.js"></script></body></html>
"""

router = APIRouter(prefix=PREFIX, include_in_schema=False)


@router.get("")
def docs_page() -> HTMLResponse:
    return HTMLResponse(PAGE)


@router.get("/{name}")
def docs_file(name: str) -> FileResponse:
    path = FILES.get(name)
    if path is None or not path.is_file():
        raise HTTPException(404)  # like any unknown path
    return FileResponse(path)
