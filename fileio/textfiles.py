"""Reading text files whose encoding and delimiter are not announced: BOM / UTF-8 / Windows-1252 detection,
decoding line by line when a file mixes encodings, delimiter sniffing, and a tolerant row reader for files
with ragged rows.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # imported on first use: decoding a header needs no pandas

DELIMITER_CANDIDATES = ("\t", ";", ",", "|")
_CHUNK = 1 << 20
_UTF8_NAMES = frozenset({"utf-8", "utf-8-sig"})
# Control characters no address or customer field holds: C0 but tab, line feed and carriage return, and DEL.
CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_C0_NAMES = ("NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR",
             "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC",
             "FS", "GS", "RS", "US")  # fmt: skip
# Every byte but the control characters: what is left after deleting these from ASCII-compatible bytes is
# the control characters of the text (multi-byte UTF-8 sequences never hold a byte below 0x80).
_NOT_CONTROL_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n\r" + bytes(range(0x80, 0x100))
# Encodings whose bytes below 0x80 are always ASCII characters (no multi-byte sequence holds one).
ASCII_BYTES_ENCODINGS = frozenset(
    {"utf-8", "utf-8-sig", "cp1252", "latin-1", "iso8859-1", "iso8859-15", "ascii"}
)
# The start of a character of two to four bytes as UTF-8 writes it (a lead byte, then a continuation byte):
# Windows-1252 text almost never holds one ("Ã©" does). Only a hint: lines are then judged one by one.
_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]")


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
    """The first non-empty line of a text (lines end at ``\\n``)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        line = text[start:end]
        if line.strip():
            return line.rstrip("\r\n")
        start = end
    return ""


def read_rows(
    text: str, delimiter: str, *, quoting: Literal[0, 1, 2, 3] = csv.QUOTE_MINIMAL
) -> list[list[str]]:
    """All rows of a delimited text as lists of strings, however many fields each row has."""
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting))


@dataclass(frozen=True)
class DecodedText:
    """A file's text and the lines that could not be read in the file's encoding.

    ``bad_lines`` maps a 1-based physical line (ended by ``\\n``, ``\\r\\n`` or ``\\r``) to the problem;
    such a line is in ``text`` all the same (its undecodable bytes replaced), so the rows around it keep
    their places, and whoever reads the text rejects the row holding it.
    """

    text: str
    encoding: str
    bad_lines: dict[int, str] = field(default_factory=dict)


def decode_text(data: bytes, encoding: str | None = None, *, fallback: str = "cp1252") -> DecodedText:
    """Decode a file's bytes; a file mixing UTF-8 and Windows-1252 lines is decoded line by line.

    Without ``encoding``: a BOM decides (UTF-8 or UTF-16); else the file is UTF-8 when all of it decodes
    as UTF-8, and ``fallback`` when none of it looks like UTF-8 (no multi-byte UTF-8 character). A file
    holding both is decoded line by line: when at least as many lines are UTF-8 (with a non-ASCII
    character) as are not, it is a UTF-8 file and the lines that do not decode are bad lines; otherwise it
    is a ``fallback`` file and its UTF-8 lines are the bad ones (read as ``fallback`` they would be
    mojibake such as ``MÃ¼ller``). A given UTF-8 ``encoding`` also reports undecodable lines as bad lines;
    any other given encoding decodes the whole file or fails.

    Raises:
        UnicodeDecodeError: the file (a UTF-16 one, or one in a given or fallback single encoding) cannot
            be decoded.
    """
    if encoding is None:
        if data.startswith(codecs.BOM_UTF8):
            encoding = "utf-8-sig"
        elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            encoding = "utf-16"
    if encoding is not None and codecs.lookup(encoding).name not in _UTF8_NAMES:
        return DecodedText(data.decode(encoding), encoding)
    if encoding is not None and data.startswith(codecs.BOM_UTF8):
        encoding, data = "utf-8-sig", data[len(codecs.BOM_UTF8) :]
    try:
        return DecodedText(data.decode("utf-8"), encoding or "utf-8")
    except UnicodeDecodeError:
        if encoding is None and _UTF8_MULTIBYTE.search(data) is None:
            return DecodedText(data.decode(fallback), fallback)
    return _decode_mixed(data, encoding, fallback)


def _decode_mixed(data: bytes, encoding: str | None, fallback: str) -> DecodedText:
    """Line by line: the majority encoding wins (UTF-8 when ``encoding`` says so), the others are bad."""
    lines = data.splitlines(keepends=True)
    utf8: dict[int, str] = {}
    not_utf8: dict[int, UnicodeDecodeError] = {}
    for number, line in enumerate(lines, start=1):
        if line.isascii():
            continue
        try:
            utf8[number] = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            not_utf8[number] = exc
    if encoding is not None or len(utf8) >= len(not_utf8):
        bad = {
            number: f"not valid UTF-8 at byte {exc.start + 1} of line {number} "
            f"(0x{lines[number - 1][exc.start]:02X}); the file mixes encodings (most of it is UTF-8)"
            for number, exc in not_utf8.items()
        }
        # Replacing undecodable bytes line by line or in one go gives the same text: a UTF-8 sequence never
        # holds a line ending.
        return DecodedText(data.decode("utf-8", errors="replace"), encoding or "utf-8", bad)
    name = _encoding_name(fallback)
    bad = {
        number: f"line {number} is UTF-8 ({_first_non_ascii(text)!r}) in a file that is otherwise {name}; "
        "the file mixes encodings"
        for number, text in utf8.items()
        if _looks_like_utf8_text(text)
    }
    for number in not_utf8:
        try:
            lines[number - 1].decode(fallback)
        except UnicodeDecodeError as exc:
            byte = lines[number - 1][exc.start]
            bad[number] = f"not valid {name} at byte {exc.start + 1} of line {number} (0x{byte:02X})"
    return DecodedText(data.decode(fallback, errors="replace"), fallback, dict(sorted(bad.items())))


def _looks_like_utf8_text(text: str) -> bool:
    """Whether a line that decodes as UTF-8 reads like Western text (accented letters, typographic
    punctuation, €): only then is it UTF-8 in a Windows-1252 file. ``"ß\\xa0"`` in Windows-1252 (``ß`` and
    a no-break space) also decodes as UTF-8, to the NKo letter U+07E0, and stays a Windows-1252 line."""
    return all(char < "\x80" or "\xa0" <= char <= "\u024f" or "\u2010" <= char <= "\u20cf" for char in text)


def _first_non_ascii(text: str) -> str:
    return next((char for char in text if not char.isascii()), "")


def _encoding_name(encoding: str) -> str:
    return "Windows-1252" if codecs.lookup(encoding).name == "cp1252" else encoding


def has_control_characters(data: bytes, decoded: DecodedText) -> bool:
    """Whether a file holds a control character (see :data:`CONTROL_CHARACTER`); one pass over its bytes
    when the encoding writes ASCII as ASCII, else over the text."""
    if codecs.lookup(decoded.encoding).name in ASCII_BYTES_ENCODINGS:
        return bool(data.translate(None, _NOT_CONTROL_BYTES))
    return CONTROL_CHARACTER.search(decoded.text) is not None


def control_characters(values: pd.Series) -> pd.Series:
    """Per value holding a control character, the first of them as ``U+0000 (NUL)`` (index of ``values``);
    empty when none does."""
    if not (pd.api.types.is_string_dtype(values) or values.dtype == object):
        return pd.Series([], dtype=object)
    mask = values.str.contains(CONTROL_CHARACTER.pattern, regex=True, na=False)
    if not mask.any():
        return pd.Series([], dtype=object)
    return values[mask].map(_first_control)


def _first_control(value: str) -> str:
    found = CONTROL_CHARACTER.search(value)
    return describe_character(found.group()) if found else ""


def describe_character(char: str) -> str:
    """``U+0000 (NUL)``, ``U+007F (DEL)``, ``U+00E9``."""
    code = ord(char)
    name = _C0_NAMES[code] if code < 0x20 else "DEL" if code == 0x7F else ""
    return f"U+{code:04X}" + (f" ({name})" if name else "")


def visible_controls(values: pd.Series) -> pd.Series:
    """Values with each control character written as ``\\x00``, for reports that people read."""
    return values.str.replace(
        CONTROL_CHARACTER.pattern, lambda match: f"\\x{ord(match.group()):02x}", regex=True
    )
