"""The user's token list (GET/POST /api/v1/tokens) and GET /api/v1/token/metadata."""

from typing import Annotated

from fastapi import Query
from pydantic import BaseModel, Field

from wallet_app.api.chains import ERRORS
from wallet_app.api.deps import CurrentUser, v1_router
from wallet_app.core.ratelimit import RESPONSE_429
from wallet_app.services import tokens

router = v1_router(tags=["tokens"])


class TokenOut(BaseModel):
    chain_id: int
    chain_name: str
    token_address: str = Field(description="EIP-55 address; the zero address is the chain's native coin")
    token_symbol: str
    token_name: str
    token_decimals: int


class AddTokenIn(BaseModel):
    chain_id: int | str
    token_address: str = Field(description="0x + 40 hex; the zero address adds the native coin")
    # What GET /token/metadata gave and the user saw: a token can answer otherwise on the add.
    token_symbol: str | None = Field(default=None, description="as shown after GET /token/metadata (optional)")
    token_name: str | None = Field(default=None, description="as shown (with token_symbol)")
    token_decimals: int | None = Field(default=None, description="as shown (with token_symbol)")


class TokenMetadataOut(BaseModel):
    token_name: str
    token_symbol: str
    token_decimals: int


@router.get(
    "/tokens",
    response_model=list[TokenOut],
    responses=ERRORS,
    summary="The signed-in user's token list",
    description="Every chain's configured tokens plus the tokens the user added (POST /tokens).",
)
def get_tokens(user: CurrentUser) -> list[dict]:
    return tokens.user_tokens(user)


@router.post(
    "/tokens",
    response_model=TokenOut,
    responses={
        **ERRORS,
        409: {"description": '{"detail": "token_changed"}: the token answers otherwise than the values given'},
        **RESPONSE_429,
    },
    summary="Add a token to the user's list",
    description="Probes the address on the chain (name, symbol, decimals). Errors: not_a_contract, "
    "not_erc20, invalid_address, unsupported_chain, too_many_tokens (a list holds at most 50), token_changed "
    "(given token_symbol, token_name and token_decimals as shown, the token answers otherwise now). Adding the "
    "same token again returns it.",
)
def post_token(body: AddTokenIn, user: CurrentUser) -> dict:
    shown = body.model_dump(include={"token_symbol", "token_name", "token_decimals"})
    # Nothing shown: added as it answers now.
    return tokens.add_token(
        user, body.chain_id, body.token_address, shown if any(v is not None for v in shown.values()) else None
    )


@router.get(
    "/token/metadata",
    response_model=TokenMetadataOut,
    responses={**ERRORS, **RESPONSE_429},
    description="Reads name, symbol and decimals from the chain; the zero address gives the native coin.",
)
def get_token_metadata(
    user: CurrentUser, chain_id: Annotated[str, Query()], token_address: Annotated[str, Query()] = ""
) -> dict:
    return tokens.token_metadata(user, chain_id, token_address)
