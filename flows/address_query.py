"""Individual address queries (runquery2) for every row of a file, with the same result files as a batch.

Every query is billed: a re-run of an interrupted run (same file, options and service) sends only the queries
it got no answer for."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

from fileio.checkpoint import RowCheckpoint
from fileio.errors import InputError
from flows.address_input import prepare_recorded
from flows.forms import (
    COLUMN_MAPPING,
    FIXED_WIDTHS,
    INPUT_ENCODING,
    INPUT_SEPARATOR,
    INPUT_SHEET,
    OUTPUT_FOLDER,
    SPLIT_HOUSE_NUMBERS,
    Blank,
    Separator,
    form,
)
from flows.naming import run_name
from flows.runs import recorded_run
from history.identity import derive_key
from postflows.settings import get_settings
from postflows.task_runners import fan_out_task_runner
from postflows.wiring import address_service_client, address_service_endpoint
from tasks.address_service.query import ERROR_COLUMN, run_queries
from tasks.address_service.steps import InputFormat, build_query_results, prepare_input
from tasks.sending import SendCounter

FLOW_NAME = "address-query"


@flow(name=FLOW_NAME, flow_run_name=run_name(FLOW_NAME, "input_path"), task_runner=fan_out_task_runner())
async def address_query(
    input_path: Annotated[
        Path, form("Address file", "The address file on the worker: .csv, .xlsx or a fixed-width .txt.")
    ],
    output_dir: Annotated[Path, form("Output folder", OUTPUT_FOLDER)],
    concurrency: Annotated[
        int, form("Queries at once", "Queries in flight at the same time.", minimum=1, maximum=64)
    ] = 8,
    timeout_ms: Annotated[
        int, form("Query timeout (ms)", "The service-side timeout of one query.", minimum=1)
    ] = 10000,
    billing_reference: Annotated[
        Blank[str],
        form("Billing reference", "Bill the queries to this client (runquery2withclient).", blank=""),
    ] = None,
    column_mapping: Annotated[Blank[dict[str, str]], form("Column mapping", COLUMN_MAPPING, blank={})] = None,
    input_delimiter: Annotated[Separator, form("Input separator", INPUT_SEPARATOR, blank="")] = None,
    input_encoding: Annotated[Blank[str], form("Input encoding", INPUT_ENCODING, blank="")] = None,
    input_sheet: Annotated[Blank[str], form("Worksheet", INPUT_SHEET, blank="")] = None,
    fixed_widths: Annotated[Blank[dict[str, int]], form("Fixed widths", FIXED_WIDTHS, blank={})] = None,
    split_house_numbers: Annotated[bool, form("Split house numbers", SPLIT_HOUSE_NUMBERS)] = True,
) -> dict[str, Any]:
    """Check every address of a file with an individual query (runquery2).

    Rows failing the input checks go to rejected.csv; the others are queried with bounded concurrency,
    slowing down when the service reports its per-minute limit. A row whose query fails keeps its place in
    the results with the reason in the QueryError column. Every query is billed: a re-run of an interrupted
    run (same file, options and service) sends only the queries not answered yet.

    Args:
        input_path: the address file (.csv, .xlsx, .txt).
        output_dir: where results.csv, results.xlsx and rejected.csv go.
        concurrency: queries in flight at once.
        timeout_ms: the service-side timeout of one query.
        billing_reference: bill the queries to this client (runquery2withclient).
        column_mapping: explicit header → field mapping.
        input_delimiter: field separator of the input (detected when empty).
        input_encoding: encoding of the input (UTF-8 with or without BOM, else Windows-1252, when empty).
        input_sheet: worksheet of an .xlsx input (the first when empty).
        fixed_widths: column name → width, in order, for a fixed-width .txt input.
        split_house_numbers: split a street cell holding the house number too where a row has none (the
            rows split are listed in house-numbers.csv); False sends street cells as given.

    Returns:
        The run summary: run id, row counts, QSTAT counts, failed queries and the files written.
    """
    settings = get_settings()
    input_path, output_dir = Path(input_path), Path(output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    input_format = InputFormat.of(
        delimiter=input_delimiter, encoding=input_encoding, sheet=input_sheet, fixed_widths=fixed_widths
    )
    # Everything that changes what is sent; the key names the checkpoint of the answers received.
    identifying = {
        "query_key": settings.address_service.query_key,
        "timeout_ms": timeout_ms,
        "billing_reference": billing_reference,
        "column_mapping": column_mapping,
        "input_format": input_format,
        "split_house_numbers": split_house_numbers,
    }
    key = derive_key(
        FLOW_NAME, endpoint=address_service_endpoint(settings), files=(input_path,), parameters=identifying
    )
    parameters = {
        "input_path": input_path,
        "output_dir": output_dir,
        "concurrency": concurrency,
        "billing_reference": billing_reference,
        "column_mapping": column_mapping,
    }
    prepare = partial(
        prepare_input,
        input_path,
        output_dir,
        mode="query",
        mapping=column_mapping,
        input_format=input_format,
        csv_style=settings.csv_style,
        split_house_numbers=split_house_numbers,
        limits=settings.table_limits,
    )
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        prepared = await prepare_recorded(recorder, summary, prepare)
        if not prepared.accepted:
            raise InputError(f"no row passed the input checks; see {prepared.rejected_path}", path=input_path)
        sends = SendCounter()
        checkpoint = RowCheckpoint.for_key(settings.data_dir / "resume", key)
        answers = await run_queries(
            partial(address_service_client, settings),
            prepared.records.records,
            key=settings.address_service.query_key,
            concurrency=concurrency,
            timeout_ms=timeout_ms,
            billing_reference=billing_reference,
            sends=sends,
            checkpoint=checkpoint,
        )
        failed = int(answers[ERROR_COLUMN].notna().sum())
        if sends.resumed:
            recorder.note_reused(
                "query answers", f"{sends.resumed} records from an interrupted run's checkpoint"
            )
        for message in answers.loc[answers[ERROR_COLUMN].notna(), ERROR_COLUMN].unique()[:20]:
            await recorder.message("error", "runquery2", str(message))
        await recorder.message("info", "runquery2", sends.describe())
        results = await build_query_results(prepared, answers, output_dir, csv_style=settings.csv_style)
        for path in results.files:
            await recorder.document(path.stem, path)
        summary.update(
            result_rows=results.rows,
            failed_queries=failed,
            query_sends=sends.total,
            resumed_rows=sends.resumed,
            qstat=results.qstat_counts(),
        )
        if not failed:
            checkpoint.clear()  # done: a later run queries afresh
        report = results.markdown(f"Address queries {input_path.name}", rejected_rows=prepared.rejected_rows)
        report += f"\n\nFailed queries: {failed}\n"
        if failed:
            report += "Running the same command again sends only the failed queries.\n"
        await summary.publish(report, output_dir, description="QSTAT summary")
        get_run_logger().info("address queries done: %d rows, %d failed", results.rows, failed)
        return dict(summary)
