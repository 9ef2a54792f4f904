"""The upload file sent to the address service: by default tab-separated, CRLF, Windows-1252, with a header
row; delimiter, encoding, line ending and a fixed-width layout are configurable to match the agreed alignment.

Column order: the record id, the customer's pass-through columns as given, then the §2.3 address columns
present (header names exactly as in §2.3). Fields are never quoted: a delimiter, carriage return or line feed
inside a value is replaced by a space, because the service splits on the delimiter alone. Nothing else is
changed; a value the encoding cannot carry is an error, not a replacement character.
"""

from __future__ import annotations

import codecs
import csv
import re
from dataclasses import dataclass
from functools import reduce
from operator import add
from pathlib import Path
from typing import TYPE_CHECKING

from connectors.address_service.codes import ADDRESS_FIELD_NAMES
from fileio.address_service.record_checks import unencodable
from fileio.address_service.records import RECORD_ID, AddressInput
from fileio.errors import InputError
from fileio.files import atomic_path
from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")
    pc = lazy_module("pyarrow.compute")


@dataclass(frozen=True)
class WireFormat:
    """How the upload file is laid out; the defaults are the service's usual alignment."""

    delimiter: str = "\t"
    encoding: str = "cp1252"
    line_terminator: str = "\r\n"
    header: bool = True
    fixed_widths: tuple[tuple[str, int], ...] | None = None
    record_id_column: str = RECORD_ID


def upload_columns(input: AddressInput) -> list[str]:
    """The columns of ``input.records`` in upload order: RecordId, pass-through, §2.3 address fields."""
    address = [name for name in ADDRESS_FIELD_NAMES if name in input.records.columns]
    return [RECORD_ID, *input.passthrough_columns, *address]


def write_upload_file(input: AddressInput, path: Path, fmt: WireFormat = WireFormat()) -> Path:
    """Write the accepted records as the file to upload (atomically) and return its path.

    Raises:
        InputError: a value cannot be written in ``fmt.encoding`` or is wider than its fixed-width column.
        ValueError: a fixed-width layout leaves out a column that would be sent, or the record id.
    """
    frame = input.records[upload_columns(input)].rename(columns={RECORD_ID: fmt.record_id_column})
    return write_frame(frame, input.source, path, fmt)


def write_frame(frame: pd.DataFrame, source: Path, path: Path, fmt: WireFormat) -> Path:
    """Write ``frame`` (its columns in upload order, the record id among them) as the upload file.

    Raises:
        InputError: a value cannot be written in ``fmt.encoding`` or is wider than its fixed-width column
            (naming ``source``, the row and the field).
        ValueError: a fixed-width layout leaves out a column that would be sent, or the record id.
    """
    if fmt.fixed_widths:
        return _write_fixed_width(frame, source, path, fmt)
    try:
        data = _delimited_bytes(frame, fmt)
    except UnicodeEncodeError as exc:
        raise _encoding_error(frame, source, fmt) from exc
    if data is None:
        return write_with_csv_module(frame, source, path, fmt)
    with atomic_path(path) as temporary:
        temporary.write_bytes(data)
    return path


def write_with_csv_module(frame: pd.DataFrame, source: Path, path: Path, fmt: WireFormat) -> Path:
    """Write a delimited upload file with ``DataFrame.to_csv`` (the csv module): for the frames and formats
    the Arrow path leaves out, and the reference its bytes are tested against.

    Raises:
        InputError: a value cannot be written in ``fmt.encoding``.
    """
    try:
        try:
            _write_delimited(frame, path, fmt)
        except csv.Error:
            # Unquoted CSV cannot carry a value holding the delimiter or a line break (the writer refuses
            # it): replace those by spaces and write again. Letting the writer find them is far cheaper
            # than searching every value of every column beforehand.
            _write_delimited(sanitize_fields(frame, fmt.delimiter), path, fmt)
    except UnicodeEncodeError as exc:
        raise _encoding_error(frame, source, fmt) from exc
    return path


def _delimited_bytes(frame: pd.DataFrame, fmt: WireFormat) -> bytes | None:
    """The upload file's bytes built column-wise with Arrow: the bytes ``DataFrame.to_csv`` writes (unquoted,
    the delimiter, CR and LF inside text replaced by spaces), several times faster. None when the frame or
    the format is one this does not cover (a column other than text or integers, a line end other than CR
    and LF, a header holding the delimiter); :func:`_write_delimited` writes those.

    Raises:
        UnicodeEncodeError: a value cannot be written in ``fmt.encoding``.
    """
    forbidden = {fmt.delimiter, "\r", "\n"}
    if len(fmt.delimiter) != 1 or not set(fmt.line_terminator) <= {"\r", "\n"} or not fmt.line_terminator:
        return None
    names = [str(column) for column in frame.columns]
    if any(character in name for name in names for character in forbidden):
        return None
    columns = [_wire_column(frame[column]) for column in frame.columns]
    if not columns or any(column is None for column in columns):
        return None
    texts = _sanitized([column for column in columns if column is not None], fmt)
    # The line end goes onto the last column, then one join builds the lines.
    empty, terminator = pa.scalar("", pa.large_string()), pa.scalar(fmt.line_terminator, pa.large_string())
    texts[-1] = pc.binary_join_element_wise(texts[-1], empty, terminator)
    delimiter = pa.scalar(fmt.delimiter, type=pa.large_string())
    lines = pc.binary_join_element_wise(*texts, delimiter) if len(texts) > 1 else texts[0]
    body = np.concatenate([np.zeros(0, dtype=np.uint8), *(_value_bytes(chunk) for chunk in lines.chunks)])
    header = (fmt.delimiter.join(names) + fmt.line_terminator if fmt.header else "").encode(fmt.encoding)
    if codecs.lookup(fmt.encoding).name in ("utf-8", "utf-8-sig"):
        return header + body.tobytes()
    return header + body.tobytes().decode("utf-8").encode(fmt.encoding)


def _sanitized(columns: list[pa.ChunkedArray], fmt: WireFormat) -> list[pa.ChunkedArray]:
    """The columns with the delimiter, CR and LF replaced by spaces, when one holds a character the csv
    writer would have to escape (the delimiter or one of the line end): what :func:`sanitize_fields` does
    when the writer refuses a value."""
    escaped = {fmt.delimiter, *fmt.line_terminator}
    if not any(_holds(column, escaped) for column in columns):
        return columns
    pattern = "[" + re.escape(fmt.delimiter) + "\r\n]"
    return [
        pc.replace_substring_regex(column, pattern, " ")
        if _holds(column, {fmt.delimiter, "\r", "\n"})
        else column
        for column in columns
    ]


def _holds(column: pa.ChunkedArray, characters: set[str]) -> bool:
    """Whether a value of the column holds one of the (ASCII) characters: a byte search of its buffers."""
    for chunk in column.chunks:
        data = _value_bytes(chunk).tobytes()
        if any(character.encode() in data for character in characters):
            return True
    return False


def _value_bytes(chunk: pa.Array) -> np.ndarray:
    """A (large) string chunk's values, end to end, as a view of its data buffer."""
    if not len(chunk):
        return np.zeros(0, dtype=np.uint8)
    offsets_buffer, data_buffer = chunk.buffers()[1:3]
    offset_type = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)
    start, end = int(offsets[chunk.offset]), int(offsets[chunk.offset + len(chunk)])
    if data_buffer is None:
        return np.zeros(0, dtype=np.uint8)
    return np.frombuffer(data_buffer, dtype=np.uint8)[start:end]


def _wire_column(values: pd.Series) -> pa.ChunkedArray | None:
    """A column as Arrow text for the upload file (missing values empty), or None when it is neither text
    nor integers: those are left to ``to_csv``, whose formatting of floats and other types this does not
    copy."""
    dtype = values.dtype
    if not (
        pd.api.types.is_integer_dtype(dtype)
        or isinstance(dtype, pd.StringDtype)
        or pd.api.types.is_object_dtype(dtype)
    ):
        return None
    try:
        array = pa.array(values, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError):  # e.g. numbers among the strings of an object column
        return None
    if not (
        pa.types.is_integer(array.type)
        or pa.types.is_string(array.type)
        or pa.types.is_large_string(array.type)
        or pa.types.is_null(array.type)
    ):
        return None
    chunked = array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])
    return pc.cast(chunked, pa.large_string()).fill_null("")


def _write_delimited(frame: pd.DataFrame, path: Path, fmt: WireFormat) -> None:
    with atomic_path(path) as temporary:
        frame.to_csv(
            temporary,
            sep=fmt.delimiter,
            index=False,
            header=fmt.header,
            encoding=fmt.encoding,
            lineterminator=fmt.line_terminator,
            quoting=csv.QUOTE_NONE,
        )


def sanitize_fields(frame: pd.DataFrame, delimiter: str) -> pd.DataFrame:
    """Replace the delimiter, CR and LF inside text values by a space; columns without them are not copied."""
    pattern = re.compile("[" + re.escape(delimiter) + "\r\n]")
    forbidden = (delimiter, "\r", "\n")
    changed: dict[str, pd.Series] = {}
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_object_dtype(
            values.dtype
        ):  # text with gaps (None), perhaps numbers: only its strings change
            texts = [value for value in values if isinstance(value, str)]
            if any(character in "\x1f".join(texts) for character in forbidden):
                changed[column] = values.map(lambda v: pattern.sub(" ", v) if isinstance(v, str) else v)
        elif pd.api.types.is_string_dtype(values):
            joined = "\x1f".join(map(str, values.dropna()))
            if any(character in joined for character in forbidden):
                changed[column] = values.str.replace(pattern.pattern, " ", regex=True)
    return frame.assign(**changed) if changed else frame


def _write_fixed_width(frame: pd.DataFrame, source: Path, path: Path, fmt: WireFormat) -> Path:
    assert fmt.fixed_widths is not None
    layout = dict(fmt.fixed_widths)
    if fmt.record_id_column not in layout:
        raise ValueError(f"the fixed-width layout has no {fmt.record_id_column!r} column")
    left_out = [column for column in frame.columns if column not in layout]
    if left_out:
        raise ValueError(f"the fixed-width layout leaves out columns that would be sent: {left_out}")
    padded: list[pd.Series] = []
    for column, width in fmt.fixed_widths:
        if column in frame:
            values = frame[column].astype("string").fillna("").str.replace(r"[\r\n]", " ", regex=True)
        else:
            values = pd.Series("", index=frame.index, dtype="string")
        too_wide = (values.str.len() > width).to_numpy()
        if too_wide.any():
            first = int(too_wide.argmax())
            raise InputError(
                f"value {values.iloc[first]!r} is wider than its fixed-width column ({width})",
                path=source,
                row=int(frame[fmt.record_id_column].iloc[first]),
                field=column,
            )
        padded.append(values.str.ljust(width))
    lines = reduce(add, padded) if padded else pd.Series([], dtype="string")
    header = "".join(name[:width].ljust(width) for name, width in fmt.fixed_widths)
    text = fmt.line_terminator.join(([header] if fmt.header else []) + lines.tolist())
    try:
        data = (text + fmt.line_terminator).encode(fmt.encoding)
    except UnicodeEncodeError as exc:
        raise _encoding_error(frame, source, fmt) from exc
    with atomic_path(path) as temporary:
        temporary.write_bytes(data)
    return path


def _encoding_error(frame: pd.DataFrame, source: Path, fmt: WireFormat) -> InputError:
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_object_dtype(
            values.dtype
        ):  # text with gaps (None) or other objects: the text values
            values = values[values.map(lambda value: isinstance(value, str))]
        elif not pd.api.types.is_string_dtype(values):
            continue
        bad = unencodable(values, fmt.encoding)
        if len(bad):
            row = int(frame.loc[bad.index[0], fmt.record_id_column])
            return InputError(f"character {bad.iloc[0]} cannot be written in {fmt.encoding}", path=source,
                              row=row, field=column)  # fmt: skip
    return InputError(f"cannot be written in {fmt.encoding}", path=source)
