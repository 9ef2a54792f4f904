"""Reading text files whose encoding and delimiter are not announced: BOM / UTF-8 / Windows-1252 detection,
delimiter sniffing, and a tolerant row reader for files with ragged rows.
"""

from __future__ import annotations

import codecs
import csv
import io
from pathlib import Path
from typing import Literal

DELIMITER_CANDIDATES = ("\t", ";", ",", "|")
_CHUNK = 1 << 20


def detect_encoding(path: Path, *, fallback: str = "cp1252") -> str:
    """The encoding of a text file: by its BOM, else UTF-8 when all of it decodes as UTF-8, else ``fallback``.

    Returns ``"utf-8-sig"`` for a UTF-8 BOM (so the BOM is dropped when decoding) and ``"utf-16"`` for a
    UTF-16 BOM (Excel's "Unicode text" export). The UTF-8 check streams the file in chunks.
    """
    with path.open("rb") as handle:
        head = handle.read(4)
        if head.startswith(codecs.BOM_UTF8):
            return "utf-8-sig"
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            return "utf-16"
        handle.seek(0)
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            while chunk := handle.read(_CHUNK):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return fallback
    return "utf-8"


def sniff_delimiter(header_line: str, candidates: tuple[str, ...] = DELIMITER_CANDIDATES) -> str | None:
    """The candidate occurring most often in a header line (ties go to the earlier candidate), or None."""
    counts = [(header_line.count(candidate), -index, candidate) for index, candidate in enumerate(candidates)]
    best = max(counts)
    return best[2] if best[0] > 0 else None


def first_line(text: str) -> str:
    """The first non-empty line of a text."""
    for line in io.StringIO(text):
        if line.strip():
            return line.rstrip("\r\n")
    return ""


def read_rows(
    text: str, delimiter: str, *, quoting: Literal[0, 1, 2, 3] = csv.QUOTE_MINIMAL
) -> list[list[str]]:
    """All rows of a delimited text as lists of strings, however many fields each row has."""
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting))
