"""Which customer files we read at all: a table's file type is judged by its extension and by its first bytes,
before anything is decoded, so a Word document, a PDF or an image renamed ``.csv`` is refused by name.

Text tables are ``.csv``, ``.tsv``, ``.txt`` and ``.dat``; workbooks are ``.xlsx`` and ``.xlsm`` (a ZIP
holding ``xl/workbook.xml``). A text file must not start like a known binary format, and it holds no NUL
byte in its header line nor in more than :data:`NUL_SHARE_LIMIT` of its first :data:`SNIFF_BYTES` bytes
unless it starts with a UTF-16 byte-order mark. A single NUL in a data row is a problem of that row
(rejected with the row), not of the file.
"""

from __future__ import annotations

import codecs
import zipfile
from pathlib import Path
from typing import Literal

from fileio.errors import InputError

TEXT_SUFFIXES = (".csv", ".tsv", ".txt", ".dat")
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
SUPPORTED_SUFFIXES = (*TEXT_SUFFIXES, *EXCEL_SUFFIXES)
SNIFF_BYTES = 8192
NUL_SHARE_LIMIT = 0.05
FileKind = Literal["text", "excel"]

_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_UTF32_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
# First bytes of formats people send instead of a table, with what to call them.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF", "a PDF document"),
    (_OLE2_MAGIC, "an Office 97-2003 file (.xls or .doc) or a password-protected Office file"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"{\\rtf", "an RTF document"),
    (b"\x7fELF", "a program"),
)
# Names of extensions people try, for a clearer refusal than "unsupported".
_KNOWN_SUFFIXES = {
    ".xls": "an Excel 97-2003 workbook",
    ".xlsb": "an Excel binary workbook",
    ".ods": "an OpenDocument spreadsheet",
    ".doc": "a Word document",
    ".docx": "a Word document",
    ".odt": "an OpenDocument text",
    ".rtf": "an RTF document",
    ".pdf": "a PDF document",
    ".zip": "a ZIP archive",
    ".gz": "a gzip archive",
    ".7z": "a 7-Zip archive",
    ".rar": "a RAR archive",
    ".png": "an image",
    ".jpg": "an image",
    ".jpeg": "an image",
    ".gif": "an image",
    ".tif": "an image",
    ".tiff": "an image",
    ".heic": "an image",
    ".webp": "an image",
    ".json": "a JSON document",
    ".xml": "an XML document",
}


def check_table_file(path: Path) -> FileKind:
    """Whether a table file is read as text or as a workbook; refuses every other file before reading it.

    Raises:
        InputError: the extension is not a supported one, or the content is not what the extension says
            (the message says what the file looks like).
    """
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        known = _KNOWN_SUFFIXES.get(suffix)
        what = f"{suffix!r} ({known})" if known else repr(suffix) if suffix else "none"
        raise InputError(
            f"unsupported file type: extension {what}; supported are {', '.join(SUPPORTED_SUFFIXES)} "
            "(save the table as CSV or as an Excel .xlsx workbook)",
            path=path,
        )
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if suffix in EXCEL_SUFFIXES:
        _check_workbook(path, head)
        return "excel"
    _check_text(path, head)
    return "text"


def _check_workbook(path: Path, head: bytes) -> None:
    if not head.startswith(_ZIP_MAGIC):
        looks = _binary_kind(head) or "text (a CSV file named .xlsx?)"
        raise InputError(f"cannot be read as an Excel workbook: the file is {looks}", path=path)
    archive = _zip_kind(path)
    if archive != "an Excel workbook":
        raise InputError(f"cannot be read as an Excel workbook: the file is {archive}", path=path)


def _check_text(path: Path, head: bytes) -> None:
    if head.startswith(_ZIP_MAGIC):
        archive = _zip_kind(path)
        hint = "; save it as .xlsx" if archive == "an Excel workbook" else ""
        raise InputError(f"is not a text table: the file is {archive}{hint}", path=path)
    looks = _binary_kind(head)
    if looks is not None:
        raise InputError(f"is not a text table: the file is {looks}", path=path)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return
    nuls = head.count(b"\x00")
    first_line = head.split(b"\n", 1)[0]
    if nuls and (b"\x00" in first_line or nuls > NUL_SHARE_LIMIT * len(head)):
        raise InputError(
            f"is not a text table: {nuls} NUL bytes in the first {len(head):,} bytes — a binary file, or "
            "UTF-16 text without a byte-order mark (save it as UTF-8)",
            path=path,
        )


def _binary_kind(head: bytes) -> str | None:
    if head.startswith(_UTF32_BOMS):
        return "UTF-32 text (save it as UTF-8)"
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if head[4:8] == b"ftyp":
        return "an image or video (ISO media, e.g. HEIC)"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "a WebP image"
    return None


def _zip_kind(path: Path) -> str:
    """What a ZIP-based file is, by the names of its members (the central directory only is read)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, NotImplementedError, ValueError, EOFError):
        # NotImplementedError: a directory entry naming a ZIP version past any real one; ValueError: a
        # member name flagged UTF-8 that is not.
        return "a damaged ZIP archive"
    if "xl/workbook.xml" in names:
        return "an Excel workbook"
    if "xl/workbook.bin" in names:
        return "an Excel binary workbook (.xlsb)"
    if "word/document.xml" in names:
        return "a Word document (.docx)"
    if any(name.startswith("ppt/") for name in names):
        return "a PowerPoint presentation"
    if "mimetype" in names and "content.xml" in names:
        return "an OpenDocument file (.ods/.odt)"
    return "a ZIP archive"
