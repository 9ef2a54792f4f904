"""The automations of :mod:`deployments.automations` on the Prefect server: created when missing, brought to
the code's trigger and actions when they differ, their on/off switch left as the server has it (an operator
who switched one off in the UI keeps it off). ``postflows setup`` runs this."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from deployments.automations import automations
from runtime.endpoints import ConfigurationError
from runtime.settings import Settings, get_settings

NOTIFY_SETTING = "POSTFLOWS_NOTIFY_BLOCK"


@dataclass(frozen=True)
class Ensured:
    """What became of one automation: ``created``, ``updated`` or ``unchanged``."""

    name: str
    outcome: str
    enabled: bool


async def ensure_automations(settings: Settings) -> list[Ensured]:
    """Create or update every automation on the server of ``PREFECT_API_URL``.

    Raises:
        ConfigurationError: ``POSTFLOWS_NOTIFY_BLOCK`` names no block of the server.
    """
    from prefect.client.orchestration import get_client
    from prefect.events.schemas.automations import AutomationCore

    ensured = []
    async with get_client() as client:
        block_id = await _notify_block_id(client, settings.notify_block)
        for wanted in automations(block_id, silence_s=settings.crash_silence_s):
            existing = await client.read_automations_by_name(wanted["name"])
            if not existing:
                core = AutomationCore.model_validate({**wanted, "enabled": True})
                await client.create_automation(core)
                ensured.append(Ensured(wanted["name"], "created", True))
                continue
            current = existing[0]
            core = AutomationCore.model_validate({**wanted, "enabled": current.enabled})
            if _same(core, current):
                ensured.append(Ensured(wanted["name"], "unchanged", current.enabled))
                continue
            await client.update_automation(current.id, core)
            ensured.append(Ensured(wanted["name"], "updated", current.enabled))
    return ensured


async def _notify_block_id(client: Any, name: str | None) -> str | None:
    """The block document id of ``type-slug/name``; None when no block is named."""
    if not name:
        return None
    from prefect.exceptions import ObjectNotFound

    slug, separator, block_name = name.partition("/")
    if not separator or not slug or not block_name:
        raise ConfigurationError(
            f"{NOTIFY_SETTING}={name!r} is not a block's type and name, e.g. slack-webhook/operations"
        )
    try:
        block = await client.read_block_document_by_name(name=block_name, block_type_slug=slug)
    except ObjectNotFound:
        raise ConfigurationError(
            f"{NOTIFY_SETTING}={name!r}: the Prefect server has no {slug} block named {block_name!r}"
        ) from None
    return str(block.id)


def _same(wanted: Any, current: Any) -> bool:
    fields = ("description", "trigger", "actions", "actions_on_trigger", "actions_on_resolve")
    # Compared as Python values, not JSON: a trigger's expected events are a set, whose JSON order varies.
    return bool(wanted.model_dump(include=set(fields)) == current.model_dump(include=set(fields)))


def ensure_configured_automations() -> list[Ensured]:
    """:func:`ensure_automations` with the settings of the environment, for synchronous callers (serve)."""
    return asyncio.run(ensure_automations(get_settings()))
