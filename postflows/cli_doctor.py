"""``postflows doctor``: check the settings of each API, the run history and the Prefect API; with ``--live``
also ask the configured services with requests that bill nothing and leave nothing behind, say which
registered guesses their answers bear out, and write ``doctor.json``. The checks are in
:mod:`postflows.doctor` and :mod:`postflows.doctor_live`; this module only reads the options and prints."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from postflows.cli_common import EXIT_FAILED, EXIT_USAGE, fail, run_work, say


class ApiName(StrEnum):
    """The APIs ``--api`` names (those of :data:`postflows.doctor.APIS`; a test holds them equal)."""

    ADDRESS_SERVICE = "address-service"
    NEWSPAPER = "newspaper"
    COMMERCE = "commerce"


def doctor_command(
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Also ask each API: the address service's ping, createfile and deletefile of that file, a "
            "client-credentials token per scope, and the commerce zips of 8001; nothing is billed or left "
            "behind. Writes doctor.json",
        ),
    ] = False,
    apis: Annotated[
        list[ApiName] | None,
        typer.Option("--api", help="Check only this API (repeatable) [default: all three]"),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Where --live writes doctor.json [default: the current directory]"),
    ] = None,
) -> None:
    """Check that each API is configured completely, that the run history and the Prefect API can be
    reached, and with --live that each API answers as configured (exit 0), else name what to set (exit 1)."""
    from pydantic import ValidationError

    from fileio.errors import InputError
    from postflows.doctor import APIS, DoctorReport, api_report, history_check, prefect_check
    from postflows.precheck import output_dir
    from runtime.endpoints import ConfigurationError
    from runtime.settings import Settings, get_settings

    try:
        settings = get_settings() if live else Settings()
        if live:
            output_dir(out)
    except (ConfigurationError, ValidationError) as error:
        fail("configuration error", error, EXIT_USAGE)
    except InputError as error:
        fail("refused", error, EXIT_USAGE)
    chosen = [api for api in APIS if not apis or api in {name.value for name in apis}]
    report = DoctorReport(live, [api_report(settings, api) for api in chosen], [])
    if live:
        from postflows.doctor_live import live_checks

        run_work(lambda: live_checks(settings, report.apis), progress=False)
    report.local += [history_check(settings), prefect_check(settings)]
    for line in report.lines():
        typer.echo(line)
    if live:
        path = report.write(out if out is not None else Path.cwd())
        say(f"doctor.json: {path}")
    if not report.ok:
        for line in report.failures():
            say(f"failed: {line}", style="red")
        raise typer.Exit(EXIT_FAILED)
    say("every check passed" + ("" if live else " (no request was sent to a postal API: --live asks them)"))


def register(app: typer.Typer) -> None:
    """Add ``postflows doctor`` to the command."""
    app.command("doctor")(doctor_command)
