"""Individual address queries (runquery2) for every row of a file, with the same result files as a batch.

Every query is billed: a re-run (same file, options and service) sends only the queries it got no answer
for, and a query whose answer was lost (uncertain) only with ``resubmit``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from fileio.address_service.records import AddressReading, minimum_input_mode
from fileio.checkpoint import RowCheckpoint
from fileio.errors import InputError
from fileio.input_format import InputFormat
from fileio.lazy import lazy_module
from flows.address_input import input_format, note_prepared_input
from flows.address_results import AddressQueryResult
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import AddressQueryRequest, OutputOptions
from flows.runs import RunSummary, begin_run, recorded_run
from history.identity import derive_key
from history.recorder import RunRecorder
from runtime.run import Run
from runtime.settings import Settings
from runtime.task_runners import fan_out_task_runner
from runtime.wiring import ConfigurationError
from tasks.address_service.billing import Billing
from tasks.address_service.ping import ping_service
from tasks.address_service.query import (
    ERROR_COLUMN,
    QueriesUncertain,
    QuerySpec,
    run_queries,
    uncertain_reasons,
    uncertain_rows,
)
from tasks.address_service.steps import (
    AddressResults,
    PreparedInput,
    ResultOptions,
    build_query_results,
    prepare_input,
)
from tasks.sending import SendCounter

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

FLOW_NAME = "address-query"


class QueryCounts(NamedTuple):
    """The rows whose query failed: refused ("not processed": the next run asks them again), and uncertain
    (maybe answered and billed: asked again only with ``resubmit``)."""

    failed: int
    uncertain: int

    @classmethod
    def of(cls, answers: pd.DataFrame) -> QueryCounts:
        uncertain = uncertain_rows(answers)
        return cls(int((answers[ERROR_COLUMN].notna() & ~uncertain).sum()), int(uncertain.sum()))


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    flow_run_name=run_name(FLOW_NAME, "request.input_path"),
    task_runner=fan_out_task_runner(),
)
async def address_query(
    request: Annotated[
        AddressQueryRequest,
        form(
            "Address queries",
            "The address file, how to read it, the billing, how many at once, and whether the uncertain rows "
            "of an earlier run are asked again.",
        ),
    ],
    output: Annotated[OutputOptions, form("Output", "Where the results go on the worker.")],
) -> AddressQueryResult:
    """Check every address of a file with an individual query (runquery2); every query is billed.

    Rows failing the input checks go to rejected.csv; the others are queried with bounded concurrency,
    slowing down when the service reports its per-minute limit. A row whose query is refused keeps its place
    in the results with the reason in the QueryError column; a re-run (same file, options and service) sends
    only the queries not answered yet. A row whose answer was lost (a dropped connection, a time-out, Status
    201-203, HTTP 5xx, an unreadable answer) may have been billed: it is "uncertain", the run fails naming
    ``resubmit``, and only ``resubmit`` asks those rows again. A street cell holding the house number too is
    split where a row has none (the rows split are listed in house-numbers.csv).

    Args:
        request: the address file, how to read it, the billing, the queries at once and their timeout, and
            whether to ask the uncertain rows of an earlier run again (check first).
        output: where results.csv, results.xlsx and rejected.csv go.

    Returns:
        The run's result: row counts, QSTAT counts, failed and uncertain queries, the files written.

    Raises:
        QueriesUncertain: rows are uncertain (results and summary written): exit code 2.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    input_path, output_dir = Path(request.input_path), Path(output.output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    _check_timeout(request, settings)
    reading = input_format(request)
    key = _work_key(run, request, settings, input_path, reading)
    parameters = _recorded_parameters(request, input_path, output_dir)
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        prepared = await _prepare(run, recorder, summary, request, reading, input_path, output_dir)
        async with run.address_service(recorder.request_log) as client:
            await ping_service(client)
        queried = await _query(run, recorder, request, prepared, key)
        return await _conclude(run, recorder, summary, prepared, queried, output_dir, title=input_path.name)


@dataclass(frozen=True)
class Queried:
    """What the queries gave: an answer (or the error) per accepted row, the queries sent, the checkpoint
    that keeps the answers for a re-run, and the rows whose query was refused or is uncertain."""

    answers: pd.DataFrame
    sends: SendCounter
    checkpoint: RowCheckpoint
    counts: QueryCounts


async def _prepare(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    request: AddressQueryRequest,
    reading: InputFormat,
    input_path: Path,
    output_dir: Path,
) -> PreparedInput:
    """The "prepare input" step: read and check the rows; fails when no row passed."""
    settings = run.settings
    async with recorder.step("prepare input"):
        prepared = await prepare_input(
            input_path,
            output_dir,
            AddressReading(
                reading,
                mode=minimum_input_mode("query", settings.address_service.query_key),
                mapping=request.column_mapping,
                split_house_numbers=request.split_house_numbers,
                limits=settings.table_limits,
            ),
            csv_style=settings.csv_style,
        )
    await note_prepared_input(recorder, summary, prepared)
    if not prepared.accepted:
        raise InputError(f"no row passed the input checks; see {prepared.rejected_path}", path=input_path)
    return prepared


async def _conclude(
    run: Run,
    recorder: RunRecorder,
    summary: RunSummary,
    prepared: PreparedInput,
    queried: Queried,
    output_dir: Path,
    *,
    title: str,
) -> AddressQueryResult:
    """Write the results and the summary; the checkpoint goes once no row failed and none is uncertain.
    Returns the run's result.

    Raises:
        QueriesUncertain: rows are uncertain; the checkpoint keeps them for ``resubmit``.
    """
    settings = run.settings
    counts = queried.counts
    marks = settings.address_service.correction_marks
    results = await build_query_results(
        prepared,
        queried.answers,
        output_dir,
        options=ResultOptions(
            csv_style=settings.csv_style, correction_marks=marks, sandbox=recorder.outputs.sandbox
        ),
    )
    await _report(recorder, summary, results, prepared, queried, output_dir, title=title)
    get_run_logger().info("address queries done: %d rows, %d failed, %d uncertain", results.rows, *counts)
    result = summary.result(AddressQueryResult)
    if counts.uncertain:
        results_csv = str(output_dir / "results.csv")
        raise QueriesUncertain(uncertain_reasons(queried.answers), results_csv, summary=result.summary())
    if not counts.failed:
        queried.checkpoint.clear()  # done: a later run queries afresh
    return result


def _work_key(
    run: Run, request: AddressQueryRequest, settings: Settings, input_path: Path, reading: InputFormat
) -> str:
    """The key of the work: everything that changes what is sent (the file, the options marked as work, the
    query key, how the file is read, the service), never ``resubmit``; it names the checkpoint."""
    identifying = {
        **request.identity(),
        "query_key": settings.address_service.query_key,
        "input_format": reading,
    }
    return derive_key(
        FLOW_NAME, endpoint=run.endpoint("address-service"), files=(input_path,), parameters=identifying
    )


def _recorded_parameters(request: AddressQueryRequest, input_path: Path, output_dir: Path) -> dict[str, Any]:
    """The options the run history records with the run."""
    return {
        "input_path": input_path,
        "output_dir": output_dir,
        "concurrency": request.concurrency,
        "billing_reference": request.billing_reference,
        "client_identifier": request.client_identifier,
        "client_name": request.client_name,
        "column_mapping": request.column_mapping,
        "resubmit": request.resubmit,
    }


def _check_timeout(request: AddressQueryRequest, settings: Settings) -> None:
    """A query's service-side timeout must end before the HTTP timeout, or the connection gives up first."""
    if request.timeout_ms >= settings.http_timeout_s * 1000:
        raise ConfigurationError(
            f"timeout_ms: a query's timeout ({request.timeout_ms} ms) must be below the HTTP timeout "
            f"(POSTFLOWS_HTTP_TIMEOUT_S={settings.http_timeout_s:g} s), or the connection gives up before "
            "the service answers"
        )


async def _query(
    run: Run,
    recorder: RunRecorder,
    request: AddressQueryRequest,
    prepared: PreparedInput,
    key: str,
) -> Queried:
    """Query every accepted row (those the checkpoint of the work's ``key`` holds answers for are not sent
    again); the errors and the sends are recorded as the run's messages."""
    settings = run.settings
    sends = SendCounter()
    checkpoint = RowCheckpoint.for_key(settings.data_dir / "resume", key)
    answers = await run_queries(
        run.address_service,
        prepared.records.records,
        spec=QuerySpec(
            settings.address_service.query_key,
            request.timeout_ms,
            Billing(request.billing_reference, request.client_identifier, request.client_name),
        ),
        concurrency=request.concurrency,
        sends=sends,
        checkpoint=checkpoint,
        resubmit=request.resubmit,
    )
    if sends.resumed:
        recorder.note_reused("query answers", f"{sends.resumed} records from an earlier run's checkpoint")
    if sends.resubmitted:
        recorder.note_replaced("uncertain queries", f"{sends.resubmitted} records asked again (--resubmit)")
    for message in answers.loc[answers[ERROR_COLUMN].notna(), ERROR_COLUMN].unique()[:20]:
        await recorder.message("error", "runquery2", str(message))
    await recorder.message("info", "runquery2", sends.describe())
    return Queried(answers, sends, checkpoint, QueryCounts.of(answers))


async def _report(
    recorder: RunRecorder,
    summary: RunSummary,
    results: AddressResults,
    prepared: PreparedInput,
    queried: Queried,
    output_dir: Path,
    *,
    title: str,
) -> None:
    """Record the result files, count the answers into the summary and publish summary.md under the
    ``title`` (the input file's name)."""
    sends, counts = queried.sends, queried.counts
    await recorder.documents((path.stem, path) for path in results.files)
    summary.update(
        result_rows=results.rows,
        failed_queries=counts.failed,
        uncertain_rows=counts.uncertain,
        query_sends=sends.total,
        resumed_rows=sends.resumed,
        resubmitted_rows=sends.resubmitted,
        qstat=results.qstat_counts(),
        duplicates=results.duplicates,
        **results.correction_counts(rejected_rows=prepared.rejected_rows),
    )
    report = results.markdown(f"Address queries {title}", rejected_rows=prepared.rejected_rows)
    report += f"\n\nFailed queries: {counts.failed}\n"
    if counts.failed:
        report += "Running the same command again sends only the failed queries.\n"
    report += f"\nUncertain rows: {counts.uncertain}\n"
    if counts.uncertain:
        report += (
            "Their query was sent, but no answer proves that it was not processed: it may have been "
            "answered and billed. They are not asked again on their own (QueryError in results.csv says "
            "why); check, then run the same command again with --resubmit to ask those rows again.\n"
        )
    await summary.publish(report, output_dir, description="QSTAT summary")
