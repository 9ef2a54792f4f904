"""What the fuzz tests feed the readers: cell values people and services really send (formula-looking,
over-long, control characters, other scripts, quotes and line breaks), header rows for each input kind,
well-formed text tables with the records they hold, and byte-level damage to any file.

Hypothesis draws the shape of a case (format, encoding, delimiter, rows, columns, damage); the cells of a
table come from a ``random.Random`` that hypothesis seeds (``st.randoms``), which keeps a 10,000-case run
fast and every case reproducible (the suite runs derandomized).
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

# Each kind of cell with its weight: mostly ordinary values, so that rows get through to the checks.
_PLAIN = ("Muster", "Hans", "Bahnhofstrasse", "12a", "Bern", "ZH", "x", "a b", "0", "007")
_POSTCODES = (
    "3000",
    "8001",
    "1000",
    "0999",
    "300",
    "30000",
    "3000 ",
    " 3000",
    "3O00",
    "9490",
    "DE-1",
    "3000.0",
)
_DATES = ("2030-01-31", "31.01.2030", "2030-01-31 00:00:00", "2030-02-30", "31.1.30", "01/31/2030", "today")
_NUMBERS = ("1", "42", "-5", "+5", "1.0", "1,5", "1e5", "0x1F", "99999999999999999999", "NaN", "inf", "")
_CODES = ("CH", "LI", "DE", "ch", "XX", "C", "EMAIL", "SMS", "MALE", "de", "TUESDAY_EDITION", "CITY", "K")
_EMAILS = ("a@b.ch", "hans.muster@example.ch", "@x", "a@", "a b@c.ch", "a@b@c", "x" * 70 + "@b.ch")
_FORMULAS = (
    "=1+1",
    '=HYPERLINK("http://x","y")',
    "+41 79 000 00 00",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1",
    "\r=1",
    "=cmd|' /C calc'!A0",
    " =1",
    "'=1",
)
_HOSTILE = (
    "",
    " ",
    "   ",
    '"',
    'a"b',
    '""',
    ";",
    ",",
    "\t",
    "|",
    "a\nb",
    "a\r\nb",
    "a\rb",
    "\n",
    "\x00",
    "a\x00b",
    "\x01",
    "\x1b[31m",
    "\x7f",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x85",
    "\u2028",
    "\ufeff",
    "\ufffd",
    "NULL",
    "None",
    "nan",
    "N/A",
    "TRUE",
    "#REF!",
    "_x0041_",
    "Unnamed: 1",
)
_WESTERN = ("Müller", "Zürich", "Genève", "Lörrach", "Straße", "€", "ß\xa0", "Ã©", "naïve", "Ñandú")
_OTHER_SCRIPTS = ("Łódź", "Ελλάδα", "Москва", "東京", "😀", "e\u0301", "\u202eRTL", "\U00010348")
CELL_KINDS: tuple[tuple[tuple[str, ...], int], ...] = (
    (_PLAIN, 30),
    (_POSTCODES, 8),
    (_DATES, 4),
    (_NUMBERS, 6),
    (_CODES, 5),
    (_EMAILS, 3),
    (_FORMULAS, 6),
    (_HOSTILE, 10),
    (_WESTERN, 8),
    (_OTHER_SCRIPTS, 4),
)
_KIND_POOLS = [pool for pool, _ in CELL_KINDS]
_KIND_WEIGHTS = [weight for _, weight in CELL_KINDS]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(rnd: random.Random, pool: Sequence[str] = ()) -> str:
    """One cell: from ``pool`` (the column's own values) half of the time when given, otherwise a value of
    a weighted kind; now and then over-long or random characters."""
    roll = rnd.random()
    if roll < 0.03:
        return rnd.choice("xé€Ł😀") * rnd.choice((46, 61, 76, 451, 2000))
    if roll < 0.08:
        return "".join(
            chr(rnd.choice((rnd.randrange(0x20, 0x7F), rnd.randrange(0, 0x3000)))) for _ in range(4)
        )
    if pool and roll < 0.55:
        return rnd.choice(pool)
    return rnd.choice(rnd.choices(_KIND_POOLS, _KIND_WEIGHTS)[0])


# Header names per input kind: the recognised ones, aliases, and names that must be refused or renamed.
_ANY_HEADERS = ("Kundennummer", "Notiz", "x", "x.1", "", " ", "=A1", "-x", "@x", "H" * 300, "Unnamed: 2", "ä")
ADDRESS_HEADERS = (
    "Name", "Prename", "Company", "Streetname", "HouseNo", "HouseNoAddition", "ZIPCode", "TownName",
    "PoBoxNo", "PoBoxTerm", "PoBoxZIP", "PoBoxTownName", "CountryCode", "AddressAddition", "Firma",
    "Vorname", "Nachname", "Strasse", "Hausnummer", "PLZ", "Ort", "Postfach", "NPA", "Localité", "Name_in",
    "ZIPCode_in", "RecordId", "QSTAT",
)  # fmt: skip
COMMERCE_HEADERS = (
    "firstName", "lastName", "street", "houseNumber", "additionalAddress", "zip", "city", "postBoxNumber",
    "HouseNoAddition", "Prename", "ZIPCode", "PLZ", "Ort", "PostBox", "First Name", "house_number", "row",
    "status",
)  # fmt: skip
PICKUP_HEADERS = (
    "gender", "firstName", "lastName", "language", "street", "houseNumber", "zip", "city", "countryCode",
    "notifyMode", "email", "mobileNumber", "First Name", "E-Mail", "ZIP",
)  # fmt: skip
PURCHASE_HEADERS = (
    "id", "firstName", "lastName", "street", "houseNumber", "zipCode", "city", "isoCode", "Vorname",
    "Nachname", "PLZ", "Ort", "Kundennummer", "CountryCode", "RecordId",
)  # fmt: skip
STATISTICS_HEADERS = (
    "newspaperId", "split", "product", "houseKey", "bbz", "aplz", "city", "deliveryDate", "bundleType",
    "count", "Anzahl", "Zustelldatum", "Produkt", "ZeitungsId",
)  # fmt: skip
# The values each recognised header mostly holds (by a folded header key).
_COLUMN_POOLS: dict[str, tuple[str, ...]] = {
    "zip": _POSTCODES,
    "zipcode": _POSTCODES,
    "plz": _POSTCODES,
    "npa": _POSTCODES,
    "poboxzip": _POSTCODES,
    "zipcodein": _POSTCODES,
    "deliverydate": _DATES,
    "zustelldatum": _DATES,
    "email": _EMAILS,
    "newspaperid": _NUMBERS,
    "zeitungsid": _NUMBERS,
    "count": _NUMBERS,
    "anzahl": _NUMBERS,
    "housekey": _NUMBERS,
    "bbz": _NUMBERS,
    "aplz": _NUMBERS,
    "countrycode": _CODES,
    "isocode": _CODES,
    "gender": _CODES,
    "language": _CODES,
    "notifymode": _CODES,
    "product": _CODES,
    "produkt": _CODES,
    "bundletype": _CODES,
    "poboxno": ("12", "Postfach 12", "Case postale 7", "P.O. Box 9", "box", "12345678901"),
    "postfach": ("12", "Postfach 12", "Case postale 7"),
}


def column_pool(header: str) -> tuple[str, ...]:
    """The values a column of this header mostly holds (empty: any kind)."""
    key = "".join(char for char in header.casefold() if char.isalnum())
    return _COLUMN_POOLS.get(key, ())


ENCODINGS = ("utf-8", "utf-8-sig", "cp1252", "latin-1", "iso8859-15", "utf-16")
DELIMITERS = (",", ";", "\t", "|")
NEWLINES = ("\n", "\r\n", "\r")


@dataclass(frozen=True)
class TextTable:
    """A delimited text file as bytes and what it holds: the header and the records as written (each value
    as it reads back in ``encoding``)."""

    header: list[str]
    records: list[list[str]]
    delimiter: str
    encoding: str
    data: bytes


def text_table(
    rnd: random.Random,
    headers: Sequence[str],
    rows: int,
    *,
    delimiter: str,
    encoding: str,
    newline: str,
    ragged: bool,
) -> TextTable:
    """A well-formed delimited file (quoted as a spreadsheet writes it) with ``rows`` records; ``ragged``
    lets records be shorter or longer than the header, and blank."""
    pools = [column_pool(header) for header in headers]
    records: list[list[str]] = []
    for _ in range(rows):
        record = [cell(rnd, pool) for pool in pools]
        if ragged and rnd.random() < 0.3:
            cut = rnd.randrange(0, len(record) + 3)
            record = (
                record[:cut] if cut <= len(record) else record + [cell(rnd) for _ in range(cut - len(record))]
            )
        records.append([_representable(value, encoding) for value in record])
    header = [_representable(name, encoding) for name in headers]
    lines = [_record_line(values, delimiter) + newline for values in (header, *records)]
    return TextTable(header, records, delimiter, encoding, "".join(lines).encode(encoding))


def _record_line(values: Sequence[str], delimiter: str) -> str:
    """One record as a spreadsheet writes it: a value holding the delimiter, a quote or a line break
    (``\r`` too, whatever the file's line ending) quoted, quotes doubled; a lone empty value quoted."""
    if len(values) == 1 and not values[0]:
        return '""'
    return delimiter.join(
        '"' + value.replace('"', '""') + '"'
        if any(char in value for char in (delimiter, '"', "\r", "\n"))
        else value
        for value in values
    )


def _representable(value: str, encoding: str) -> str:
    """``value`` as it reads back after writing it in ``encoding`` (unwritable characters become ``?``)."""
    return value.encode(encoding, errors="replace").decode(encoding)


# Byte-level damage to a file: what a broken export, a wrong save-as or a truncated copy does.
_INSERTS = (b"\x00", b"\xff", b"\xfe", b'"', b"\r", b"\n", b"\x81", b"\xc3", b"\xe2\x82", b";", b",", b"\t")
_PREFIXES = (
    b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00", b"PK\x03\x04", b"%PDF-1.4\n",
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", b"\x1f\x8b", b"{\\rtf1", b"\n\n", b"\r\n", b"sep=;\n",
)  # fmt: skip


def damage(rnd: random.Random, data: bytes, times: int) -> bytes:
    """``data`` with ``times`` random edits: bytes inserted, flipped or deleted, a cut, a repeated slice, a
    foreign prefix."""
    out = bytearray(data)
    for _ in range(times):
        action = rnd.randrange(6)
        at = rnd.randrange(len(out) + 1)
        if action == 0:
            out[at:at] = rnd.choice(_INSERTS)
        elif action == 1 and out:
            out[min(at, len(out) - 1)] = rnd.randrange(256)
        elif action == 2:
            del out[at : at + rnd.randrange(1, 4)]
        elif action == 3:
            del out[at:]
        elif action == 4:
            end = min(len(out), at + rnd.randrange(1, 40))
            out[at:at] = out[at:end] * rnd.randrange(1, 3)
        else:
            out[0:0] = rnd.choice(_PREFIXES)
    return bytes(out)


def header_row(rnd: random.Random, names: Sequence[str], *, required: Sequence[str] = ()) -> list[str]:
    """A header row: mostly the ``required`` names (now and then one is left out), some of ``names`` and of
    the names any file may hold, in any order; now and then with a repeat (which the readers refuse); never
    empty."""
    chosen = [name for name in required if rnd.random() > 0.1]
    chosen += rnd.choices((*names, *_ANY_HEADERS), k=rnd.choice((0, 0, 1, 2, 3, 5)))
    rnd.shuffle(chosen)
    # One header in ten keeps its repeats, decided without a draw so that the cells stay the same.
    if zlib.crc32("\x1f".join(chosen).encode()) % 10:
        unique: dict[str, str] = {}
        for name in chosen:
            unique.setdefault(name.strip() or f"blank {len(unique)}", name)
        chosen = list(unique.values())
    return chosen or [rnd.choice(names)]


def row_count(rnd: random.Random) -> int:
    """How many records a table has: none and one often, up to a dozen."""
    return rnd.choice((0, 1, 1, 2, 3, 5, 8, 12))


# Hypothesis draws the seed of the ``random.Random`` that makes the cells and the damage of a case (a plain
# one: hypothesis's own randoms record every call, which costs more than the reading being tested).
randoms = st.integers(0, 2**32 - 1).map(random.Random)
