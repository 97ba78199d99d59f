"""/card: card issuing is unavailable. In development it also offers a merchant link, so the
payment flow (/payment) can be tried by hand (core.extensions: the dev stand-ins provide it)."""

from __future__ import annotations

import asyncio

import reflex as rx

from wallet_app.core import extensions
from wallet_app.state.base import SignedInState


class CardState(SignedInState):
    dev_link: str = ""

    @rx.event
    async def load(self):
        if await self._require_user() is None:
            return self._to_login()
        self.dev_link = await asyncio.to_thread(extensions.merchant_link)
        return None

    @rx.event
    def issue(self):
        self._notify("card_unavailable")
