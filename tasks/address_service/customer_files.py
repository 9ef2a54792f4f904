"""The Prefect step that writes the files of an address batch made for the customer's own systems."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
from prefect import task
from prefect.cache_policies import NO_CACHE

from fileio.address_service.corrections import Corrections
from fileio.address_service.customer_files import WriteBack, write_customer_review, write_customer_writeback
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle
from fileio.writeback_policy import Policy
from tasks.address_service.steps import AddressResults, PreparedInput


@task(name="address-write-back", cache_policy=NO_CACHE)
async def write_back_corrections(
    prepared: PreparedInput,
    corrections: Corrections,
    output_dir: Path,
    *,
    policy: Policy,
    limits: TableLimits = TABLE_LIMITS,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
) -> WriteBack:
    """:func:`~fileio.address_service.customer_files.write_customer_writeback` of the batch's input."""
    return await asyncio.to_thread(
        write_customer_writeback,
        prepared.records,
        corrections,
        output_dir,
        policy=policy,
        limits=limits,
        csv_style=csv_style,
    )


@task(name="address-review", cache_policy=NO_CACHE)
async def write_review_workbook(
    prepared: PreparedInput,
    results: AddressResults,
    corrections: Corrections,
    output_dir: Path,
    *,
    policy: Policy,
    written: pd.DataFrame | None,
) -> Path:
    """:func:`~fileio.address_service.customer_files.write_customer_review` of the batch."""
    return await asyncio.to_thread(
        write_customer_review,
        prepared.records,
        corrections,
        results.summary,
        output_dir,
        policy=policy,
        written=written,
        moves_file_rows=results.moves or None,
    )
