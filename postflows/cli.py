"""The ``postflows`` command: one sub-command per flow, plus history, sandbox, serve and demo.

Exit codes: see :mod:`postflows.cli_common`. The commands of the other APIs, of the sandbox and of the
Prefect server live in modules of their own, loaded when they are asked for (:mod:`postflows.cli_lazy`).

Each command imports what it uses where it runs: ``postflows --help`` imports Typer and little else, and an
input file refused before a flow starts never imports Prefect, pandas or SQLAlchemy
(tests/cli/test_startup.py checks both).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from flows.requests import (
    BATCH_POLLING,
    AddressBatchRequest,
    AddressQueryRequest,
    CleanupRequest,
    OutputOptions,
    PollingOptions,
)
from postflows.assistant_requests import AutocompleteRequest
from postflows.cli_common import (
    EXIT_FAILED,
    fail,
    history_reached,
    prepare_flow_run,
    print_summary,
    run_flow,
    run_work,
    say,
)
from postflows.cli_lazy import LazyCommands
from postflows.cli_requests import request_command

if TYPE_CHECKING:
    from runtime.settings import Settings

app = typer.Typer(
    name="postflows",
    cls=LazyCommands,  # the commands of postflows.cli_lazy.COMMAND_MODULES load when they are asked for
    suggest_commands=False,  # LazyCommands suggests from every command
    help="Prefect pipelines for the postal address web service, newspaper and commerce APIs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Usage errors print as plain lines: a boxed message is wrapped to the terminal's width.
    rich_markup_mode=None,
)


def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version

        typer.echo(f"postflows {version('postflows')}")
        raise typer.Exit()


@app.callback()
def _global_options(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True),
    ] = False,
    csv_dialect: Annotated[
        # The names of fileio.reports.CsvDialect, which --help does not import (a test holds them equal).
        Literal["excel", "rfc4180"] | None,
        typer.Option(
            "--csv-dialect",
            help="How the CSV files are written: excel (UTF-8 with BOM, ';'-separated; the default) or "
            "rfc4180 (UTF-8 without BOM, ','-separated); overrides POSTFLOWS_CSV_DIALECT",
        ),
    ] = None,
) -> None:
    """Prefect pipelines for the postal address web service, newspaper and commerce APIs."""
    if csv_dialect is not None:
        # The setting, for this process and the flow runs it starts: every flow reads it from there.
        os.environ["POSTFLOWS_CSV_DIALECT"] = csv_dialect


def main() -> None:
    """Console-script entry point."""
    # No network beyond the configured APIs: Prefect's usage telemetry stays off unless asked for, and the
    # temporary local Prefect server gets time to start on a slow machine.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    from postflows.prefect_api import start_temporary_server_early

    start_temporary_server_early()
    app()


def _settings() -> Settings:
    from runtime.settings import Settings

    return Settings()


InputArg = Annotated[Path, typer.Argument(help="Address file: .csv, .xlsx or .txt")]
DelimiterOpt = Annotated[
    str | None, typer.Option("--delimiter", help="Input field separator (default: detected)")
]
EncodingOpt = Annotated[str | None, typer.Option("--encoding", help="Input encoding (default: detected)")]
SheetOpt = Annotated[
    str | None, typer.Option("--sheet", help="Worksheet of an .xlsx input (default: the first)")
]
WidthsOpt = Annotated[
    str | None,
    typer.Option("--fixed-widths", help="Fixed-width .txt input: NAME:WIDTH,NAME:WIDTH,… in column order"),
]
MapOpt = Annotated[
    list[str] | None,
    typer.Option("--map", help="Map a header to a field, e.g. --map Kunde=Name (repeatable)"),
]
SplitOpt = Annotated[
    bool,
    typer.Option(
        "--split/--no-split",
        help="Split a street cell holding the house number too ('Bahnhofstr. 1a') where a row has none",
    ),
]


@app.command("address-batch")
@request_command(AddressBatchRequest, BATCH_POLLING, OutputOptions)
def address_batch_command(
    request: AddressBatchRequest, polling: PollingOptions, output: OutputOptions
) -> None:
    """Align an address file with the batch alignment (upload, run, poll, download, clean up)."""
    from postflows import precheck

    prepare_flow_run(
        "address-service",
        out=output.output_dir,
        inputs=lambda settings: precheck.address_table(
            request,
            limits=settings.table_limits,
            mode="batch",
            profile=request.profile or settings.address_service.profile,
            key=settings.address_service.batch_key,
        ),
    )
    from flows.address_batch import address_batch

    summary = run_flow(lambda: address_batch(request=request, polling=polling, output=output))
    print_summary(summary)


@app.command("address-query")
@request_command(AddressQueryRequest, OutputOptions)
def address_query_command(request: AddressQueryRequest, output: OutputOptions) -> None:
    """Check every address of a file with an individual query (runquery2); every query is billed, so none
    whose answer was lost is asked again without --resubmit (exit 2 while such rows are left)."""
    from postflows import precheck

    prepare_flow_run(
        "address-service",
        out=output.output_dir,
        inputs=lambda settings: precheck.address_table(
            request, limits=settings.table_limits, mode="query", key=settings.address_service.query_key
        ),
    )
    from flows.address_query import address_query

    print_summary(run_flow(lambda: address_query(request=request, output=output)))


@app.command("autocomplete")
@request_command(AutocompleteRequest)
def autocomplete_command(
    request: AutocompleteRequest,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")] = False,
) -> None:
    """Auto-complete towns, streets or buildings (address assistant)."""
    from postflows.assistant import autocomplete, render_autocomplete

    result = run_work(lambda: autocomplete(request), progress=False)
    render_autocomplete(result, as_json=as_json)


@app.command("verify-building")
def verify_building_command(
    street: Annotated[str, typer.Option("--street", help="Street name")],
    house_no: Annotated[str, typer.Option("--house-no", help="House number")],
    zip_code: Annotated[str, typer.Option("--zip", help="Postcode")],
    town: Annotated[str, typer.Option("--town", help="Town")],
    addition: Annotated[str, typer.Option("--addition", help="House number addition")] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Check that a building exists; prints a verdict, its official spelling and house key."""
    from postflows.assistant import BuildingQuery, render_building, verify_building
    from runtime.settings import get_settings

    asked = BuildingQuery(street, house_no, zip_code, town, house_no_addition=addition)
    result = run_work(lambda: verify_building(asked), progress=False)
    render_building(result, asked, meanings=get_settings().address_service.pstat_meanings, as_json=as_json)


def _flow_named(name: str) -> str:
    """The recorded flow name a ``--flow`` value means: a command (``newspaper-sync``) or a flow name
    (``newspaper-master-data``), in any case; a name that is neither is a usage error listing them."""
    from deployments.catalog import CATALOG

    wanted = name.strip().casefold()
    for spec in CATALOG:
        if wanted in (spec.name.casefold(), spec.command.casefold()):
            return spec.name
    known = ", ".join(sorted({spec.command for spec in CATALOG} | {spec.name for spec in CATALOG}))
    raise typer.BadParameter(f"{name!r} names no flow; give one of: {known}", param_hint="--flow")


@app.command("history")
def history_command(
    run_id: Annotated[int | None, typer.Argument(help="Show this run in detail")] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many recent runs")] = 20,
    flow: Annotated[
        str | None, typer.Option(help="Only runs of this flow: its command or flow name (newspaper-sync)")
    ] = None,
    before: Annotated[
        int | None, typer.Option("--before", help="Only runs older than this run id (the next page)")
    ] = None,
) -> None:
    """List recent runs, or show one run with its steps, remote jobs and files."""
    from core.locations import history_url

    if flow is not None:
        flow = _flow_named(flow)
    url = history_url()
    with history_reached(url):
        if run_id is None:
            _list_history(url, limit=limit, flow=flow, before=before)
        else:
            _show_run(url, run_id)


def _list_history(url: str, *, limit: int, flow: str | None, before: int | None) -> None:
    # A plain text table, without rich: the list answers in about the time of ``postflows --help``.
    from postflows.run_list import list_runs
    from postflows.run_table import runs_text

    page = list_runs(url, limit=limit, flow=flow, before=before)
    typer.echo(runs_text(page.runs))
    if page.next_before is not None:
        more = f"postflows history --limit {limit} --before {page.next_before}"
        typer.echo(
            f"older runs: {more}" + (f" --flow {shlex.quote(flow)}" if flow is not None else ""), err=True
        )


def _show_run(url: str, run_id: int) -> None:
    import history
    from postflows.console import output_console
    from postflows.history_view import run_detail
    from runtime.privacy import masked_url

    factory = history.session_factory(url)
    with factory() as session:
        run = history.get_run(session, run_id)
        if run is None:
            say(f"no run {run_id} in {masked_url(url)}", style="red")
            raise typer.Exit(EXIT_FAILED)
        output_console().print(run_detail(run))


@app.command("demo")
def demo_command(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output directory [default: <data dir>/demo]")
    ] = None,
) -> None:
    """Run the address batch on the bundled example file against the embedded sandbox."""
    from postflows.cli_sandbox import require_sandbox

    require_sandbox("postflows demo")
    out = out or _settings().data_dir / "demo"
    prepare_flow_run(None, out=out)
    from postflows.demo import run_demo

    run_demo(out)


@app.command("cleanup")
@request_command(CleanupRequest)
def cleanup_command(request: CleanupRequest) -> None:
    """Delete every recorded remote file of the address service not yet deleted, except the files of a
    batch job whose result is still owed (until the service's 3-month retention has passed, or --force);
    files an earlier delete left on the service are asked for again, whatever their age."""
    prepare_flow_run("address-service")
    from flows.cleanup import cleanup

    summary = run_flow(lambda: cleanup(request))
    for token, kept in summary.kept.items():
        say(f"kept {token}: batch job {kept['job']} is {kept['state']}, {kept['reason']}")
    for token, reason in summary.not_deleted.items():
        say(f"still on the service {token}: {reason}; the next clean-up asks again", style="yellow")
    print_summary(summary)


profiles_app = typer.Typer(
    help="Alignment profiles: what was agreed with the operator for a batch key.",
    no_args_is_help=False,
    invoke_without_command=True,
    rich_markup_mode=None,
)


@profiles_app.callback()
def profiles_command(ctx: typer.Context) -> None:
    """List the built-in alignment profiles."""
    if ctx.invoked_subcommand is not None:
        return
    from fileio.address_service.profiles import BUILTIN

    for name, profile in BUILTIN.items():
        upload = profile.upload
        typer.echo(
            f"{name}\t{len(upload.columns)} columns, id {upload.record_id} → {profile.result_record_id}, "
            f"{upload.encoding}"
        )


@profiles_app.command("show")
def profiles_show_command(
    name: Annotated[str, typer.Argument(help="A built-in profile's name, or a profile file")],
) -> None:
    """Print a profile as YAML: a starting point for your own."""
    from fileio.address_service.profiles import ProfileError, load_profile

    try:
        profile = load_profile(name)
    except ProfileError as error:
        fail("error", error, error.exit_code)
    typer.echo(profile.to_yaml(), nl=False)


app.add_typer(profiles_app, name="profiles")
