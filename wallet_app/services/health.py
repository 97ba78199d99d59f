"""Whether this process can reach what it needs (GET /api/v1/health, for a load balancer's checks):
the database and, with REDIS_URL, Redis. Each part answers ok or unavailable within
CHECK_SECONDS; no part's error text is given out."""

from __future__ import annotations

import asyncio
import logging
import time

from sqlalchemy import text

from wallet_app.core import shared
from wallet_app.core.config import get_settings
from wallet_app.core.db import read_session
from wallet_app.core.threads import in_health_thread

log = logging.getLogger(__name__)
CHECK_SECONDS = 5.0  # a part slower than this counts as unavailable (a load balancer waits on it)


def _query_database() -> None:
    with read_session() as db:
        db.execute(text("SELECT 1"))


# part -> time.monotonic() this process first found it unavailable: logged when it goes and when it
# is back, not at every check (a balancer asks every few seconds, each of its nodes each worker).
_down: dict[str, float] = {}


async def _part(name: str, check) -> str:
    try:
        await asyncio.wait_for(check, CHECK_SECONDS)
    except Exception as e:  # noqa: BLE001 (any failure: that part is unavailable)
        if name not in _down:
            _down[name] = time.monotonic()
            log.warning("health: %s unavailable (%s)", name, type(e).__name__)
        return "unavailable"
    if (since := _down.pop(name, None)) is not None:
        log.warning("health: %s answers again after %.1f s", name, time.monotonic() - since)
    return "ok"


async def check() -> dict[str, str]:
    """{"database": "ok" | "unavailable", "redis": "ok" | "unavailable" | "unused"}."""
    url = get_settings().redis_url
    parts = [_part("database", in_health_thread(_query_database))]
    if url:
        parts.append(_part("redis", shared.ping(url)))
    answers = await asyncio.gather(*parts)
    return {"database": answers[0], "redis": answers[1] if url else "unused"}
