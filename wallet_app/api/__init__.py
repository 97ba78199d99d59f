"""The REST API (/api/v1) as a FastAPI app; Reflex mounts itself under it via api_transformer."""

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from wallet_app.api import (
    activity,
    assets,
    auth,
    backup,
    chains,
    docs,
    me,
    payment,
    tokens,
    tx,
)
from wallet_app.api.deps import require_same_origin
from wallet_app.errors import AppError

API_PREFIX = "/api/v1"


async def app_error_response(_request: Request, exc: Exception) -> JSONResponse:
    """Every refused operation: {"detail": code} with the code's status (wallet_app.errors.REGISTRY)."""
    assert isinstance(exc, AppError)
    return JSONResponse({"detail": exc.code}, status_code=exc.spec.status)


async def validation_error_response(_request: Request, _exc: Exception) -> JSONResponse:
    """A body or parameter the route's schema refuses: one code like every other error (FastAPI's
    default answers a list of pydantic errors, which echo the input back)."""
    return await app_error_response(_request, AppError("invalid_request"))


def build_api() -> FastAPI:
    app = FastAPI(
        title="Newbl Wallet API",
        version="1",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # our own page (api.docs): FastAPI's loads Swagger UI from a CDN
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    # Every /api/v1 write must come from the app's own origin (see deps.origin_allowed).
    v1 = APIRouter(prefix=API_PREFIX, dependencies=[Depends(require_same_origin)])
    v1.include_router(auth.router)
    v1.include_router(me.router)
    v1.include_router(backup.router)
    v1.include_router(payment.router)
    for wallet_router in (chains.router, assets.router, tokens.router, tx.router, activity.router):
        v1.include_router(wallet_router)
    app.add_exception_handler(AppError, app_error_response)
    app.add_exception_handler(RequestValidationError, validation_error_response)
    app.include_router(v1)
    app.include_router(docs.router)
    return app
