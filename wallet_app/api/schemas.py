"""Request and response bodies of /api/v1 (JSON keys exactly as the specification writes them)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Locale = Literal["ko", "en"]


class MeOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    address: str | None
    locale: Locale
    hasBackup: bool


class GoogleIdTokenIn(BaseModel):
    id_token: str = Field(min_length=1, max_length=8192)
    locale: Locale


class GoogleCodeIn(BaseModel):
    code: str = Field(min_length=1, max_length=2048)
    state: str = Field(max_length=128, description="the OAuth state: the nonce of POST /auth/login-attempt")
    locale: Locale


class LoginAttemptOut(BaseModel):
    nonce: str = Field(description="the ID token's nonce, or the code flow's OAuth state; single use")


class AddressIn(BaseModel):
    address: str = Field(
        max_length=64, description="0x followed by 40 hex digits (mixed case must pass EIP-55); stored lowercase"
    )
    replaces: str | None = Field(
        default=None,
        max_length=64,
        description="the account's address as the page knew it ('' for none): when the account's is another "
        "(changed in another tab, or another account signed in since), 409 wallet_changed and nothing changes",
    )


class LocaleIn(BaseModel):
    locale: Locale


class OkOut(BaseModel):
    ok: bool = True
