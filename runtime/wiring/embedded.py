"""The embedded sandbox, attached as a transport: found through the ``postflows.sandbox`` entry point that
the ``postflows-sandbox`` distribution (the ``postflows[sandbox]`` extra) declares, and loaded only when a
service's URL is unset. Nothing below the CLI imports the sandbox: without the extra, a run that needs it
refuses with one line naming the extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Literal, Protocol, cast

import httpx

from runtime.endpoints import (
    SANDBOX_ENTRY_POINT,
    SANDBOX_ENTRY_POINTS,
    SANDBOX_EXTRA,
    ConfigurationError,
)
from runtime.settings import Settings
from runtime.settings.variables import variable_named


class SandboxMissing(ConfigurationError):
    """The embedded sandbox is asked for where it is not installed."""


@dataclass(frozen=True)
class SandboxOptions:
    """The settings an embedded sandbox is built with (one sandbox per distinct options and process)."""

    job_seconds: float
    faults: str | None
    state_dir: Path
    alignments: str | None
    order_statuses: str | None
    ping_answer: Literal["status", "empty-json", "empty-text"]
    guesses: Literal["ours", "other"]

    @classmethod
    def of(cls, settings: Settings) -> SandboxOptions:
        return cls(
            job_seconds=settings.sandbox_job_seconds,
            faults=settings.sandbox_faults,
            state_dir=sandbox_state_dir(settings),
            alignments=settings.sandbox_alignments,
            order_statuses=settings.sandbox_order_statuses,
            ping_answer=settings.sandbox_ping_answer,
            guesses=settings.sandbox_guesses,
        )


class EmbeddedSandbox(Protocol):
    """What the entry point offers: a transport built from the options (raising ``ValueError`` with an
    ``option`` attribute naming the field it rejects) and, by API name, where the in-process sandbox serves
    it as whom (``base_url``, ``user``, ``secret``, ``token_url``, ``auth_url``)."""

    def transport(self, options: SandboxOptions) -> httpx.AsyncBaseTransport: ...

    def services(self) -> Mapping[str, Mapping[str, str | None]]: ...


def missing_sandbox(needed_by: str) -> SandboxMissing:
    """The one-line refusal of a command or run that needs the sandbox where it is not installed."""
    return SandboxMissing(
        f"{needed_by} needs the embedded sandbox, which is not installed: pip install '{SANDBOX_EXTRA}'"
    )


@cache
def embedded_sandbox(needed_by: str = "this command") -> EmbeddedSandbox:
    """The installed sandbox's entry point, loaded once per process.

    Raises:
        SandboxMissing: the ``postflows[sandbox]`` extra is not installed.
    """
    found = entry_points(group=SANDBOX_ENTRY_POINTS, name=SANDBOX_ENTRY_POINT)
    if not found:
        raise missing_sandbox(needed_by)
    return cast(EmbeddedSandbox, next(iter(found)).load())


def sandbox_state_dir(settings: Settings) -> Path:
    """Where the embedded and the served sandbox keep their state unless told otherwise."""
    return (settings.data_dir / "sandbox").resolve()


@lru_cache(maxsize=4)
def _transport(options: SandboxOptions) -> httpx.AsyncBaseTransport:
    return embedded_sandbox().transport(options)


def sandbox_transport(settings: Settings) -> httpx.AsyncBaseTransport:
    """The process-wide in-process sandbox for these settings (built on first use).

    Raises:
        ConfigurationError: a sandbox setting cannot be read (naming it), or the sandbox is not installed.
    """
    try:
        return _transport(SandboxOptions.of(settings))
    except ValueError as error:
        option = f"sandbox_{getattr(error, 'option', '')}"
        if option not in Settings.model_fields:
            raise
        raise ConfigurationError(f"{variable_named(type(settings), option)}: {error}") from None


def reset_sandbox() -> None:
    """Drop the in-process sandbox; the next one is built anew, remembering what its state dir holds."""
    _transport.cache_clear()


def sandbox_service(api: str, needed_by: str) -> Mapping[str, str | None]:
    """Where the embedded sandbox serves ``api`` (or ``address-assistant``) and as whom.

    Raises:
        SandboxMissing: naming ``needed_by``, the setting whose absence asks for the sandbox.
    """
    return embedded_sandbox(needed_by).services()[api]
