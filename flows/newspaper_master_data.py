"""Newspaper master data sync: newspaper summary, distribution list and black list → SQL tables (upserted,
every change kept in the change log), the answers as JSON and a workbook. Without a number (the daily
schedule) every newspaper synced before is synced again, each as its own run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.errors import PostflowsError
from fileio.newspaper.outputs import summary_markdown, write_json
from fileio.reports import write_xlsx
from fileio.sandbox_marks import with_banner
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import parameter_value, run_name
from flows.requests import MasterDataRequest, OwnOutputOptions
from flows.results import RunResult
from flows.runs import begin_run, recorded_run
from flows.sweep_results import SweepResult
from history.identity import named_key
from history.recorder import RunRecorder
from runtime.run import Run
from tasks.newspaper.masterdata import (
    MasterData,
    SyncCounts,
    changes_of_run,
    fetch_master_data,
    master_data_sheets,
    store_master_data,
    synced_newspapers,
)
from tasks.newspaper.submissions import WarningLog
from tasks.retrying import run_step

FLOW_NAME = "newspaper-master-data"


class MasterDataNotSynced(PostflowsError):
    """Some newspapers of a sync of every known newspaper failed; the others were synced."""


class MasterDataResult(RunResult):
    """What a sync of one newspaper did: per table, the records added, changed, removed and unchanged; the
    changes it recorded in the change log; the API's warnings and notes on the lists the service does not
    have (a standard newspaper has no distribution or black list)."""

    newspaper_number: int
    counts: dict[str, dict[str, int]]
    changes: int
    warnings: list[str]
    notes: list[str]


class MasterDataSweepResult(SweepResult):
    """What a sync of every newspaper synced before did: the newspapers, the changes each run recorded
    (newspaper → count), the newspapers that failed (the run then fails, so a result holds none) and whether
    the answers came from the embedded sandbox."""

    newspapers: list[int]
    changes: dict[int, int]
    failed: dict[int, str]
    sandbox: bool


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(
        FLOW_NAME, lambda parameters: str(parameter_value(parameters, "request.newspaper_number") or "all")
    ),
)
async def newspaper_master_data(
    request: Annotated[
        MasterDataRequest,
        form("Newspaper", "The newspaper whose master data are synced; 0 for every one synced before."),
    ] = (
        MasterDataRequest()  # noqa: B008 - an immutable part, the form's default
    ),
    output: Annotated[
        OwnOutputOptions, form("Output", "Where the results go on the worker.")
    ] = OwnOutputOptions(),  # noqa: B008
) -> MasterDataResult | MasterDataSweepResult:
    """Synchronise one newspaper's master data into the SQL tables.

    Args:
        request: the newspaper (its distribution and black list exist for gratis newspapers only); none
            syncs every newspaper synced before, each as its own run.
        output: where the JSON answers, master-data.xlsx and summary.md go (default: data
            dir/newspaper-master-data/<number>; without a number, a sub-folder per newspaper).

    Returns:
        The run's result: counts of added, changed, removed and unchanged records per table, and files.
    """
    run = begin_run(FLOW_NAME)
    newspaper_number = request.newspaper_number
    if not newspaper_number:
        return await _sync_every_known(run, output.output_dir)
    output_dir = output.folder_or(run.settings.data_dir / "newspaper-master-data" / str(newspaper_number))
    parameters = {"newspaper_number": newspaper_number, "output_dir": output_dir}
    async with recorded_run(
        run,
        idempotency_key=named_key(f"{FLOW_NAME}:{newspaper_number}", endpoint=run.endpoint("newspaper")),
        parameters=parameters,
    ) as (recorder, summary):
        warnings = WarningLog(recorder)
        async with run.newspaper(recorder.request_log) as client:
            data = await run_step(fetch_master_data, client, newspaper_number)
        for where, warning in data.warnings:
            await warnings.add(where, [warning])
        for note in data.notes:
            await recorder.message("info", "not-available", note)
        counts, changes = await _store(run, recorder, data, output_dir)
        facts: dict[str, Any] = {"newspaper number": newspaper_number, "title": data.summary.title}
        facts.update({table: _describe(count) for table, count in counts.items()})
        facts["changes recorded"] = changes
        text = summary_markdown(
            f"Master data of newspaper {newspaper_number}", facts, warnings.lines, data.notes
        )
        summary.update(
            newspaper_number=newspaper_number,
            counts={table: vars(count) for table, count in counts.items()},
            changes=changes,
            warnings=warnings.lines,
            notes=data.notes,
        )
        await summary.publish(text, output_dir, description="Master data sync")
        get_run_logger().info("master data of newspaper %s stored", newspaper_number)
        return summary.result(MasterDataResult)


async def _store(
    run: Run, recorder: RunRecorder, data: MasterData, output_dir: Path
) -> tuple[dict[str, SyncCounts], int]:
    """Write the answers as JSON, store them in the tables and write master-data.xlsx, every file
    recorded; what the sync did per table, and the number of changes it recorded."""
    settings = run.settings
    limit = settings.download_max_bytes
    files = [write_json(output_dir, "newspaper-summary", data.summary)]
    if data.distribution is not None:
        files.append(write_json(output_dir, "distribution-list", data.distribution, max_bytes=limit))
    if data.black_list is not None:
        files.append(write_json(output_dir, "black-list", data.black_list, max_bytes=limit))
    async with recorder.step("store master data"):
        counts = await asyncio.to_thread(
            store_master_data, settings.effective_database_url, recorder.run_id, data
        )
    changes = await asyncio.to_thread(changes_of_run, settings.effective_database_url, recorder.run_id)
    sheets = with_banner(master_data_sheets(data, changes), sandbox=recorder.outputs.sandbox)
    files.append(write_xlsx(output_dir / "master-data.xlsx", sheets))
    await recorder.documents((path.stem, path) for path in files)
    return counts, len(changes)


async def _sync_every_known(run: Run, output_dir: Path | None) -> MasterDataSweepResult:
    """Sync every newspaper the tables know, each as a run of this flow; fails when one failed (after
    trying the others)."""
    logger = get_run_logger()
    numbers = await asyncio.to_thread(synced_newspapers, run.settings.effective_database_url)
    if not numbers:
        logger.warning("no newspaper synced yet: sync one by its number first, later runs keep it current")
    synced: dict[int, int] = {}
    failed: dict[int, str] = {}
    for number in numbers:
        try:
            result = await newspaper_master_data(
                request=MasterDataRequest(newspaper_number=number),
                output=OwnOutputOptions(
                    output_dir=None if output_dir is None else Path(output_dir) / str(number)
                ),
            )
        except Exception as error:  # noqa: BLE001 - one newspaper's failure must not stop the others
            failed[number] = f"{type(error).__name__}: {error}"
            logger.error("master data of newspaper %s not synced: %s", number, error)
        else:
            if isinstance(result, MasterDataResult):
                synced[number] = result.changes
    if failed:
        listed = ", ".join(str(number) for number in sorted(failed))
        raise MasterDataNotSynced(f"{len(failed)} of {len(numbers)} newspapers not synced: {listed}")
    return MasterDataSweepResult(newspapers=numbers, changes=synced, failed=failed, sandbox=run.sandbox)


def _describe(counts: SyncCounts) -> str:
    changed = f"{counts.changed} changed, {counts.removed} removed"
    return f"{counts.added} added, {changed}, {counts.unchanged} unchanged"
