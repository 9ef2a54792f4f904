"""The Prefect profile of the local server: ``postflows server start`` points a profile named ``postflows`` at
its server and makes it the active one, so that ``prefect`` commands in any shell use that server without an
``export``; ``postflows server stop`` makes the profile that was active before active again. Written with
Prefect's own profile functions, as ``prefect profile use`` and ``prefect config set`` write them
(``PREFECT_PROFILES_PATH``, default ``<PREFECT_HOME>/profiles.toml``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from core.json_text import json_text

PROFILE = "postflows"
PROFILE_SOURCE = f"Prefect profile {PROFILE!r}"
"""How :func:`postflows.prefect_api.configured_api_url` names this profile as the source of an API URL."""
_RECORD = "prefect-profile.json"


@dataclass(frozen=True)
class ProfileSwitch:
    """What :func:`activate` did: the profile active before (the one ``stop`` restores), and whether
    ``PREFECT_PROFILE`` in the environment overrides the active profile in this shell."""

    previous: str
    overridden_by: str | None


def activate(api_url: str, home: Path) -> ProfileSwitch:
    """Point the ``postflows`` profile at ``api_url`` and make it active; the profile active before is
    recorded in the server's ``home`` (unless it was this one: a restart keeps the first record)."""
    from prefect.settings import PREFECT_API_URL
    from prefect.settings.profiles import load_profiles, save_profiles

    profiles = load_profiles()
    previous = profiles.active_name or "ephemeral"
    record = home / _RECORD
    if previous != PROFILE or not record.exists():
        _write_record(record, previous)
    profiles.update_profile(PROFILE, {PREFECT_API_URL: api_url})
    profiles.set_active(PROFILE)
    save_profiles(profiles)
    return ProfileSwitch(_recorded(record) or previous, os.environ.get("PREFECT_PROFILE") or None)


def restore(home: Path) -> str | None:
    """Make the profile that was active before :func:`activate` active again, if ``postflows`` is still the
    active one (an operator's own switch since is kept); returns the profile made active, or None."""
    record = home / _RECORD
    previous = _recorded(record)
    record.unlink(missing_ok=True)
    if previous is None:
        return None
    from prefect.settings.profiles import load_profiles, save_profiles

    profiles = load_profiles()
    if profiles.active_name != PROFILE or previous not in profiles.names:
        return None
    profiles.set_active(previous)
    save_profiles(profiles)
    return previous


def _write_record(record: Path, previous: str) -> None:
    from fileio.files import PRIVATE_FILE_MODE, write_bytes

    write_bytes(record, json_text({"previous": previous}, ascii_only=True).encode(), mode=PRIVATE_FILE_MODE)


def _recorded(record: Path) -> str | None:
    try:
        previous = json.loads(record.read_text(encoding="utf-8")).get("previous")
    except (OSError, ValueError, AttributeError):
        return None
    return previous if isinstance(previous, str) and previous else None
