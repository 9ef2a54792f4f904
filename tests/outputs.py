"""Reading the CSV files the flows write, in either dialect: ``excel`` files start with a UTF-8 byte-order
mark and separate cells with ``;``, ``rfc4180`` files have no mark and separate them with ``,``
(fileio.reports.CsvStyle). The mark tells them apart exactly, so nothing is sniffed."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pandas as pd

from fileio.reports import CsvStyle

UTF8_BOM = b"\xef\xbb\xbf"
EXCEL = CsvStyle(guard=True, dialect="excel")
RFC4180 = CsvStyle(guard=True, dialect="rfc4180")
UNGUARDED = CsvStyle(guard=False, dialect="excel")


def output_dialect(path: Path) -> tuple[str, str]:
    """The separator and encoding of a CSV file the flows wrote."""
    with path.open("rb") as handle:
        excel = handle.read(len(UTF8_BOM)) == UTF8_BOM
    return (";", "utf-8-sig") if excel else (",", "utf-8")


def read_output_csv(path: Path, **kwargs: Any) -> pd.DataFrame:
    """A CSV file the flows wrote, as ``pandas.read_csv`` reads it with ``kwargs``."""
    separator, encoding = output_dialect(path)
    return pd.read_csv(path, sep=separator, encoding=encoding, **kwargs)


def output_records(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV file the flows wrote, as ``csv.DictReader`` reads them."""
    separator, encoding = output_dialect(path)
    with path.open(encoding=encoding, newline="") as handle:
        return list(csv.DictReader(handle, delimiter=separator))


def output_rows(path: Path) -> list[list[str]]:
    """Every row of a CSV file the flows wrote, the header first, as ``csv.reader`` reads them."""
    separator, encoding = output_dialect(path)
    with path.open(encoding=encoding, newline="") as handle:
        return list(csv.reader(handle, delimiter=separator))


def strict_json(text: str) -> Any:
    """``text`` read by a strict JSON parser: NaN, Infinity and -Infinity are refused."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON")

    return json.loads(text, parse_constant=refuse)
