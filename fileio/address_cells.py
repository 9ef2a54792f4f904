"""Address cells as CRM exports write them: a column holding postcode and town in one ("8001 Zürich",
"CH-8001 Zürich", "FL-9490 Vaduz"; :func:`fileio.headers.zip_town_header` finds such a column), split and
joined back into one cell; a P.O. box cell holding term and number ("Postfach 12"); and a c/o line ("c/o
Familie Brunner") in a column meant for something else, moved to the c/o field.

Every reader of addresses (the address batch, the commerce address files, the pickup files) takes such a
column where the file has neither a postcode nor a town column of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fileio.lazy import lazy_module
from fileio.street_lines import CARE_OF_VALUE

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

# "Postfach 123", "Case postale 45", "Casella postale 7", "P.O. Box 9": a term and a number in one cell.
PO_BOX_CELL = re.compile(
    r"^(?P<term>postfach|pf|case postale|cp|casella postale|p\.?\s?o\.?\s?box|box)\s*(?P<number>\d{1,10})$",
    re.IGNORECASE,
)
# A Swiss or Liechtenstein postcode, then the town.
_ZIP_TOWN = re.compile(r"^(?:(?:CH|LI|FL)\s*-\s*)?(?P<zip>\d{4})\s+(?P<town>\S.*)$", re.IGNORECASE)
NO_POSTCODE = "no postcode before the town (expected e.g. 8001 Zürich)"
"""Why a postcode-and-town cell gives no postcode."""


def split_zip_town(text: str) -> tuple[str, str] | None:
    """``(postcode, town)`` of one cell, or None when it does not start with a postcode."""
    match = _ZIP_TOWN.match(text.strip())
    return None if match is None else (match["zip"], match["town"].strip())


def split_zip_towns(values: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The postcodes and towns of postcode-and-town cells: the postcode None and the town the cell as it was
    where a cell does not start with a postcode (an empty cell stays empty in both)."""
    parts = values.astype("string").str.strip().str.extract(_ZIP_TOWN)
    matched = parts["zip"].notna()
    zips = parts["zip"].astype(object).where(matched, None)
    towns = parts["town"].str.strip().astype(object).where(matched, values.astype(object))
    return zips, towns.where(towns.notna(), None)


def joined_zip_town(zip_code: str | None, town: str | None) -> str:
    """Postcode and town as one cell ("8001 Zürich"); either alone where the other is empty."""
    return " ".join(part.strip() for part in (zip_code or "", town or "") if part.strip())


def box_numbers(values: pd.Series) -> pd.Series:
    """The number of each box cell written with its term ("Postfach 12" → "12"); other values as they are."""
    numbers = values.astype("string").str.strip().str.extract(PO_BOX_CELL)["number"]
    return numbers.where(numbers.notna(), values).astype(object).where(values.notna(), None)


def move_care_of(frame: pd.DataFrame, sources: Sequence[str], target: str) -> None:
    """Move, in place, a value of the ``sources`` columns that starts with c/o, p.A., z.H., chez, presso or
    a/c ("c/o Familie Brunner" in an addition column, "c/o Gygax Consulting" in the company column) into
    ``target`` where the row has none: the first such value of a row, in the order of ``sources``. The
    ``target`` column is added only when a value moves: a file without c/o lines is sent as it was."""
    for column in (name for name in sources if name in frame):
        moved = frame[column].astype("string").str.match(CARE_OF_VALUE).fillna(False).astype(bool)
        if not moved.any():
            continue
        if target not in frame:
            frame[target] = pd.Series(None, index=frame.index, dtype=object)
        moved &= frame[target].isna()
        frame.loc[moved, target] = frame.loc[moved, column]
        frame.loc[moved, column] = None
