"""The ``postflows`` command: one sub-command per flow, plus history, sandbox, serve and demo.

Exit codes: see :mod:`postflows.cli_common`. Sub-commands of the newspaper API are registered from
:mod:`postflows.cli_newspaper`.

Each command imports what it uses where it runs: ``postflows --help`` imports Typer and little else, and an
input file refused before a flow starts never imports Prefect, pandas or SQLAlchemy
(tests/cli/test_startup.py checks both).
"""

from __future__ import annotations

import enum
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
from postflows import (
    cli_commerce,
    cli_delivery,
    cli_deploy,
    cli_doctor,
    cli_info,
    cli_newspaper,
    cli_parcels,
    cli_report,
    cli_server,
    cli_setup,
    cli_validation,
)
from postflows.cli_common import (
    EXIT_FAILED,
    EXIT_USAGE,
    fail,
    prepare_flow_run,
    print_summary,
    run_work,
    say,
)
from postflows.cli_requests import request_command

if TYPE_CHECKING:
    from postflows.settings import Settings
    from sandbox.config import SandboxConfig

app = typer.Typer(
    name="postflows",
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
    from postflows.prefect_server import start_temporary_server_early

    start_temporary_server_early()
    app()


def _settings() -> Settings:
    from postflows.settings import Settings

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

    summary = run_work(lambda: address_batch(request=request, polling=polling, output=output))
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

    print_summary(run_work(lambda: address_query(request=request, output=output)))


@app.command("autocomplete")
def autocomplete_command(
    target: Annotated[Literal["towns", "streets", "buildings"], typer.Argument(help="What to complete")],
    zip_code: Annotated[str, typer.Option("--zip", help="Postcode or its beginning")] = "",
    town: Annotated[str, typer.Option("--town", help="Town name or the beginning of one of its words")] = "",
    street: Annotated[str, typer.Option("--street", help="Street name or the beginning of a word")] = "",
    onrp: Annotated[int, typer.Option("--onrp", help="Restrict streets to this town number")] = 0,
    strid: Annotated[int, typer.Option("--strid", help="Restrict buildings to this street number")] = 0,
    house_no: Annotated[str, typer.Option("--house-no", help="House number or its beginning")] = "",
    addition: Annotated[str, typer.Option("--addition", help="House number addition")] = "",
    order: Annotated[int, typer.Option("--order", help="zipOrderMode 0, 1 or 2")] = 0,
    zip_filter_mode: Annotated[
        int,
        typer.Option(
            "--zip-filter-mode",
            min=0,
            help="zipFilterMode of autocomplete4 (the specification shows 0 and no other value's meaning)",
        ),
    ] = 0,
    version: Annotated[int, typer.Option("--version", help="autocomplete 4, 3 or 2")] = 4,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")] = False,
) -> None:
    """Auto-complete towns, streets or buildings (address assistant)."""
    from postflows.assistant import autocomplete, render_autocomplete

    result = run_work(
        lambda: autocomplete(
            target=target,
            zip_code=zip_code,
            town_name=town,
            street_name=street,
            onrp=onrp,
            strid=strid,
            house_no=house_no,
            house_no_addition=addition,
            zip_order_mode=order,
            zip_filter_mode=zip_filter_mode,
            version=version,
        ),
        progress=False,
    )
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
    from postflows.settings import get_settings

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
    from postflows.locations import history_url

    if flow is not None:
        flow = _flow_named(flow)
    url = history_url()
    if run_id is None:
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
        return
    from sqlalchemy import make_url

    import history
    from postflows.console import output_console
    from postflows.history_view import run_detail

    factory = history.session_factory(url)
    with factory() as session:
        run = history.get_run(session, run_id)
        if run is None:
            where = make_url(url).render_as_string(hide_password=True)
            say(f"no run {run_id} in {where}", style="red")
            raise typer.Exit(EXIT_FAILED)
        output_console().print(run_detail(run))


class SandboxGuesses(enum.StrEnum):
    """How a served sandbox answers where a specification shows nothing."""

    ours = "ours"
    other = "other"


@app.command("sandbox")
def sandbox_command(
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8080,
    host: Annotated[str, typer.Option(help="Interface to bind")] = "127.0.0.1",
    faults: Annotated[str | None, typer.Option(help="Fault plan: JSON/YAML text or file")] = None,
    job_seconds: Annotated[float | None, typer.Option(help="Duration of batch jobs and purchases")] = None,
    order_statuses: Annotated[
        str | None,
        typer.Option(
            help="Statuses a newspaper order goes through over its job time, comma-separated, e.g. "
            "LOADED,CONTROL,DONE [default: POSTFLOWS_SANDBOX_ORDER_STATUSES, else LOADED: it stays LOADED]"
        ),
    ] = None,
    state_dir: Annotated[
        Path | None, typer.Option(help="Where orders, jobs and files are kept [default: <data dir>/sandbox]")
    ] = None,
    memory: Annotated[bool, typer.Option("--memory", help="Keep the state in memory only")] = False,
    request_log: Annotated[
        Path | None,
        typer.Option(
            help="Append every API request to this file as a JSON line (time, method, path, API, status) "
            "[default: POSTFLOWS_SANDBOX_REQUEST_LOG, else none]"
        ),
    ] = None,
    alignment: Annotated[
        list[str] | None,
        typer.Option(
            "--alignment",
            help="KEY=FILE: the alignment agreed for a batch key, a profile YAML file (repeatable) "
            "[default: POSTFLOWS_SANDBOX_ALIGNMENTS]",
        ),
    ] = None,
    guesses: Annotated[
        SandboxGuesses | None,
        typer.Option(
            help="ours: answer as the client guesses where a specification shows nothing; other: every "
            "registered guess the other plausible way [default: POSTFLOWS_SANDBOX_GUESSES, else ours]",
        ),
    ] = None,
) -> None:
    """Serve the sandbox of the APIs over HTTP (address service under /address/REST/v1)."""
    import uvicorn

    from postflows.settings import get_settings
    from postflows.wiring import sandbox_state_dir
    from sandbox.address_service.alignments import AlignmentError, alignments_setting, parse_alignments
    from sandbox.app import create_app
    from sandbox.config import DEFAULT_ORDER_STATUSES, SandboxConfig, parse_order_statuses, with_other_answers
    from sandbox.faults import FaultPlan

    if memory and state_dir is not None:
        say("--memory and --state-dir exclude each other", style="red")
        raise typer.Exit(EXIT_USAGE)
    settings = get_settings()
    try:
        alignments = (
            parse_alignments(alignment) if alignment else alignments_setting(settings.sandbox_alignments)
        )
    except AlignmentError as error:
        say(" ".join(str(error).split()), style="red")
        raise typer.Exit(EXIT_USAGE) from None
    sequence = order_statuses if order_statuses is not None else settings.sandbox_order_statuses
    try:
        statuses = DEFAULT_ORDER_STATUSES if sequence is None else parse_order_statuses(sequence)
    except ValueError as error:
        say(f"order statuses: {error}", style="red")
        raise typer.Exit(EXIT_USAGE) from None
    config = SandboxConfig(
        job_seconds=job_seconds if job_seconds is not None else settings.sandbox_job_seconds,
        order_statuses=statuses,
        faults=FaultPlan.load(faults if faults is not None else settings.sandbox_faults),
        state_dir=None if memory else (state_dir or sandbox_state_dir(settings)),
        alignments=alignments,
        listen_host=host,
        control_token=settings.sandbox_control_token,
        request_log=request_log or settings.sandbox_request_log,
        guesses=guesses.value if guesses is not None else settings.sandbox_guesses,
    )
    config = with_other_answers(config)
    _announce_sandbox(config, host, port, settings)
    uvicorn.run(create_app(config), host=host, port=port, log_level="warning")


def _announce_sandbox(config: SandboxConfig, host: str, port: int, settings: Settings) -> None:
    """Say where a served sandbox's APIs are, with its accounts, state, log and alignments."""
    base = f"http://{host}:{port}"
    say(f"address service: {base}/address/REST/v1  (user sandbox-user / password sandbox-password)")
    say(f"newspaper API:   {base}/newspaper  (token URL {base}/auth/OAuth/token)")
    say(f"commerce API:    {base}/commerce  (auth URL {base}/auth, client sandbox-commerce-client)")
    say(f"fault plan:      {base}/_sandbox/faults  ({_control_access(host, settings)})")
    say(f"state:           {config.state_dir or 'in memory'}")
    say(f"order statuses:  {', '.join(config.order_statuses)}")
    say(f"guesses:         {config.guesses} (docs/guesses.md)")
    if config.request_log is not None:
        say(f"request log:     {config.request_log}")
    for key, agreed in config.alignments.items():
        outputs = ", ".join(agreed.outputs.values()) or "none"
        say(
            f"alignment:       {key}  ({len(agreed.upload.columns)} columns, id {agreed.upload.record_id} -> "
            f"{agreed.result_record_id}, extra outputs: {outputs})"
        )


def _control_access(host: str, settings: Settings) -> str:
    """Who may use the /_sandbox control endpoints of a sandbox on ``host``; never the token itself."""
    from sandbox.control import CONTROL_TOKEN_HEADER, TOKEN_SETTING, is_loopback

    if settings.sandbox_control_token is not None and settings.sandbox_control_token.get_secret_value():
        return f"with the {CONTROL_TOKEN_HEADER} header from {TOKEN_SETTING}" + (
            ", or none on loopback" if is_loopback(host) else ""
        )
    if is_loopback(host):
        return "loopback only"
    return f"refused: not on loopback and {TOKEN_SETTING} is not set"


@app.command("demo")
def demo_command(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output directory [default: <data dir>/demo]")
    ] = None,
) -> None:
    """Run the address batch on the bundled example file against the embedded sandbox."""
    out = out or _settings().data_dir / "demo"
    prepare_flow_run(None, out=out)
    from postflows.demo import run_demo

    run_demo(out)


@app.command("cleanup")
@request_command(CleanupRequest)
def cleanup_command(request: CleanupRequest) -> None:
    """Delete every recorded remote file of the address service not yet deleted, except the files of a
    batch job whose result is still owed (until the service's 3-month retention has passed, or --force)."""
    prepare_flow_run("address-service")
    from flows.cleanup import cleanup

    summary = run_work(lambda: cleanup(request))
    for token, kept in summary.get("kept", {}).items():
        say(f"kept {token}: batch job {kept['job']} is {kept['state']}, {kept['reason']}")
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
cli_newspaper.register(app)
cli_delivery.register(app)
cli_commerce.register(app)
cli_validation.register(app)
cli_parcels.register(app)
cli_server.register(app)
cli_info.register(app)
cli_doctor.register(app)
cli_setup.register(app)
cli_deploy.register(app)
cli_report.register(app)
