"""GET /api/v1/chains: the configured chains."""

from typing import Any

from pydantic import BaseModel

from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.services import tokens

router = v1_router(tags=["chains"])

# Shared by the wallet routers: errors are {"detail": <machine code>} with the code's status in
# wallet_app.errors.REGISTRY (see app_error_response).
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": '{"detail": code}: a machine code, e.g. unsupported_chain, invalid_address'},
    401: {"description": "no live session"},
    409: {"description": '{"detail": "no_address"}: no wallet address registered yet'},
    503: {"description": '{"detail": "rpc_unavailable"}: the chain did not answer'},
}


class ChainOut(BaseModel):
    chain_id: int
    chain_name: str


@router.get("/chains", response_model=list[ChainOut], responses=ERRORS)
def get_chains(user: CurrentUser) -> list[dict]:
    return tokens.list_chains()
