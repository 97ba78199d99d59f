"""/api/v1/payment: quotes, execution of a signed Pay message, status (services.payments)."""

from typing import Any

from fastapi import Query
from pydantic import BaseModel, Field

from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.core.ratelimit import RESPONSE_429
from wallet_app.core.threads import in_payment_thread
from wallet_app.services import accounts, payment_watch, payments

router = v1_router("/payment", tags=["payment"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "no live session"},
    400: {"description": "detail: a machine code"},
    404: {"description": "unknown_payment"},
    409: {"description": "quote_mismatch, payment_id_used, payment_ref_used, no_address"},
    503: {"description": "rpc_unavailable"},
}


class QuoteOut(BaseModel):
    available: bool
    transaction: dict[str, str] | None = Field(description="unsigned legacy approve, when the allowance is short")
    verifying_contract: str
    payment_id: str
    reason: str | None = Field(default=None, description="insufficient_balance | allowance_short")
    permit: dict[str, Any] | None = Field(
        default=None,
        description="EIP-2612 Permit typed data to sign instead of an approve (a token with permit, allowance short)",
    )


class PermitIn(BaseModel):
    owner: str = Field(max_length=64)
    spender: str = Field(max_length=64)
    value: int | str
    nonce: int | str
    deadline: int | str
    signature: str = Field(max_length=200)


class ExecuteIn(BaseModel):
    chain_id: int | str
    merchant_address: str = Field(max_length=64)
    token_address: str = Field(max_length=64)
    amount: int | str = Field(description="integer string in the smallest unit")
    payment_id: str = Field(max_length=80)
    deadline: int | str
    signature: str = Field(max_length=200)
    permit: PermitIn | None = Field(default=None, description="the signed Permit of the quote (gasless payment)")


class ExecuteOut(BaseModel):
    id: str


class StatusOut(BaseModel):
    status: str = Field(description="ok | failed | pending")
    reason: str | None = None


@router.get(
    "/available", response_model=QuoteOut, response_model_exclude_none=False, responses={**_ERRORS, **RESPONSE_429}
)
async def get_available(
    user: CurrentUser,
    chain_id: str = Query(max_length=20),
    token_address: str = Query(max_length=64),
    amount: str = Query(max_length=80),
    merchant: str | None = Query(
        default=None,
        max_length=64,
        description="optional; ties the quote to a merchant (400 merchant_is_payer: the payer's own address)",
    ),
    ref: str | None = Query(
        default=None,
        max_length=80,
        description="optional: a merchant link's ref (0x + 64 hex), used as the payment_id; "
        "409 payment_ref_used when another quote or payment of this user holds it, or another user paid "
        "the same order (merchant, token, amount)",
    ),
) -> dict:
    def quote() -> dict:
        accounts.hit("payment_quote", user)
        return payments.quote(user, chain_id, token_address, amount, merchant, ref)

    return await in_payment_thread(quote)


@router.post("/execute", response_model=ExecuteOut, responses={**_ERRORS, **RESPONSE_429})
async def post_execute(body: ExecuteIn, user: CurrentUser) -> dict:
    def execute() -> str:
        accounts.hit("payment_execute", user)
        return payments.execute(
            user,
            body.chain_id,
            body.merchant_address,
            body.token_address,
            body.amount,
            body.payment_id,
            body.deadline,
            body.signature,
            body.permit.model_dump() if body.permit else None,
        )

    return {"id": await in_payment_thread(execute)}


@router.get("/status", response_model=StatusOut, response_model_exclude_none=True, responses=_ERRORS)
async def get_status(
    user: CurrentUser,
    id: str = Query(max_length=80),  # noqa: A002 (the spec's name)
    wait: float = Query(
        default=0,
        ge=0,
        le=payment_watch.MAX_WAIT_SECONDS,
        description="hold a pending answer until the payment is ok or failed, at most this many seconds",
    ),
) -> dict:
    # async: a held request waits on the event loop, not on one of the thread pool's threads
    return await payments.wait_status(user, id, wait)
