"""What a user has today keeps working: every command and flag, every setting's environment variable and
every deployment name in tests/data/public-surface.json (taken from the released CLI, settings and catalog)
still exists and still means something. The list only grows: a name is removed from it only with a
deprecation a user was told about."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import typer

from deployments.catalog import CATALOG
from postflows.cli import app
from runtime.settings import Settings

SURFACE = json.loads((Path(__file__).resolve().parents[1] / "data" / "public-surface.json").read_text())


def _commands(command: Any, prefix: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Every command of the CLI by its words (``commerce zips``) with the flags it takes, as a user's
    command line finds them (the root's commands load when asked for)."""
    found: dict[str, set[str]] = {}
    if hasattr(command, "list_commands"):
        ctx = command.make_context("postflows", [], resilient_parsing=True)
        for name in command.list_commands(ctx):
            found.update(_commands(command.get_command(ctx, name), (*prefix, name)))
    if prefix:
        found[" ".join(prefix)] = {
            flag
            for parameter in command.params
            for flag in [*getattr(parameter, "opts", []), *getattr(parameter, "secondary_opts", [])]
            if flag.startswith("-")
        }
    return found


def test_every_command_and_flag_a_user_has_still_works() -> None:
    root = typer.main.get_command(app)
    commands = _commands(root)
    missing = {name: set(flags) - commands.get(name, set()) for name, flags in SURFACE["commands"].items()}
    assert not [name for name in SURFACE["commands"] if name not in commands]
    assert not {name: flags for name, flags in missing.items() if flags}
    global_flags = {flag for parameter in root.params for flag in parameter.opts + parameter.secondary_opts}
    assert set(SURFACE["global_options"]) <= global_flags


def test_every_deployment_name_a_user_has_still_exists() -> None:
    assert set(SURFACE["deployments"]) <= {spec.full_name for spec in CATALOG}


def _settings_with(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> dict[str, Any]:
    for name in list(os.environ):
        if name.startswith("POSTFLOWS_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Settings(_env_file=None).model_dump(mode="json")  # type: ignore[call-arg]


@pytest.mark.parametrize("variable", sorted(SURFACE["settings"]))
def test_every_setting_a_user_has_is_still_read(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    baseline = _settings_with(monkeypatch, {})
    changed = _settings_with(monkeypatch, {variable: SURFACE["settings"][variable]})
    assert changed != baseline, f"{variable}={SURFACE['settings'][variable]!r} no longer changes the settings"
