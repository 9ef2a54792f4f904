"""Generated test data for the benchmarks: a result file in the service's output layout, a customer address
file, and a results frame like the one written to Excel. Seeded, so every run measures the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from connectors.address_service.codes import QSTAT, SHORT_REPORT_CHARS, SHORT_REPORT_LENGTH
from sandbox.address_service.fields import FILE_OUTPUT_NAMES

SEED = 20240601
CUSTOMER_COLUMNS = ("KundenNr", "Anrede", "Segment")
# The columns a customer uploads (§2.3 spelling as delivered files echo them) before the output fields.
UPLOADED_ADDRESS_COLUMNS = ("Prename", "Name", "StreetName", "HouseNo", "ZIPCode", "TownName")
RESULT_HEADER: tuple[str, ...] = (*CUSTOMER_COLUMNS, *UPLOADED_ADDRESS_COLUMNS, *FILE_OUTPUT_NAMES)

# Windows-1252 text with the accents a Swiss address file carries.
PRENAMES = ("Hans", "Peter", "Lisa", "Müller", "Zoë", "René", "Anaïs", "Jürg", "Chloé", "Sämi", "Ursula")
NAMES = ("Muster", "Meier", "Niemand", "Schnyder", "Bühler", "Gärtner", "Lévêque", "Rüegg", "Frey")
STREETS = ("Lindenstrasse", "Bahnhofstrasse", "Rue du Lac", "Via Cantonale", "Höhenweg", "Chemin des Prés")
TOWNS = (("6010", "Kriens"), ("5070", "Frick"), ("2501", "Biel/Bienne"), ("5026", "Densbüren"),
         ("3333", "Musterwil"), ("4334", "Sisseln AG"), ("6047", "Kastanienbaum"))  # fmt: skip
ANREDEN = ("Herr", "Frau", "Familie", "")
SEGMENTS = ("A", "B", "C", "Gönner", "")
SCORES = ("100.00", "98.50", "87.25", "75.00", "62.40", "0.00")
CANTONS = ("LU", "AG", "BE")


def _pick(rng: np.random.Generator, values: tuple[str, ...], rows: int) -> np.ndarray:
    return np.asarray(values, dtype=object)[rng.integers(0, len(values), rows)]


def _lines(columns: list[np.ndarray], separator: str, *, strip_trailing: bool = False) -> list[str]:
    """One text line per row of equal-length string columns; optionally without trailing empty fields."""
    rows = zip(*(column.tolist() for column in columns), strict=True)
    if strip_trailing:
        return [separator.join(row).rstrip(separator) for row in rows]
    return [separator.join(row) for row in rows]


def write_result_file(path: Path, rows: int, *, seed: int = SEED) -> Path:
    """A result file as the service delivers it: tab-separated, CRLF, Windows-1252, header row, the uploaded
    columns then QSTAT … POBoxTownName, trailing empty fields omitted (so most rows are shorter than the
    header), TotalScore like ``100.00``."""
    rng = np.random.default_rng(seed)
    numbers = np.arange(1, rows + 1).astype(str).astype(object)
    towns = rng.integers(0, len(TOWNS), rows)
    zips = np.asarray([t[0] for t in TOWNS], dtype=object)[towns]
    town_names = np.asarray([t[1] for t in TOWNS], dtype=object)[towns]
    prename, name, street = _pick(rng, PRENAMES, rows), _pick(rng, NAMES, rows), _pick(rng, STREETS, rows)
    house = rng.integers(1, 200, rows).astype(str).astype(object)
    alphabet = np.frombuffer("".join([*SHORT_REPORT_CHARS, "A", "H"]).encode("ascii"), dtype="S1")
    report_bytes = alphabet[rng.integers(0, len(alphabet), (rows, SHORT_REPORT_LENGTH))]
    short_report = report_bytes.view(f"S{SHORT_REPORT_LENGTH}").ravel().astype(str).astype(object)
    # About one row in twenty is a P.O. box address: its trailing P.O. box fields are filled, so those rows
    # reach the full width; all others end at the country code or earlier.
    po_box = rng.random(rows) < 0.05
    empty = np.full(rows, "", dtype=object)
    output = {
        "QSTAT": _pick(rng, tuple(QSTAT), rows),
        "ShortReport": short_report,
        "CorrectionType": _pick(rng, ("0", "1"), rows),
        "TotalScore": _pick(rng, SCORES, rows),
        "ValidFrom": _pick(rng, ("20190101", "20230715", ""), rows),
        "ValidTo": empty,
        "BirthDate": empty,
        "HouseKey": rng.integers(100_000_000, 999_999_999, rows).astype(str).astype(object),
        "Double_DoubleGroupNo": empty,
        "Double_DSTAT": empty,
        "Company": empty,
        "Prename": prename,
        "Prename2": empty,
        "Name": name,
        "MaidenName": empty,
        "AddressAddition": empty,
        "CoAddress": empty,
        "StreetName": street,
        "HouseNo": house,
        "HouseNoAddition": _pick(rng, ("", "", "", "a", "b"), rows),
        "Floor": empty,
        "ZIPCode": zips,
        "ZIPAddition": _pick(rng, ("00", "01", "02"), rows),
        "TownName": town_names,
        "Canton": _pick(rng, CANTONS, rows),
        "CountryCode": _pick(rng, ("CH", ""), rows),
        "POBoxTerm": np.where(po_box, "Postfach", ""),
        "POBoxNo": np.where(po_box, house, ""),
        "POBoxZIP": np.where(po_box, zips, ""),
        "POBoxZIPAddition": empty,
        "POBoxTownName": np.where(po_box, town_names, ""),
    }
    assert tuple(output) == FILE_OUTPUT_NAMES, "the generator must follow the sandbox's output order"
    uploaded = [numbers, _pick(rng, ANREDEN, rows), _pick(rng, SEGMENTS, rows),
                prename, name, street, house, zips, town_names]  # fmt: skip
    lines = _lines([*uploaded, *(np.asarray(c, dtype=object) for c in output.values())], "\t",
                   strip_trailing=True)  # fmt: skip
    text = "\t".join(RESULT_HEADER) + "\r\n" + "\r\n".join(lines) + "\r\n"
    path.write_bytes(text.encode("cp1252"))
    return path


ADDRESS_FILE_HEADER = ("KundenNr", "Anrede", "Segment", "Prename", "Name", "Streetname", "HouseNo",
                       "ZIPCode", "TownName", "Bemerkung")  # fmt: skip


def write_address_file(path: Path, rows: int, *, seed: int = SEED) -> Path:
    """A customer's address file (semicolon CSV, UTF-8) that passes the minimum-input checks."""
    rng = np.random.default_rng(seed + 1)
    towns = rng.integers(0, len(TOWNS), rows)
    columns = [
        np.arange(1, rows + 1).astype(str).astype(object),
        _pick(rng, ANREDEN, rows),
        _pick(rng, SEGMENTS, rows),
        _pick(rng, PRENAMES, rows),
        _pick(rng, NAMES, rows),
        _pick(rng, STREETS, rows),
        rng.integers(1, 200, rows).astype(str).astype(object),
        np.asarray([t[0] for t in TOWNS], dtype=object)[towns],
        np.asarray([t[1] for t in TOWNS], dtype=object)[towns],
        _pick(rng, ("", "", "Stammkunde", "bitte prüfen", "Newsletter ja"), rows),
    ]
    text = ";".join(ADDRESS_FILE_HEADER) + "\n" + "\n".join(_lines(columns, ";")) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def results_frame(rows: int, columns: int = 40, *, seed: int = SEED) -> pd.DataFrame:
    """A frame shaped like merged address results: mostly text, some numbers, some empty cells.

    The first columns are the ones the pipeline writes (RecordId, customer fields, status, decoded status,
    address); further columns up to ``columns`` are ShortReport position labels, as in a real export.
    """
    rng = np.random.default_rng(seed + 2)
    towns = rng.integers(0, len(TOWNS), rows)
    po_box_numbers = np.full(rows, None, dtype=object)
    po_box_numbers[rng.random(rows) < 0.05] = "12"
    frame: dict[str, object] = {
        "RecordId": np.arange(1, rows + 1, dtype=np.int64),
        "KundenNr": np.char.add("K", np.arange(1, rows + 1).astype(str)).astype(object),
        "Anrede": _pick(rng, ANREDEN, rows),
        "ReturnedByService": rng.random(rows) < 0.99,
        "QSTAT": _pick(rng, tuple(QSTAT), rows),
        "QSTAT_Designation": _pick(rng, ("Person hit", "Household hit", "Address hit", "No hit"), rows),
        "ShortReport": _pick(rng, ("111111111111-----1111111", "1113111111110----1411111"), rows),
        "CorrectionType": pd.array(rng.integers(0, 2, rows), dtype="Int64"),
        "TotalScore": rng.choice(np.array([100.0, 98.5, 87.25, np.nan]), rows),
        "Prename": _pick(rng, PRENAMES, rows),
        "Name": _pick(rng, NAMES, rows),
        "Streetname": _pick(rng, STREETS, rows),
        "HouseNo": rng.integers(1, 200, rows).astype(str).astype(object),
        "ZIPCode": np.asarray([t[0] for t in TOWNS], dtype=object)[towns],
        "TownName": np.asarray([t[1] for t in TOWNS], dtype=object)[towns],
        "Canton": _pick(rng, CANTONS, rows),
        "HouseKey": rng.integers(100_000_000, 999_999_999, rows),
        "Prename_in": _pick(rng, PRENAMES, rows),
        "Name_in": _pick(rng, NAMES, rows),
        "Streetname_in": _pick(rng, STREETS, rows),
        "PoBoxNo": po_box_numbers,
    }
    labels = ("compliance (1)", "changed (3)", "no statement (-)", "supplemented (4)", "")
    position = 1
    while len(frame) < columns:
        frame[f"SR{position:02d}"] = pd.Categorical(_pick(rng, labels, rows))
        position += 1
    return pd.DataFrame(frame).iloc[:, :columns]


ADDRESS_WORKBOOK_HEADER = ("KundenNr", "Anrede", "Vorname", "Name", "Strasse", "Hausnummer", "PLZ", "Ort",
                           "Bemerkung", "Kunde seit", "Umsatz")  # fmt: skip


def write_address_workbook(path: Path, rows: int, *, seed: int = SEED) -> Path:
    """A customer's address workbook as Excel saves it (one sheet, shared strings): customer numbers as
    text with leading zeros, house numbers as numbers (one in ten with a letter, as text), postcodes as
    numbers, dates, amounts, empty cells and a remark that looks like a formula, stored as text."""
    import rustpy_xlsxwriter  # the project's workbook writer; only this generator needs it here

    rng = np.random.default_rng(seed + 3)
    towns = rng.integers(0, len(TOWNS), rows)
    house = rng.integers(1, 200, rows).astype(object)
    lettered = rng.random(rows) < 0.1
    house[lettered] = np.char.add(house[lettered].astype(str), "a").astype(object)
    remarks = _pick(rng, ("", "", "", "Stammkunde", "bitte prüfen", "=nicht rechnen"), rows)
    frame = pd.DataFrame(
        {
            "KundenNr": np.char.zfill(np.arange(1, rows + 1).astype(str), 7).astype(object),
            "Anrede": _pick(rng, ANREDEN, rows),
            "Vorname": _pick(rng, PRENAMES, rows),
            "Name": _pick(rng, NAMES, rows),
            "Strasse": _pick(rng, STREETS, rows),
            "Hausnummer": house,
            "PLZ": np.asarray([int(t[0]) for t in TOWNS])[towns],
            "Ort": np.asarray([t[1] for t in TOWNS], dtype=object)[towns],
            "Bemerkung": pd.Series(remarks).replace("", None),
            "Kunde seit": pd.Timestamp("2000-01-01") + pd.to_timedelta(rng.integers(0, 9000, rows), unit="D"),
            "Umsatz": np.round(rng.random(rows) * 5000, 2),
        }
    )
    assert tuple(frame.columns) == ADDRESS_WORKBOOK_HEADER
    frame["Anrede"] = frame["Anrede"].where(frame["Anrede"] != "", None)
    rustpy_xlsxwriter.write_worksheet(
        frame, path, sheet_name="Adressen", dedupe_strings=True, datetime_format="dd.mm.yyyy"
    )
    return path
