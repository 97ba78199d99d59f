"""/api/v1/merchant: public reads for merchants (no session): a payment confirmed from the chain's
Paid event (services.merchant_payments), rate-limited per client IP (RATE_LIMIT_MERCHANT_PAYMENTS)."""

from typing import Any

from fastapi import Depends, Query
from pydantic import BaseModel, Field

from wallet_app.api.deps import v1_router
from wallet_app.core import ratelimit
from wallet_app.services import merchant_payments

router = v1_router("/merchant", tags=["merchant"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": '{"detail": code}: invalid_payment_id (ref is not 0x + 64 hex), unsupported_chain'},
    404: {"description": '{"detail": "payment_not_found"}: no Paid event for this ref on the chain(s)'},
    503: {"description": '{"detail": "rpc_unavailable"}: a chain did not answer'},
    **ratelimit.RESPONSE_429,
}


class PaidOut(BaseModel):
    chain_id: int
    tx_hash: str = Field(description="the transaction that emitted Paid")
    block_number: int
    log_index: int
    confirmations: int = Field(description="blocks on top of it, its own included (head - block + 1)")
    token: str = Field(description="checksummed token address")
    amount: str = Field(description="integer string in the token's smallest unit")
    payer: str = Field(description="the account that paid (Paid's `from`)")
    merchant: str


class MerchantPaymentsOut(BaseModel):
    ref: str = Field(description="the paymentRef, 0x + 64 lowercase hex")
    payments: list[PaidOut] = Field(
        description="every Paid event of this ref, oldest first; the contract lets different payers use one "
        "ref, so check the token, amount and payer you expect"
    )


@router.get(
    "/payments",
    response_model=MerchantPaymentsOut,
    responses=_ERRORS,
    dependencies=[Depends(ratelimit.by_client_ip("merchant_payments"))],
)
def get_payments(
    ref: str = Query(max_length=80, description="the payment's ref (a merchant link's ref), 0x + 64 hex"),
    chain_id: str | None = Query(default=None, max_length=20, description="optional: look on this chain only"),
) -> dict:
    """A payment as the chain records it (the payment contract's Paid events for `ref`), not as
    any database or payer's screen says. Public: no session needed."""
    return merchant_payments.find_payments(ref, chain_id)
