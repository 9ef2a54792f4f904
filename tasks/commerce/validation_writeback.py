"""The Prefect step that writes an address validation's certified values back into the customer's file."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from fileio.commerce.address_input import LEAF_FIELDS, ROW, CommerceAddresses
from fileio.commerce.writeback import ValidatedRow, write_validation_writeback
from fileio.writeback.options import DEFAULT_WRITE_BACK, WriteBackOptions
from fileio.writeback.report import WrittenBack, customer_ids
from tasks.commerce.validation import CERTIFIED_PREFIX, QUALITY_COLUMN, STATUS_COLUMN, ValidationTable


def validated_rows(table: ValidationTable) -> list[ValidatedRow]:
    """The results' rows as the write-back reads them: data row, outcome, quality, changed fields, the
    answer's values and the values given."""
    frame = table.frame

    def texts(columns: list[str]) -> list[list[str | None]]:
        values = frame[columns].astype(object)
        return values.where(values.notna(), None).to_numpy().tolist()

    qualities = frame[QUALITY_COLUMN].astype(object)
    return [
        ValidatedRow(
            row=int(row),
            status=str(status),
            changed=changed,
            certified=dict(zip(LEAF_FIELDS, answered, strict=True)),
            quality=None if quality is None else str(quality),
            given=dict(zip(LEAF_FIELDS, given, strict=True)),
        )
        for row, status, quality, changed, answered, given in zip(
            frame[ROW].tolist(),
            frame[STATUS_COLUMN].tolist(),
            qualities.where(qualities.notna(), None).tolist(),
            table.changed,
            texts([CERTIFIED_PREFIX + field for field in LEAF_FIELDS]),
            texts(list(LEAF_FIELDS)),
            strict=True,
        )
    ]


@task(name="commerce-write-back", cache_policy=NO_CACHE)
async def write_back_validation(
    addresses: CommerceAddresses,
    table: ValidationTable,
    output_dir: Path,
    *,
    further: Collection[str] = (),
    options: WriteBackOptions = DEFAULT_WRITE_BACK,
) -> WrittenBack:
    """:func:`~fileio.commerce.writeback.write_validation_writeback` of the validated rows: the certified
    answers and those of the ``further`` qualities applied."""
    return await asyncio.to_thread(
        write_validation_writeback,
        addresses,
        validated_rows(table),
        output_dir,
        further=further,
        ids=customer_ids(addresses.rejected_report, addresses.records, ROW),
        options=options,
    )
