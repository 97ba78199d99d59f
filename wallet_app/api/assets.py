"""GET /api/v1/assets: the user's token balances (one aggregated eth_call per chain)."""

from pydantic import Field

from wallet_app.api.chains import ERRORS
from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.api.tokens import TokenOut
from wallet_app.core.ratelimit import RESPONSE_429
from wallet_app.services import tokens

router = v1_router(tags=["assets"])


class BalanceOut(TokenOut):
    balance: str = Field(description="integer string in the token's smallest unit")


@router.get(
    "/assets",
    response_model=list[BalanceOut],
    responses={**ERRORS, **RESPONSE_429},
    description="A chain that does not answer contributes no items.",
)
def get_assets(user: CurrentUser) -> list[dict]:
    return tokens.asset_balances(user)
