"""/onboarding: the browser created the wallet; register its public address."""

from __future__ import annotations

import asyncio

import reflex as rx

from wallet_app import routes
from wallet_app.errors import AppError
from wallet_app.models import stored_id
from wallet_app.services import accounts
from wallet_app.services.eth import parse_address
from wallet_app.state.base import SignedInState


class OnboardingState(SignedInState):
    @rx.event
    async def created(self, address: str):
        try:
            address = parse_address(address)
        except AppError as e:
            return self._fail(e)
        user = await self._require_user()
        if user is None:
            return self._to_login()
        if (user.address or "").lower() != address.lower():
            # The browser's POST /me/address may have failed (that failure is ignored there);
            # the session's websocket registers it instead, over the address this page knew only.
            try:
                user = await asyncio.to_thread(accounts.set_address, stored_id(user), address, self.address)
            except AppError as e:
                return self._fail(e)
        self._apply(user)
        return rx.redirect(routes.HOME, replace=True)

    @rx.event
    def failed(self, detail: str):
        self._show_dialog("onboarding_failed", str(detail), title="error")
