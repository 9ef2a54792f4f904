"""The Prefect step that writes the files of an address batch made for the customer's own systems."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from fileio.address_service.corrections import Corrections
from fileio.address_service.customer_files import CustomerFileOptions, CustomerFiles, write_customer_files
from tasks.address_service.steps import AddressResults, PreparedInput


@task(name="address-customer-files", cache_policy=NO_CACHE)
async def customer_files(
    prepared: PreparedInput,
    results: AddressResults,
    corrections: Corrections,
    output_dir: Path,
    options: CustomerFileOptions,
) -> CustomerFiles:
    """:func:`~fileio.address_service.customer_files.write_customer_files` of the batch: writeback.<ext>,
    writeback-skipped.csv and review.xlsx, written as ``options`` say."""
    return await asyncio.to_thread(
        write_customer_files,
        prepared.records,
        corrections,
        results.summary,
        output_dir,
        options,
        moves_file_rows=results.moves or None,
    )
