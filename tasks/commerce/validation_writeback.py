"""The Prefect step that writes an address validation's certified values back into the customer's file."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from fileio.commerce.address_input import LEAF_FIELDS, ROW, CommerceAddresses
from fileio.commerce.writeback import ValidatedRow, write_validation_writeback
from fileio.limits import TABLE_LIMITS, TableLimits
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle
from fileio.writeback.report import WrittenBack
from fileio.writeback_policy import Policy
from tasks.commerce.validation import CERTIFIED_PREFIX, STATUS_COLUMN, ValidationTable


def validated_rows(table: ValidationTable) -> list[ValidatedRow]:
    """The results' rows as the write-back reads them: data row, outcome, changed fields, certified values."""
    frame = table.frame
    certified = frame[[CERTIFIED_PREFIX + field for field in LEAF_FIELDS]].astype(object)
    certified = certified.where(certified.notna(), None)
    return [
        ValidatedRow(
            row=int(row),
            status=str(status),
            changed=changed,
            certified=dict(zip(LEAF_FIELDS, values, strict=True)),
        )
        for row, status, changed, values in zip(
            frame[ROW].tolist(),
            frame[STATUS_COLUMN].tolist(),
            table.changed,
            certified.to_numpy().tolist(),
            strict=True,
        )
    ]


@task(name="commerce-write-back", cache_policy=NO_CACHE)
async def write_back_validation(
    addresses: CommerceAddresses,
    table: ValidationTable,
    output_dir: Path,
    *,
    policy: Policy,
    limits: TableLimits = TABLE_LIMITS,
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
    sandbox: bool = False,
) -> WrittenBack:
    """:func:`~fileio.commerce.writeback.write_validation_writeback` of the validated rows."""
    return await asyncio.to_thread(
        write_validation_writeback,
        addresses,
        validated_rows(table),
        output_dir,
        policy=policy,
        limits=limits,
        csv_style=csv_style,
        sandbox=sandbox,
    )
