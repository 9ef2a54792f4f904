"""Individual address queries (runquery2) for every row of a file, with the same result files as a batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from flows.runs import recorded_run
from postflows.settings import get_settings
from postflows.wiring import address_service_client
from tasks.address_service.query import ERROR_COLUMN, SendCounter, run_queries
from tasks.address_service.steps import InputFormat, build_query_results, prepare_input
from tasks.errors import InputError

FLOW_NAME = "address-query"


@flow(name=FLOW_NAME)
async def address_query(
    input_path: Path,
    output_dir: Path,
    concurrency: int = 8,
    timeout_ms: int = 10000,
    billing_reference: str | None = None,
    column_mapping: dict[str, str] | None = None,
    input_delimiter: str | None = None,
    input_encoding: str | None = None,
    input_sheet: str | None = None,
    fixed_widths: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Check every address of a file with an individual query (runquery2).

    Rows failing the input checks go to rejected.csv; the others are queried with bounded concurrency,
    slowing down when the service reports its per-minute limit. A row whose query fails keeps its place in
    the results with the reason in the QueryError column.

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

    Returns:
        The run summary: run id, row counts, QSTAT counts, failed queries and the files written.
    """
    settings = get_settings()
    input_path, output_dir = Path(input_path), Path(output_dir)
    if not input_path.is_file():
        raise InputError("input file not found", path=input_path)
    parameters = {
        "input_path": input_path,
        "output_dir": output_dir,
        "concurrency": concurrency,
        "billing_reference": billing_reference,
        "column_mapping": column_mapping,
    }
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=None, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with recorder.step("prepare input"):
            prepared = prepare_input(
                input_path,
                output_dir,
                mode="query",
                mapping=column_mapping,
                input_format=InputFormat.of(
                    delimiter=input_delimiter,
                    encoding=input_encoding,
                    sheet=input_sheet,
                    fixed_widths=fixed_widths,
                ),
                formula_guard=settings.csv_formula_guard,
            )
        summary.update(accepted_rows=prepared.accepted, rejected_rows=prepared.rejected_rows)
        if prepared.rejected_path is not None:
            await recorder.document("rejected-rows", prepared.rejected_path)
        if not prepared.accepted:
            raise InputError(f"no row passed the input checks; see {prepared.rejected_path}", path=input_path)
        sends = SendCounter()
        async with address_service_client(settings, request_log=sends) as client:
            answers = await run_queries(
                client,
                prepared.records.records,
                key=settings.address_service_query_key,
                concurrency=concurrency,
                timeout_ms=timeout_ms,
                billing_reference=billing_reference,
            )
        failed = int(answers[ERROR_COLUMN].notna().sum())
        for message in answers.loc[answers[ERROR_COLUMN].notna(), ERROR_COLUMN].unique()[:20]:
            await recorder.message("error", "runquery2", str(message))
        await recorder.message("info", "runquery2", sends.describe())
        results = build_query_results(prepared, answers, output_dir, formula_guard=settings.csv_formula_guard)
        for path in results.files:
            await recorder.document(path.stem, path)
        summary.update(
            result_rows=results.rows,
            failed_queries=failed,
            query_sends=sends.total,
            qstat=results.qstat_counts(),
        )
        report = results.markdown(f"Address queries {input_path.name}", rejected_rows=prepared.rejected_rows)
        report += f"\n\nFailed queries: {failed}\n"
        await summary.publish(report, output_dir, description="QSTAT summary")
        get_run_logger().info("address queries done: %d rows, %d failed", results.rows, failed)
        return dict(summary)
