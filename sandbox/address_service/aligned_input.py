"""Reading an upload for an aligned key: the file must have the agreed layout, or the job fails naming why.

Checked, in this order: a delimited or fixed-width text file (not a workbook); the agreed encoding (a UTF-8
byte order mark is allowed for UTF-8 only, and a file that is UTF-8 with non-ASCII text is refused where a
single-byte encoding was agreed); the header row (when agreed) equal to the agreed columns, name by name in
order, compared without surrounding spaces (a fixed-width header cell holds the name cut to its width);
no data line with more fields (or characters) than agreed. Line endings are taken as CRLF or LF alike.
"""

from __future__ import annotations

import csv
import io

from sandbox.address_service.alignments import AgreedUpload, SandboxAlignment
from sandbox.address_service.batchfile import BatchFileError, BatchInput

_OTHER_DELIMITERS = ("\t", ";", ",", "|")


class AlignmentMismatch(BatchFileError):
    """The upload does not have the layout agreed for its key."""


def read_aligned_input(content: bytes, key: str, alignment: SandboxAlignment) -> BatchInput:
    """Parse an upload for ``key``; the result header names the id column as the alignment's result does.

    Raises:
        AlignmentMismatch: the file breaks the agreed layout (the message names the first difference).
        BatchFileError: the file is empty.
    """
    upload = alignment.upload
    if content.startswith(b"PK\x03\x04"):
        raise _mismatch(key, "it is a workbook, the alignment agrees on a text file")
    text = _decode(content, upload.encoding, key)
    numbered = _fixed_width_rows(text, alignment, key) if upload.widths else _delimited_rows(text, alignment)
    if not numbered:
        raise BatchFileError("the file is empty")
    if upload.header:
        _check_header(numbered[0][1], alignment, key)
        numbered = numbered[1:]
    for line, row in numbered:
        if len(row) > len(upload.columns):
            raise _mismatch(
                key, f"line {line} has {len(row)} fields, the alignment has {len(upload.columns)} columns"
            )
    field_of_column: dict[int, str] = {}
    for index, column in enumerate(upload.columns):
        field = alignment.field_of(column)
        if field is not None and field not in field_of_column.values():
            field_of_column[index] = field
    header = [
        alignment.result_record_id if column == upload.record_id else column for column in upload.columns
    ]
    rows = [row for _, row in numbered if any(cell.strip() for cell in row)]
    return BatchInput(header, rows, field_of_column)


def has_agreed_header(content: bytes, alignment: SandboxAlignment) -> bool:
    """Whether the upload's first line is exactly the alignment's header, read in its encoding and with its
    delimiter or widths (how a configured key recognises an alignment it holds)."""
    upload = alignment.upload
    if not upload.header or content.startswith(b"PK\x03\x04"):
        return False
    first = content.split(b"\n", 1)[0].removesuffix(b"\r").removeprefix(b"\xef\xbb\xbf")
    text = first.decode(upload.encoding, errors="replace")
    if upload.widths:
        cells, start = [], 0
        for width in upload.widths:
            cells.append(text[start : start + width].strip())
            start += width
        agreed = [column[:width].strip() for column, width in zip(upload.columns, upload.widths, strict=True)]
        return cells == agreed and len(text.rstrip()) <= start
    cells = next(csv.reader([text], delimiter=upload.delimiter or "\t"), [])
    return [cell.strip() for cell in cells] == list(upload.columns)


def _mismatch(key: str, detail: str) -> AlignmentMismatch:
    return AlignmentMismatch(f"the file does not have the layout agreed for key {key}: {detail}")


def _decode(content: bytes, encoding: str, key: str) -> str:
    bom = content.startswith(b"\xef\xbb\xbf")
    if encoding == "utf-8":
        content = content[3:] if bom else content
    elif bom:
        raise _mismatch(key, f"it starts with a UTF-8 byte order mark, the alignment agrees on {encoding}")
    elif not encoding.startswith("utf") and not content.isascii():
        try:
            as_utf8 = content.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            character = next(c for c in as_utf8 if not c.isascii())
            line = as_utf8[: as_utf8.index(character)].count("\n") + 1
            raise _mismatch(
                key, f"it is UTF-8 ({character!r} on line {line}), the alignment agrees on {encoding}"
            )
    try:
        return content.decode(encoding)
    except UnicodeDecodeError as error:
        line = content[: error.start].count(b"\n") + 1
        byte = content[error.start]
        raise _mismatch(key, f"byte 0x{byte:02X} on line {line} is not {encoding}") from None


def _delimited_rows(text: str, alignment: SandboxAlignment) -> list[tuple[int, list[str]]]:
    delimiter = alignment.upload.delimiter or "\t"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows: list[tuple[int, list[str]]] = []
    for row in reader:
        rows.append((reader.line_num, row))
    return rows


def _fixed_width_rows(text: str, alignment: SandboxAlignment, key: str) -> list[tuple[int, list[str]]]:
    widths = alignment.upload.widths or ()
    total = sum(widths)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows: list[tuple[int, list[str]]] = []
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\r")
        if len(line.rstrip()) > total:
            raise _mismatch(
                key, f"line {number} is {len(line)} characters long, the agreed widths add up to {total}"
            )
        cells, start = [], 0
        for width in widths:
            cells.append(line[start : start + width].strip())
            start += width
        rows.append((number, cells))
    return rows


def _check_header(cells: list[str], alignment: SandboxAlignment, key: str) -> None:
    upload = alignment.upload
    found = [cell.strip() for cell in cells]
    if upload.widths:
        agreed = [column[:width].strip() for column, width in zip(upload.columns, upload.widths, strict=True)]
    else:
        agreed = list(upload.columns)
    for position, (have, want) in enumerate(zip(found, agreed, strict=False), start=1):
        if have != want:
            raise _mismatch(
                key, f"header column {position} is {have!r}, the alignment has {want!r}{_hint(cells, upload)}"
            )
    if len(found) < len(agreed):
        missing = agreed[len(found)]
        raise _mismatch(
            key,
            f"header column {len(found) + 1} {missing!r} is missing (the header has {len(found)} of "
            f"{len(agreed)} columns){_hint(cells, upload)}",
        )
    if len(found) > len(agreed):
        extra = found[len(agreed)]
        raise _mismatch(key, f"header column {len(agreed) + 1} {extra!r} is not one of the agreed columns")


def _hint(cells: list[str], upload: AgreedUpload) -> str:
    """Why a header of one cell may differ: it is separated by another character than agreed."""
    if len(cells) != 1 or upload.widths:
        return ""
    other = next((d for d in _OTHER_DELIMITERS if d != upload.delimiter and d in cells[0]), None)
    return f" (the header is separated by {other!r}, the alignment by {upload.delimiter!r})" if other else ""
