"""GET /api/v1/activities: the user's activity entries, newest first."""

from pydantic import BaseModel, Field

from wallet_app.api.chains import ERRORS
from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.services import activity

router = v1_router(tags=["activity"])


class ActivityOut(BaseModel):
    id: int
    type: str
    summary: str
    chain_id: int | None = None
    tx_hash: str | None = None
    token_address: str | None = None
    token_symbol: str | None = None
    token_decimals: int | None = None
    amount: str | None = None
    counterparty: str | None = None
    status: str = Field(
        description="submitted (pending), ok, failed, replaced or cancelled (another "
        "transaction with its nonce was mined), dropped (the node never got it, or dropped it)"
    )
    created_at: int
    replaces_tx: str | None = Field(default=None, description="the pending transaction this one speeds up or cancels")
    replaceable: bool = Field(default=False, description="a pending send that POST /tx/replace can speed up or cancel")


@router.get("/activities", response_model=list[ActivityOut], responses=ERRORS)
def get_activities(user: CurrentUser) -> list[dict]:
    return activity.activities(user)
