"""The REST API (/api/v1) as a FastAPI app; Reflex mounts itself under it via api_transformer."""

from fastapi import APIRouter, Depends, FastAPI

from wallet_app.api import auth, me
from wallet_app.api.deps import require_same_origin
from wallet_app.core.config import get_settings

API_PREFIX = "/api/v1"


def build_api() -> FastAPI:
    app = FastAPI(
        title="Newbl Wallet API",
        version="1",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=f"{API_PREFIX}/docs",
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    # Every /api/v1 write must come from the app's own origin (see deps.origin_allowed).
    v1 = APIRouter(prefix=API_PREFIX, dependencies=[Depends(require_same_origin)])
    v1.include_router(auth.router)
    v1.include_router(me.router)
    app.include_router(v1)
    if get_settings().dev_mode:
        from wallet_app.dev import idp

        app.include_router(idp.build_router())
    return app
