"""The root command loads the commands of postflows.cli_lazy.COMMAND_MODULES when they are asked for: its
table names each command's module, a command found late behaves as one registered at start, and a mistyped
name is answered with the close names of every command, loaded or not."""

from __future__ import annotations

from typer.main import get_group
from typer.testing import CliRunner

from postflows import cli
from postflows.cli_lazy import (
    COMMAND_MODULES,
    COMMAND_SECTIONS,
    command_app,
    every_command_app,
    first_sentence,
)


def test_the_table_names_the_module_of_every_command_it_holds() -> None:
    by_module: dict[str, set[str]] = {}
    for name, module in COMMAND_MODULES.items():
        by_module.setdefault(module, set()).add(name)
    registered = {module: set(get_group(command_app(module)).commands) for module in by_module}
    assert registered == by_module


def test_no_command_of_the_table_shadows_one_of_the_root() -> None:
    own = {info.name for info in cli.app.registered_commands} | {
        info.name for info in cli.app.registered_groups
    }
    assert own and not own & set(COMMAND_MODULES)


def test_help_lists_every_command_and_a_loaded_one_answers_as_registered() -> None:
    runner = CliRunner()
    listed = runner.invoke(cli.app, ["--help"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0
    assert all(f"  {name} " in listed.output for name in COMMAND_MODULES)
    helped = runner.invoke(cli.app, ["commerce", "zips", "--help"], env={"COLUMNS": "200"})
    assert helped.exit_code == 0 and "Usage: postflows commerce zips" in helped.output


def test_a_mistyped_command_is_told_the_close_names_of_every_command() -> None:
    answered = CliRunner().invoke(cli.app, ["newspaper-ordr"])  # each invocation builds its root anew
    assert answered.exit_code == 2
    assert "No such command 'newspaper-ordr'. Did you mean 'newspaper-order'" in answered.output


def test_registering_a_module_again_adds_no_command_twice() -> None:
    """The reference pages and the lazy root each register a module's commands on an app of their own."""
    for _ in range(2):
        every = get_group(every_command_app(cli.app))
        names = [
            f"{name} {sub}"
            for name, command in every.commands.items()
            for sub in getattr(command, "commands", {None: None})
        ]
        assert len(names) == len(set(names)) and "commerce zips" in names


def test_help_groups_every_command_by_its_api_once_with_its_whole_first_sentence() -> None:
    root = get_group(every_command_app(cli.app))
    grouped = [name for names in COMMAND_SECTIONS.values() for name in names]
    assert sorted(grouped) == sorted(root.commands) and len(grouped) == len(set(grouped))
    listed = CliRunner().invoke(cli.app, ["--help"], env={"COLUMNS": "80"}).output
    titles = [line[:-1] for line in listed.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert titles[-len(COMMAND_SECTIONS) :] == list(COMMAND_SECTIONS)
    assert "..." not in listed.split("Address web service:", 1)[1]  # no help line cut short
    said = " ".join(listed.split())
    assert (
        "whose result is still owed (until the service's 3-month retention has passed, or --force);" in said
    )


def test_the_first_sentence_of_a_help_text() -> None:
    assert first_sentence("Align a file (upload, run).\n\nMore text.") == "Align a file (upload, run)."
    assert first_sentence("Check it; then\nsay e.g. this. And more.") == "Check it; then say e.g. this."
    assert first_sentence("No end at all") == "No end at all"
