"""POST /api/v1/tx/build and /api/v1/tx/submit."""

from typing import Literal

from pydantic import BaseModel, Field

from wallet_app.api.chains import ERRORS
from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.core.ratelimit import RESPONSE_429
from wallet_app.services import transfers

router = v1_router("/tx", tags=["tx"])


class BuildTxIn(BaseModel):
    chain_id: int | str
    token_address: str = Field(description="ERC-20 address; the native coin is refused (native_blocked)")
    to: str = Field(description="recipient, 0x + 40 hex; mixed case must pass EIP-55 (bad_checksum)")
    amount: str | int = Field(description="integer string in the token's smallest unit")


class BuiltTxOut(BaseModel):
    """A legacy type-0 transaction; numbers as decimal strings, data as 0x hex."""

    chain_id: str
    to: str
    data: str
    value: str
    nonce: str
    gas_limit: str
    gas_price: str


class SubmitIn(BaseModel):
    raw_tx: str = Field(max_length=300_000, description="signed legacy transaction, 0x hex")
    replaces: int | None = Field(
        default=None,
        ge=1,
        description="id of the user's pending activity entry this transaction speeds up or cancels "
        "(same nonce, a gas price at least 10% higher)",
    )


class ReplaceIn(BaseModel):
    activity_id: int = Field(ge=1, le=2**63 - 1, description="the user's pending activity entry")
    kind: Literal["speedup", "cancel"] = Field(
        description="speedup: the same transaction; cancel: 0 of the native coin to yourself"
    )


class SubmitOut(BaseModel):
    tx_hash: str


@router.post("/build", response_model=BuiltTxOut, responses={**ERRORS, **RESPONSE_429})
def post_build(body: BuildTxIn, user: CurrentUser) -> dict:
    return transfers.build_transfer(user, body.chain_id, body.token_address, body.to, body.amount)


@router.post(
    "/submit",
    response_model=SubmitOut,
    responses={**ERRORS, **RESPONSE_429},
    description="Refuses a transaction not signed by the session's address (sender_mismatch) or for an "
    "unknown chain (unsupported_chain); broadcasts once and records an activity entry.",
)
def post_submit(body: SubmitIn, user: CurrentUser) -> dict:
    return transfers.submit_signed(user, body.raw_tx, replaces=body.replaces)


@router.post(
    "/replace",
    response_model=BuiltTxOut,
    responses={**ERRORS, **RESPONSE_429},
    description="The unsigned speed-up or cancel of a pending send: its nonce, a gas price above every one "
    "sent with that nonce (+10%) and at least the node's. Sign it and POST /tx/submit with `replaces`. "
    "A send mined meanwhile: 409 already_mined; its nonce taken by another transaction: 409 nonce_used.",
)
def post_replace(body: ReplaceIn, user: CurrentUser) -> dict:
    return transfers.build_replacement(user, body.activity_id, body.kind)
