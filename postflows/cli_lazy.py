"""The sub-commands of ``postflows`` that live in modules of their own, loaded when they are asked for.

Building a command reads its options, and some options name types of their API (a newspaper's statistics
interval, a commerce product), so building every command at start would import every API's connector into
every command's process. The root group therefore lists these commands by name and imports a command's
module only when the command is run or its help shown: ``postflows address-batch`` loads nothing of the
newspaper or commerce APIs. ``postflows --help`` lists every command, which needs each one's help line, so
it loads them all.

:data:`COMMAND_MODULES` names the module of each command; each module registers its commands on a Typer
app with ``register(app)``. tests/cli/test_lazy_commands.py holds the table equal to what the modules
register.
"""

from __future__ import annotations

import functools
import importlib
import re
from difflib import get_close_matches
from typing import Any

import typer
from typer.core import TyperGroup

# Typer runs on a copy of Click of its own, whose classes have no public name: they are typed loosely.
Command = Any
ClickContext = Any

COMMAND_MODULES: dict[str, str] = {
    "sandbox": "postflows.cli_sandbox",
    "newspaper-order": "postflows.cli_newspaper",
    "newspaper-reports": "postflows.cli_newspaper",
    "newspaper-sync": "postflows.cli_newspaper",
    "newspaper-statistics": "postflows.cli_newspaper",
    "address-purchase": "postflows.cli_newspaper",
    "structure-files": "postflows.cli_newspaper",
    "delivery-sync": "postflows.cli_delivery",
    "pickup-register": "postflows.cli_delivery",
    "commerce-login": "postflows.cli_commerce",
    "commerce-logout": "postflows.cli_commerce",
    "commerce": "postflows.cli_commerce",
    "address-validation": "postflows.cli_validation",
    "deliverability": "postflows.cli_validation",
    "pickup-points": "postflows.cli_parcels",
    "address-labels": "postflows.cli_parcels",
    "return-order": "postflows.cli_parcels",
    "server": "postflows.cli_server",
    "info": "postflows.cli_info",
    "doctor": "postflows.cli_doctor",
    "setup": "postflows.cli_setup",
    "deploy": "postflows.cli_deploy",
    "serve": "postflows.cli_deploy",
    "report": "postflows.cli_report",
}


# How ``postflows --help`` groups the commands: by the API they work with, then the rest.
COMMAND_SECTIONS: dict[str, tuple[str, ...]] = {
    "Address web service": (
        "address-batch", "address-query", "autocomplete", "verify-building", "cleanup", "profiles",
    ),
    "Newspaper API": (
        "newspaper-order", "newspaper-reports", "newspaper-sync", "newspaper-statistics", "address-purchase",
        "structure-files",
    ),
    "Commerce API": (
        "address-validation", "deliverability", "pickup-points", "pickup-register", "delivery-sync",
        "address-labels", "return-order", "commerce", "commerce-login", "commerce-logout",
    ),
    "Runs and their history": ("history", "report", "demo"),
    "Prefect, deployments and this machine": (
        "server", "setup", "deploy", "serve", "info", "doctor", "sandbox",
    ),
}  # fmt: skip
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")  # "e.g. this" goes on


def first_sentence(text: str) -> str:
    """The first sentence of a command's help, whole (its first paragraph when no sentence ends in it)."""
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    return _SENTENCE_END.split(paragraph, 1)[0]


def _plain_app() -> typer.Typer:
    """An app made as the root app is: plain help text, Typer's exception pages off."""
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


def command_app(module: str) -> typer.Typer:
    """A Typer app holding the commands ``module`` registers."""
    app = _plain_app()
    importlib.import_module(module).register(app)
    return app


@functools.cache
def _module_group(module: str) -> TyperGroup:
    return typer.main.get_group(command_app(module))


class LazyCommands(TyperGroup):
    """The root group: its own commands first, then those of :data:`COMMAND_MODULES`, each built from its
    module the first time it is asked for."""

    def list_commands(self, ctx: ClickContext) -> list[str]:
        own = super().list_commands(ctx)
        return [*own, *(name for name in COMMAND_MODULES if name not in own)]

    def get_command(self, ctx: ClickContext, cmd_name: str) -> Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in COMMAND_MODULES:
            found = _module_group(COMMAND_MODULES[cmd_name]).commands[cmd_name]
            self.add_command(found, cmd_name)
        return found

    def format_commands(self, ctx: ClickContext, formatter: Any) -> None:
        """The commands by :data:`COMMAND_SECTIONS`, each with the whole first sentence of its help."""
        for title, names in COMMAND_SECTIONS.items():
            rows = []
            for name in names:
                command = self.get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, first_sentence(command.help or command.short_help or "")))
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def resolve_command(
        self, ctx: ClickContext, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        """Typer's, with its "Did you mean" drawn from every command, loaded or not (Typer's own, turned
        off on the root app, knows only the loaded ones)."""
        name = args[0] if args else ""
        if (
            name
            and not name.startswith("-")
            and not ctx.resilient_parsing
            and self.get_command(ctx, name) is None
        ):
            matches = get_close_matches(name, self.list_commands(ctx))
            hint = f" Did you mean {', '.join(repr(match) for match in matches)}?" if matches else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)


def every_command_app(root: typer.Typer) -> typer.Typer:
    """``root`` with every module's commands registered on it as well, as Typer sees a plain app: for the
    reference pages and the tests that read every command's declaration."""
    app = _plain_app()
    app.registered_callback = root.registered_callback
    app.info = root.info
    app.registered_commands = list(root.registered_commands)
    app.registered_groups = list(root.registered_groups)
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        importlib.import_module(module).register(app)
    return app
