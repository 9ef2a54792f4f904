"""The address fields of a customer's row as the service reads them, before any check: a country written
out as its ISO code, a c/o line in a column of its own moved to the c/o field, a P.O. box cell holding
term and number split into both, and a column holding postcode and town ("8001 Zürich") split into both
(:func:`normalise_fields`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fileio.address_cells import PO_BOX_CELL, move_care_of, split_zip_towns
from fileio.countries import country_code
from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")


def normalise_fields(frame: pd.DataFrame, *, zip_town: bool = False) -> None:
    """Normalise the address fields of ``frame`` (canonical columns) in place, as the module says;
    ``zip_town``: ZIPCode and TownName come from one column, postcode and town in one, split here."""
    if zip_town:
        _split_zip_town(frame)
    _split_po_box(frame)
    _country_codes(frame)
    _care_of_values(frame)


def _split_po_box(frame: pd.DataFrame) -> None:
    """Split a P.O. box number cell holding term and number (as CRM exports often do) into both fields.

    The term goes to PoBoxTerm unless that field already has a value; the number stays in PoBoxNo.
    """
    if "PoBoxNo" not in frame:
        return
    parts = frame["PoBoxNo"].astype("string").str.strip().str.extract(PO_BOX_CELL)
    split = parts["number"].notna()
    if not split.any():
        return
    if "PoBoxTerm" not in frame:
        frame["PoBoxTerm"] = pd.Series(pd.NA, index=frame.index, dtype=object)
    term_free = frame["PoBoxTerm"].isna()
    frame.loc[split & term_free, "PoBoxTerm"] = parts.loc[split & term_free, "term"]
    frame.loc[split, "PoBoxNo"] = parts.loc[split, "number"]


# The columns a c/o line is found in when the file puts it in a column of its own (the street column's c/o
# lines are the splitter's, :func:`split_street_column`).
_CARE_OF_COLUMNS = ("Company", "Prename", "Prename2", "Name", "MaidenName", "AddressAddition")


def _care_of_values(frame: pd.DataFrame) -> None:
    """Move a c/o line in a column of its own into CoAddress (:func:`fileio.address_cells.move_care_of`)."""
    move_care_of(frame, _CARE_OF_COLUMNS, "CoAddress")


def _country_codes(frame: pd.DataFrame) -> None:
    """Write each country the file names ("Schweiz", "FL", "ch") as its ISO code; a value that names no
    country stays as given, and :func:`~fileio.address_service.record_checks.row_problems` rejects its row."""
    if "CountryCode" not in frame:
        return
    values = frame["CountryCode"]
    filled = values.notna()
    codes = values[filled].map(country_code)
    known = codes.notna()
    frame.loc[codes.index[known], "CountryCode"] = codes[known]


def _split_zip_town(frame: pd.DataFrame) -> None:
    """Split the postcode-and-town cells (in both ZIPCode and TownName) into the postcode and the town. A
    cell that is not a postcode followed by a town stays the town, and the row's missing postcode rejects
    it."""
    frame["ZIPCode"], frame["TownName"] = split_zip_towns(frame["TownName"])
