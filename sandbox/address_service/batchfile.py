"""Batch files as the sandbox reads and writes them.

Input: a header row, then records; tab, ``;``, ``,`` or ``|`` separated (detected from the header), UTF-8
with or without BOM or Windows-1252; an .xlsx workbook (first sheet) is read too. Columns named with the
§2.3 or §2.2 ``_in`` names (any case) are aligned; all others are customer fields passed through.

Output (``result.txt``): tab-separated, CRLF, Windows-1252, a header row; the uploaded columns as uploaded,
then the §2.3 fields QSTAT .. POBoxTownName in table order, spelled as delivered files spell them. Trailing
empty fields of a row are omitted. ``moves.txt`` (maintenance only, when a row is a move with a known new
address) is tab/CRLF/Windows-1252 too: RecordNo, Name, Prename, BirthDate (column 4), Company, MoveDate,
the old and the new address, then the row's customer fields.
"""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass

from sandbox.address_service.fields import FILE_OUTPUT_NAMES, MAX_LENGTH, QUERY_OUTPUT_NAMES, input_field
from sandbox.address_service.matching import MatchResult
from sandbox.address_service.reference import Address

_DELIMITERS = ("\t", ";", ",", "|")
_ADDRESS_COLUMNS = ("StreetName", "HouseNo", "HouseNoAddition", "ZIPCode", "ZIPAddition", "TownName")
MOVES_HEADER: tuple[str, ...] = (
    "RecordNo",
    "Name",
    "Prename",
    "BirthDate",
    "Company",
    "MoveDate",
    *(f"Old{name}" for name in _ADDRESS_COLUMNS),
    *(f"New{name}" for name in _ADDRESS_COLUMNS),
    "NewCanton",
    "NewHouseKey",
)


class BatchFileError(ValueError):
    """The uploaded file cannot be read as a batch input."""


@dataclass
class BatchInput:
    """A parsed input file: the header as uploaded, the rows, and which column feeds which input field."""

    header: list[str]
    rows: list[list[str]]
    field_of_column: dict[int, str]

    def record(self, row: list[str]) -> dict[str, str]:
        """The input fields of one row (canonical names)."""
        values: dict[str, str] = {}
        for index, name in self.field_of_column.items():
            if index < len(row) and row[index].strip():
                values[name] = row[index]
        return values

    def customer_fields(self, row: list[str]) -> list[str]:
        return [
            row[i] if i < len(row) else "" for i in range(len(self.header)) if i not in self.field_of_column
        ]

    @property
    def customer_header(self) -> list[str]:
        return [name for i, name in enumerate(self.header) if i not in self.field_of_column]


def decode(content: bytes) -> str:
    """Text of an uploaded file: UTF-8 (BOM optional), else Windows-1252."""
    if content.startswith(b"\xef\xbb\xbf"):
        return content[3:].decode("utf-8")
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return content.decode("cp1252", errors="replace")


def read_batch_input(content: bytes) -> BatchInput:
    """Parse an uploaded batch input file (delimited text or .xlsx)."""
    table = _read_xlsx(content) if content.startswith(b"PK\x03\x04") else _read_delimited(decode(content))
    if not table or not any(cell.strip() for cell in table[0]):
        raise BatchFileError("the file has no header row")
    header = [cell.strip() for cell in table[0]]
    field_of_column: dict[int, str] = {}
    for index, column in enumerate(header):
        name = input_field(column)
        if name is not None and name not in field_of_column.values():
            field_of_column[index] = name
    rows = [row for row in table[1:] if any(cell.strip() for cell in row)]
    return BatchInput(header, rows, field_of_column)


def _read_delimited(text: str) -> list[list[str]]:
    first_line = text.split("\n", 1)[0]
    delimiter = max(_DELIMITERS, key=first_line.count)
    return [list(row) for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)]


def _read_xlsx(content: bytes) -> list[list[str]]:
    from openpyxl import load_workbook

    try:
        workbook = load_workbook(io.BytesIO(content), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many unrelated types for a damaged archive
        raise BatchFileError(f"unreadable workbook: {exc}") from exc
    sheet = workbook.worksheets[0]
    table = [["" if cell is None else str(cell) for cell in row] for row in sheet.iter_rows(values_only=True)]
    workbook.close()
    return table


@dataclass(frozen=True)
class OutputFormat:
    """How the output files are written: tab-delimited Windows-1252 (ours), or under the other answer of the
    guess ``address-service.output-file-layout`` pipe-delimited UTF-8."""

    delimiter: str = "\t"
    encoding: str = "cp1252"
    moves_header: tuple[str, ...] = MOVES_HEADER


def _suffixed(name: str) -> str:
    """A move file's column named the other way: ``OldStreetname`` → ``Streetname_old``."""
    for prefix in ("Old", "New"):
        if name.startswith(prefix) and name != prefix:
            return f"{name[len(prefix) :]}_{prefix.lower()}"
    return name


OURS_OUTPUT_FORMAT = OutputFormat()
# address-service.output-file-layout and address-service.move-file-layout, the other way.
OTHER_OUTPUT_FORMAT = OutputFormat("|", "utf-8", tuple(_suffixed(name) for name in MOVES_HEADER))


def write_result(
    batch: BatchInput, results: list[MatchResult], output: OutputFormat = OURS_OUTPUT_FORMAT
) -> bytes:
    """The result file for ``batch`` aligned as ``results`` (one per row)."""
    lines = [list(batch.header) + list(FILE_OUTPUT_NAMES)]
    for row, result in zip(batch.rows, results, strict=True):
        uploaded = [row[i] if i < len(row) else "" for i in range(len(batch.header))]
        produced = [_clip(name, result.output.get(name, "")) for name in QUERY_OUTPUT_NAMES]
        lines.append(_strip_trailing(uploaded + produced))
    return _encode(lines, output)


def write_moves(
    batch: BatchInput, results: list[MatchResult], output: OutputFormat = OURS_OUTPUT_FORMAT
) -> bytes | None:
    """The move file for the rows that are moves with a known new address, or None when there are none."""
    lines = _moves_lines(batch, results, output.moves_header)
    return _encode(lines, output) if len(lines) > 1 else None


def write_moves_file(batch: BatchInput, results: list[MatchResult]) -> bytes:
    """The move file as :func:`write_moves`, its header alone when there are no moves (an alignment that
    declares an output for moves always writes it)."""
    return _encode(_moves_lines(batch, results))


def empty_moves_file(batch: BatchInput) -> bytes:
    """The move file's header alone (a declared moves output of a key that reports no moves)."""
    return _encode([list(MOVES_HEADER) + batch.customer_header])


def _moves_lines(
    batch: BatchInput, results: list[MatchResult], header: tuple[str, ...] = MOVES_HEADER
) -> list[list[str]]:
    lines = [list(header) + batch.customer_header]
    for number, (row, result) in enumerate(zip(batch.rows, results, strict=True), start=1):
        if result.new_address is None or result.address is None or result.resident is None:
            continue
        resident, new = result.resident, result.new_address
        lines.append(
            [
                str(number),
                resident.name,
                resident.prename,
                resident.birthdate,
                resident.company,
                resident.valid_from,
                *_address_columns(result.address),
                *_address_columns(new),
                new.town.canton,
                str(new.building.house_key),
                *batch.customer_fields(row),
            ]
        )
    return lines


def zip_members(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _address_columns(address: Address) -> list[str]:
    town, building = address.town, address.building
    return [
        address.street.street_name,
        building.house_no,
        building.house_no_addition,
        town.zip_code,
        town.zip_addition,
        town.town_name,
    ]


def _clip(name: str, value: str) -> str:
    limit = MAX_LENGTH.get(name)
    return value[:limit] if limit else value


def _strip_trailing(cells: list[str]) -> list[str]:
    end = len(cells)
    while end > 1 and cells[end - 1] == "":
        end -= 1
    return cells[:end]


def _encode(lines: list[list[str]], output: OutputFormat = OURS_OUTPUT_FORMAT) -> bytes:
    text = "".join(
        output.delimiter.join(_cell(value, output.delimiter) for value in line) + "\r\n" for line in lines
    )
    return text.encode(output.encoding, errors="replace")


def _cell(value: str, delimiter: str = "\t") -> str:
    # A delimiter or a line break inside a value would shift columns; the service writes them as spaces.
    return value.replace(delimiter, " ").replace("\t", " ").replace("\r", " ").replace("\n", " ")
