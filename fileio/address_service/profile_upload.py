"""The upload file of an agreed alignment: exactly the profile's columns in its order, nothing else.

Data minimisation: only the profile's columns leave this machine. The id sent is ours (the data row number),
never the customer's; the customer's other columns stay here and are merged back by that id. A column the
profile names with no address field of ours (a pass-through slot, ``Floor_in``) is sent empty unless the user
maps an input column to it. A house number such as ``7b`` is split into number and addition when the profile
has both columns and the input only one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.address_service.profiles import AlignmentProfile
from fileio.address_service.records import RECORD_ID, AddressInput
from fileio.address_service.wire import WireFormat, write_frame
from fileio.errors import InputError
from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

HOUSE_NUMBER = r"^\s*(?P<number>\d+)\s*(?P<addition>\S.*?)?\s*$"


def wire_format(profile: AlignmentProfile) -> WireFormat:
    """The profile's upload layout as the writer's format."""
    upload = profile.upload
    widths = tuple(upload.fixed_widths.items()) if upload.fixed_widths else None
    return WireFormat(
        delimiter=upload.delimiter or "\t",
        encoding=upload.encoding,
        line_terminator=upload.line_ending,
        header=upload.header,
        fixed_widths=widths,
        record_id_column=upload.record_id,
    )


def split_house_numbers(numbers: pd.Series) -> tuple[pd.Series, pd.Series]:
    """``7b``, ``7 b``, ``7-9`` → (``7``, ``b``), (``7``, ``b``), (``7``, ``-9``); a value that does not start
    with digits stays whole as the number, with no addition."""
    text = numbers.astype("string").fillna("")
    parts = text.str.extract(HOUSE_NUMBER)
    matched = parts["number"].notna()
    number = text.where(~matched, parts["number"])
    addition = parts["addition"].fillna("").where(matched, "")
    return number.astype("string"), addition.astype("string")


def profile_frame(
    input: AddressInput, profile: AlignmentProfile, *, extra: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """The rows to upload, with exactly the profile's columns in its order.

    Args:
        input: the accepted records (``RecordId`` and the canonical address fields).
        profile: the agreed alignment.
        extra: profile column → input column, for columns with no address field (pass-through slots).

    Raises:
        InputError: ``extra`` names a column the profile or the input does not have.
    """
    records = input.records
    extra = dict(extra or {})
    for column, source in extra.items():
        if column not in profile.upload.columns:
            raise InputError(
                f"--map names {column!r}, which is not a column of profile {profile.name}", path=input.source
            )
        if source not in records.columns:
            raise InputError(
                f"--map names input column {source!r}, which the file does not have", path=input.source
            )
    fields = profile.fields()
    empty = pd.Series("", index=records.index, dtype="string")
    values: dict[str, pd.Series] = {}
    for column in profile.upload.columns:
        if column == profile.upload.record_id:
            values[column] = records[RECORD_ID].astype("string")
        elif column in extra:
            # The reader already rejected rows whose customer fields pass the §2.3 length.
            values[column] = records[extra[column]].astype("string").fillna("")
        elif (field := fields.get(column)) is not None and field in records.columns:
            values[column] = records[field].astype("string").fillna("")
        else:
            values[column] = empty
    _split_where_agreed(values, fields, records)
    return pd.DataFrame(values, index=records.index)


def _split_where_agreed(
    values: dict[str, pd.Series], fields: Mapping[str, str], records: pd.DataFrame
) -> None:
    by_field = {field: column for column, field in fields.items()}
    number_column, addition_column = by_field.get("HouseNo"), by_field.get("HouseNoAddition")
    if number_column is None or addition_column is None:
        return
    given = records.get("HouseNoAddition")
    if given is not None and given.fillna("").astype(str).str.strip().ne("").any():
        return
    values[number_column], values[addition_column] = split_house_numbers(values[number_column])


def write_profile_upload(
    input: AddressInput, profile: AlignmentProfile, path: Path, *, extra: Mapping[str, str] | None = None
) -> Path:
    """Write the upload file of ``profile`` for the accepted records (atomically); see :func:`profile_frame`.

    Raises:
        InputError: a value cannot be written in the profile's encoding or is wider than its fixed width.

    A house number split for the upload is split in ``input.records`` too, so the results show the input
    address as it was sent.
    """
    frame = profile_frame(input, profile, extra=extra)
    by_field = {field: column for column, field in profile.fields().items()}
    number, addition = by_field.get("HouseNo"), by_field.get("HouseNoAddition")
    if number is not None and addition is not None:
        # What was sent is the input address the results show beside the corrected one.
        input.records["HouseNo"] = frame[number]
        input.records["HouseNoAddition"] = frame[addition]
    write_frame(frame, input.source, path, wire_format(profile))
    check_upload(path, profile)
    return path


def check_upload(path: Path, profile: AlignmentProfile) -> None:
    """Read the written upload back and check it against the profile before anything is sent: encoding,
    no byte-order mark, line endings, the header, and the number of fields of every row.

    Raises:
        InputError: the file breaks the agreed layout (naming the line).
    """
    upload = profile.upload
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        raise InputError(
            "the upload starts with a byte-order mark, which the alignment does not expect", path=path
        )
    try:
        text = data.decode(upload.encoding)
    except UnicodeDecodeError as error:
        raise InputError(f"the upload is not {upload.encoding} at byte {error.start}", path=path) from None
    lines = text.split(upload.line_ending)
    if lines and lines[-1] == "":
        lines.pop()
    if any("\r" in line or "\n" in line for line in lines):
        raise InputError(f"the upload has line endings other than {upload.line_ending!r}", path=path)
    if upload.fixed_widths is not None:
        width = sum(upload.fixed_widths.values())
        wrong = next((n for n, line in enumerate(lines, start=1) if len(line) != width), None)
        if wrong is not None:
            raise InputError(f"line {wrong} of the upload is not {width} characters wide", path=path)
        return
    assert upload.delimiter is not None
    if upload.header and lines[:1] != [upload.delimiter.join(upload.columns)]:
        raise InputError("the upload's header is not the profile's columns", path=path)
    wrong = next(
        (
            n
            for n, line in enumerate(lines, start=1)
            if line.count(upload.delimiter) != len(upload.columns) - 1
        ),
        None,
    )
    if wrong is not None:
        raise InputError(f"line {wrong} of the upload does not have {len(upload.columns)} fields", path=path)
