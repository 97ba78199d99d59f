"""The REST API (/api/v1) as a FastAPI app; Reflex mounts itself under it via api_transformer."""

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse

from wallet_app.api import activity, assets, auth, backup, chains, me, payment, tokens, tx
from wallet_app.api.deps import require_same_origin
from wallet_app.core.config import get_settings
from wallet_app.services.chain import ChainError

API_PREFIX = "/api/v1"

# Service errors (wallet.WalletError is a ChainError) -> {"detail": code}.
_ERROR_STATUS = {"not_authenticated": 401, "rpc_unavailable": 503}


async def wallet_error_response(_request: Request, exc: Exception) -> JSONResponse:
    code = getattr(exc, "code", "error")
    return JSONResponse({"detail": code}, status_code=_ERROR_STATUS.get(code, 400))


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
    v1.include_router(backup.router)
    v1.include_router(payment.router)
    for wallet_router in (chains.router, assets.router, tokens.router, tx.router, activity.router):
        v1.include_router(wallet_router)
    app.add_exception_handler(ChainError, wallet_error_response)
    app.include_router(v1)
    if get_settings().dev_mode:
        from wallet_app.dev import drive, idp

        app.include_router(idp.build_router())
        app.include_router(drive.build_router())
    return app
