"""GET /api/v1/health: whether this process reaches its database and Redis (services.health), for
a load balancer's health checks. No session needed; it names no more than ok or unavailable."""

from typing import Literal

from fastapi import Response
from pydantic import BaseModel

from wallet_app.api.deps import v1_router
from wallet_app.services import health

router = v1_router(tags=["health"])


class HealthOut(BaseModel):
    database: Literal["ok", "unavailable"]
    redis: Literal["ok", "unavailable", "unused"]


@router.get(
    "/health",
    response_model=HealthOut,
    responses={503: {"description": "the same body: a part is unavailable (take this process out of rotation)"}},
)
async def get_health(response: Response) -> dict:
    parts = await health.check()
    if "unavailable" in parts.values():
        response.status_code = 503
    return parts
