"""GET /api/v1/assets: the user's token balances (one aggregated eth_call per chain)."""

from fastapi import Response
from pydantic import Field

from wallet_app.api.chains import ERRORS
from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.api.tokens import TokenOut
from wallet_app.core.ratelimit import RESPONSE_429
from wallet_app.services import tokens

router = v1_router(tags=["assets"])

# The chains whose node did not answer: their tokens are missing from the list, which then does
# not say that none is held there (a client must not show "no tokens"). Absent: every chain answered.
UNAVAILABLE_HEADER = "X-Unavailable-Chains"


class BalanceOut(TokenOut):
    balance: str = Field(description="integer string in the token's smallest unit")


@router.get(
    "/assets",
    response_model=list[BalanceOut],
    responses={
        200: {
            "headers": {
                UNAVAILABLE_HEADER: {
                    "description": "the chain ids (comma-separated) whose balances could not be read now; "
                    "absent when every chain answered",
                    "schema": {"type": "string", "example": "31337, 84532"},
                }
            }
        },
        **ERRORS,
        **RESPONSE_429,
    },
    description=f"A chain that does not answer contributes no items, and is named in the {UNAVAILABLE_HEADER} header.",
)
def get_assets(user: CurrentUser, response: Response) -> list[dict]:
    found = tokens.asset_balances(user)
    if found.unavailable:
        response.headers[UNAVAILABLE_HEADER] = ", ".join(str(c["chain_id"]) for c in found.unavailable)
    return found.items
