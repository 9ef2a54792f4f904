"""Prefect tasks around the address files: preparing the upload and turning the download into results
(service fields longer than §2.3 allows flagged in the rows' ``ResultProblems``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from fileio.address_service.corrections import DEFAULT_MARKS, Corrections, classify
from fileio.address_service.field_lengths import flag_long_fields
from fileio.address_service.profile_upload import wire_format as wire_format_of
from fileio.address_service.profile_upload import write_profile_upload
from fileio.address_service.profiles import AlignmentProfile
from fileio.address_service.records import (
    RECORD_ID,
    RETURNED_COLUMN,
    AddressInput,
    AddressReading,
    read_address_file,
)
from fileio.address_service.wire import WireFormat, write_upload_file
from fileio.files import make_dirs, own_folder
from fileio.lazy import lazy_module
from fileio.limits import DOWNLOAD_MAX_BYTES, ZIP_MAX_RATIO
from fileio.rejected_rows import write_rejected
from fileio.reports import DEFAULT_CSV_STYLE, CsvStyle, markdown_table, write_csv
from tasks.address_service.batch import DownloadLimits

# The result steps' modules load when a run first builds results, not with the flow: a run's first steps
# (reading, checking and uploading the input) need none of them.
if TYPE_CHECKING:
    import pandas as pd

    from fileio.address_service import (
        downloads,
        result_charts,
        result_codes,
        result_file,
        results,
        user_results,
    )
    from fileio.address_service import moves_file as moves_reader
else:
    pd = lazy_module("pandas")
    downloads = lazy_module("fileio.address_service.downloads")
    moves_reader = lazy_module("fileio.address_service.moves_file")
    result_charts = lazy_module("fileio.address_service.result_charts")
    result_codes = lazy_module("fileio.address_service.result_codes")
    result_file = lazy_module("fileio.address_service.result_file")
    results = lazy_module("fileio.address_service.results")
    user_results = lazy_module("fileio.address_service.user_results")

logger = logging.getLogger("postflows.address_service.steps")


@dataclass
class PreparedInput:
    """The validated input: accepted records, the rejected-rows report, the street lines split into street
    and house number and, for a batch, the upload file."""

    records: AddressInput
    rejected_path: Path | None
    upload_path: Path | None = None
    house_numbers_path: Path | None = None

    @property
    def house_numbers_split(self) -> int:
        """How many street lines were split (or recognised as a P.O. box or c/o line)."""
        return len(self.records.house_numbers)

    @property
    def accepted(self) -> int:
        return len(self.records.records)

    @property
    def rejected_rows(self) -> int:
        return self.records.rejected_rows


@dataclass
class AddressResults:
    """What a batch or query run produced."""

    files: list[Path]
    summary: pd.DataFrame
    rows: int
    moves: int = 0
    extra: dict[str, int] = field(default_factory=dict)
    long_field_rows: int = 0
    """Rows with a service field longer than §2.3 allows (named in their ``ResultProblems``)."""
    corrections: Corrections | None = None
    """What the service corrected in each row, and the rows a human has to look at."""
    picture: Path | None = None
    """The QSTAT classes drawn as a PNG (in ``files`` too), linked from the markdown."""
    duplicates: dict[str, int] = field(default_factory=dict)
    """Originals (K), duplicates (F) and their groups, from Double_DSTAT (:func:`duplicate_counts`)."""

    def qstat_counts(self) -> dict[str, int]:
        return {
            str(code): int(count)
            for code, count in zip(self.summary["QSTAT"], self.summary["Count"], strict=True)
        }

    def correction_counts(self, *, rejected_rows: int) -> dict[str, Any]:
        """What the run summary records of the corrections: rows corrected, per kind, and the rows that need
        a human, the one count the JSON summary, summary.md and the review share: the result rows flagged
        for a human and the ``rejected_rows`` of the input (a person has to mend them too)."""
        if self.corrections is None:
            return {}
        return {
            "corrected_rows": self.corrections.corrected_rows(),
            "corrections": self.corrections.by_kind(),
            "needs_human": int((self.corrections.needs_human != "").sum()) + rejected_rows,
        }

    def markdown(self, title: str, *, rejected_rows: int) -> str:
        lines = [f"# {title}", "", f"- result rows: {self.rows}", f"- rejected input rows: {rejected_rows}"]
        if self.moves:
            lines.append(f"- move notifications: {self.moves}")
        counts = self.correction_counts(rejected_rows=rejected_rows)
        if counts:
            kinds = ", ".join(f"{kind} {rows}" for kind, rows in counts["corrections"].items() if rows)
            lines.append(f"- corrected rows: {counts['corrected_rows']}" + (f" ({kinds})" if kinds else ""))
            lines.append(f"- rows that need a human: {counts['needs_human']}")
        if self.duplicates.get("originals") or self.duplicates.get("duplicates"):
            found = self.duplicates
            lines.append(
                f"- duplicates (Double_DSTAT): {found['originals']} originals (K), {found['duplicates']} "
                f"duplicates (F), in {found['groups']} groups"
            )
        if self.long_field_rows:
            lines.append(
                f"- rows with a field longer than the specification allows: {self.long_field_rows} "
                "(see ResultProblems)"
            )
        lines += ["", "## QSTAT", "", markdown_table(self.summary)]
        # The picture beside summary.md, linked by its name; the artifact, which cannot show a file from
        # disk, leaves the link out (RunSummary.publish) and keeps the bars.
        picture = None if self.picture is None else self.picture.name
        lines += ["", "## QSTAT classes", "", result_charts.qstat_markdown(self.summary, picture=picture)]
        return "\n".join(lines)


@dataclass(frozen=True)
class UploadLayout:
    """How the upload file is laid out: as an agreed alignment ``profile`` has it (exactly its columns and
    layout, ``profile_map`` filling its pass-through slots:
    :func:`~fileio.address_service.profile_upload.write_profile_upload`), else in ``wire_format``."""

    wire_format: WireFormat = WireFormat()
    profile: AlignmentProfile | None = None
    profile_map: Mapping[str, str] | None = None

    @property
    def wire(self) -> WireFormat:
        """The upload's format: the profile's, else ``wire_format``."""
        return wire_format_of(self.profile) if self.profile is not None else self.wire_format

    @property
    def id_columns(self) -> tuple[str, ...]:
        """The columns that carry the record id out and back with a profile (they name rejected rows)."""
        profile = self.profile
        return (profile.upload.record_id, profile.result_record_id) if profile is not None else ()


@dataclass(frozen=True)
class ResultOptions:
    """How the results are made and written.

    Attributes:
        csv_style: how the CSV files are written (see :func:`write_address_results`).
        profile: the alignment profile that laid the upload out: results are merged by its record id and
            its uploaded columns.
        correction_marks: how the service marks a correction (see :func:`classify`).
        sandbox: the workbook opens with the sandbox banner (:mod:`fileio.sandbox_marks`).
    """

    csv_style: CsvStyle = DEFAULT_CSV_STYLE
    profile: AlignmentProfile | None = None
    correction_marks: str = DEFAULT_MARKS
    sandbox: bool = False


DEFAULT_DOWNLOAD_LIMITS = DownloadLimits(max_bytes=DOWNLOAD_MAX_BYTES, zip_max_ratio=ZIP_MAX_RATIO)


def prepare_address_input(
    input_path: Path,
    output_dir: Path,
    reading: AddressReading | None = None,
    *,
    upload: UploadLayout = UploadLayout(),
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
) -> PreparedInput:
    """Read and check the input as ``reading`` says (by default: its format detected, the batch rule);
    write rejected.csv, house-numbers.csv (the street lines split into street and house number, when any
    were) and, but for a query, the upload file laid out as ``upload`` says.

    ``csv_style`` is how rejected.csv and house-numbers.csv are written: their dialect and the formula guard
    (the ``POSTFLOWS_CSV_DIALECT`` and ``POSTFLOWS_CSV_FORMULA_GUARD`` settings). rejected.csv names a row by
    the input's id column: a column named as the profile's record id, else a customer number, else the
    first column (:func:`fileio.rejected_rows.id_column`). A file over ``reading.limits`` is refused before
    it is read (:func:`fileio.tables.read_table`).
    """
    make_dirs(output_dir)
    reading = reading or AddressReading()
    wire = upload.wire
    records = read_address_file(
        input_path, reading, wire_encoding=wire.encoding, id_columns=upload.id_columns
    )
    rejected_path = write_rejected(records.rejected_report, output_dir / "rejected.csv", style=csv_style)
    prepared = PreparedInput(records=records, rejected_path=rejected_path)
    if len(records.house_numbers):
        prepared.house_numbers_path = write_csv(
            records.house_numbers_report, output_dir / "house-numbers.csv", style=csv_style
        )
    if reading.mode != "query" and prepared.accepted:
        path = output_dir / "upload.txt"
        if upload.profile is not None:
            prepared.upload_path = write_profile_upload(
                records, upload.profile, path, extra=upload.profile_map
            )
        else:
            prepared.upload_path = write_upload_file(records, path, wire)
    return prepared


def build_address_results(
    prepared: PreparedInput,
    download: Path,
    output_dir: Path,
    *,
    limits: DownloadLimits = DEFAULT_DOWNLOAD_LIMITS,
    options: ResultOptions = ResultOptions(),
    moves_file: Path | None = None,
) -> AddressResults:
    """Parse and decode the downloaded file; write results.csv, results.xlsx and moves when present, as
    ``options`` says.

    ``moves_file``: the move notifications when the alignment writes them to an extra output of their own
    (otherwise they are read from the download).

    A ZIP download is unpacked within ``limits.max_bytes`` and ``limits.zip_max_ratio`` (see
    :func:`unpack_download`); the result and moves files are read within ``limits.tables`` (see
    :func:`read_result_file`).

    Raises:
        ResultFileError: the download cannot be unpacked or read, or no result row matches an uploaded row.
        ResultUnreadable: the result or moves file is over a limit (the download stays as it is).
    """
    files = downloads.unpack_download(
        download,
        own_folder(output_dir / "download"),
        max_bytes=limits.max_bytes,
        max_ratio=limits.zip_max_ratio,
    )
    decoded = result_codes.decode_results(result_file.read_result_file(files.result, limits=limits.tables))
    moves_path = moves_file or files.moves
    moves = moves_reader.read_moves_file(moves_path, limits=limits.tables) if moves_path is not None else None
    return _write(prepared, decoded, output_dir, moves, source=files.result, options=options)


def build_address_query_results(
    prepared: PreparedInput,
    answers: pd.DataFrame,
    output_dir: Path,
    *,
    options: ResultOptions = ResultOptions(),
) -> AddressResults:
    """Decode the individual-query answers (one row per RecordId) and write the same result files."""
    answers = answers.set_axis(result_file.result_headers([str(c) for c in answers.columns]), axis=1)
    return _write(prepared, result_codes.decode_results(answers), output_dir, None, options=options)


# The steps run as async tasks whose work goes to a worker thread: inside the async flows an async task costs
# Prefect's engine a fraction of what a sync one does (no client of its own, no second look-up of the
# result storage), and the event loop goes on meanwhile.


@task(name="address-prepare-input", cache_policy=NO_CACHE)
async def prepare_input(
    input_path: Path,
    output_dir: Path,
    reading: AddressReading | None = None,
    *,
    upload: UploadLayout = UploadLayout(),
    csv_style: CsvStyle = DEFAULT_CSV_STYLE,
) -> PreparedInput:
    """:func:`prepare_address_input` as a task."""
    return await asyncio.to_thread(
        prepare_address_input, input_path, output_dir, reading, upload=upload, csv_style=csv_style
    )


@task(name="address-build-results", cache_policy=NO_CACHE)
async def build_results(
    prepared: PreparedInput,
    download: Path,
    output_dir: Path,
    *,
    limits: DownloadLimits = DEFAULT_DOWNLOAD_LIMITS,
    options: ResultOptions = ResultOptions(),
    moves_file: Path | None = None,
) -> AddressResults:
    """:func:`build_address_results` as a task."""
    return await asyncio.to_thread(
        build_address_results,
        prepared,
        download,
        output_dir,
        limits=limits,
        options=options,
        moves_file=moves_file,
    )


@task(name="address-build-query-results", cache_policy=NO_CACHE)
async def build_query_results(
    prepared: PreparedInput,
    answers: pd.DataFrame,
    output_dir: Path,
    *,
    options: ResultOptions = ResultOptions(),
) -> AddressResults:
    """:func:`build_address_query_results` as a task."""
    return await asyncio.to_thread(
        build_address_query_results, prepared, answers, output_dir, options=options
    )


def _write(
    prepared: PreparedInput,
    decoded: pd.DataFrame,
    output_dir: Path,
    moves: pd.DataFrame | None,
    *,
    source: Path | None = None,
    options: ResultOptions,
) -> AddressResults:
    profile = options.profile
    if profile is None:
        merged = results.merge_results(prepared.records, decoded, source=source)
    else:
        merged = results.merge_results(
            prepared.records,
            decoded,
            source=source,
            record_id=profile.result_record_id,
            uploaded_columns=profile.upload.columns,
        )
    merged, long_field_rows = flag_long_fields(merged, after=RETURNED_COLUMN)
    if long_field_rows:
        logger.warning(
            "%d result rows hold a field longer than the specification allows (see ResultProblems)",
            long_field_rows,
        )
    summary = result_codes.qstat_summary(merged)
    corrections = classify(merged, marks=options.correction_marks)
    if moves is not None:
        record_id = RECORD_ID if profile is None else profile.upload.record_id
        moves = user_results.user_moves(moves, prepared.records, record_id=record_id)
    files = results.write_address_results(
        user_results.user_results(merged, prepared.records),
        summary,
        output_dir,
        moves=moves,
        csv_style=options.csv_style,
        corrections=corrections.by_kind(),
        sandbox=options.sandbox,
    )
    picture = result_charts.write_qstat_picture(output_dir / result_charts.PICTURE_FILE, summary)
    return AddressResults(
        files=[*files, picture],
        summary=summary,
        rows=len(merged),
        moves=0 if moves is None else len(moves),
        long_field_rows=long_field_rows,
        corrections=corrections,
        picture=picture,
        duplicates=result_codes.duplicate_counts(merged),
    )
