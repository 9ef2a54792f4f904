"""The per-API rate limits on the Prefect server (``address-service``, ``newspaper-api``, ``commerce-api``):
their values from the settings, creating them (``postflows setup``, ``postflows serve``), and the hook every
client of a flow run awaits before each request to take a slot.

They are Prefect global concurrency limits with slot decay, so runs on several workers share one budget per
API. "N per minute" becomes a burst of a sixth of N refilled at the rest: no minute ever sees more than N
requests. Where no limit exists (a server nobody set up, a plain ``prefect server start``) the hook does
nothing; outside a flow run it never talks to Prefect at all. Per-key exclusion stays with the run history's
lease; deployment concurrency limits only cap how many runs go at once. Prefect is imported only where it is
used: the wiring imports this module, and the CLI checks its input before Prefect is loaded.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import dataclass

from runtime.settings import Settings, get_settings

logger = logging.getLogger("postflows.limits")

ADDRESS_SERVICE = "address-service"
NEWSPAPER_API = "newspaper-api"
COMMERCE_API = "commerce-api"


@dataclass(frozen=True)
class ApiLimit:
    """One API's rate limit: at most ``per_minute`` requests in any minute."""

    name: str
    per_minute: int

    @property
    def burst(self) -> int:
        """The slots free at once (the limit's ``limit``)."""
        return max(1, math.ceil(self.per_minute / 6))

    @property
    def slot_decay_per_second(self) -> float:
        """How fast taken slots come free: the rest of the minute's allowance, spread over the minute."""
        return max(1, self.per_minute - self.burst) / 60


def api_limits(settings: Settings) -> list[ApiLimit]:
    """The limits the settings ask for; an API set to 0 per minute has none."""
    wanted = (
        ApiLimit(ADDRESS_SERVICE, settings.address_service.rate_per_minute),
        ApiLimit(NEWSPAPER_API, settings.newspaper.rate_per_minute),
        ApiLimit(COMMERCE_API, settings.commerce.rate_per_minute),
    )
    return [limit for limit in wanted if limit.per_minute > 0]


async def ensure_api_limits(settings: Settings) -> list[ApiLimit]:
    """Create the limits on the Prefect server (PREFECT_API_URL), or bring existing ones to the settings'
    values; returns them. An API set to 0 per minute is left as the server has it."""
    from prefect.client.orchestration import get_client

    limits = api_limits(settings)
    async with get_client() as client:
        for limit in limits:
            await client.upsert_global_concurrency_limit_by_name(
                limit.name, limit.burst, slot_decay_per_second=limit.slot_decay_per_second
            )
    forget_known_limits()
    return limits


def ensure_configured_limits() -> list[ApiLimit]:
    """:func:`ensure_api_limits` with the settings of the environment, for synchronous callers (serve)."""
    return asyncio.run(ensure_api_limits(get_settings()))


class RateLimitHook:
    """Awaited before each request of one client: takes a slot of the named limit when the client works
    inside a flow run and the limit exists on the server; otherwise returns at once.

    Whether the limit exists is asked once per client, and at most once a minute per process and server
    (:data:`LIMIT_KNOWN_FOR_S`): a flow run's clients do not each cost a request, and Prefect's "limit does
    not exist" warning never repeats per request.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._exists: bool | None = None
        self._lock = asyncio.Lock()
        self.taken = 0

    async def __call__(self) -> None:
        if not _in_run() or not await self._limit_exists():
            return
        from prefect.concurrency.asyncio import rate_limit

        await rate_limit(self.name, strict=False)
        self.taken += 1

    async def _limit_exists(self) -> bool:
        if self._exists is None:
            async with self._lock:
                if self._exists is None:
                    self._exists = await _known_limit(self.name)
        return self._exists


LIMIT_KNOWN_FOR_S = 60.0
"""How long a process trusts what it read about a limit (whether it exists) before asking the server again."""

_known: dict[tuple[str, str], tuple[bool, float]] = {}


def forget_known_limits() -> None:
    """Ask the server again on the next client's first request (the limits were just created or removed)."""
    _known.clear()


async def _known_limit(name: str) -> bool:
    """Whether the limit exists on the server this process reports to, read at most once a minute."""
    from prefect.settings import PREFECT_API_URL

    key = (str(PREFECT_API_URL.value() or ""), name)
    known = _known.get(key)
    now = time.monotonic()
    if known is not None and now - known[1] < LIMIT_KNOWN_FOR_S:
        return known[0]
    exists = await _read_limit(name)
    _known[key] = (exists, now)
    return exists


async def _read_limit(name: str) -> bool:
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    try:
        async with get_client() as client:
            limit = await client.read_global_concurrency_limit_by_name(name)
    except ObjectNotFound:
        return False
    except Exception as error:  # noqa: BLE001 - the limit is a courtesy to the service, not a precondition
        logger.warning("rate limit %s could not be read (%s); requests go unlimited", name, error)
        return False
    return bool(limit.active) and limit.slot_decay_per_second > 0


def _in_run() -> bool:
    from prefect.context import FlowRunContext, TaskRunContext

    return FlowRunContext.get() is not None or TaskRunContext.get() is not None
