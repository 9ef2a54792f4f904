"""The §2.3 field lengths held against what the service returned: a result row whose service fields are
longer than the specification allows says so in its :data:`PROBLEMS_COLUMN` (the value is kept as returned).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from connectors.address_service.codes import ADDRESS_FIELD_NAMES, MAX_LENGTH, STATUS_FIELD_NAMES
from fileio.address_service.records import PROBLEMS_COLUMN
from fileio.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

__all__ = ["PROBLEMS_COLUMN", "SERVICE_FIELDS", "flag_long_fields"]
SERVICE_FIELDS = (*STATUS_FIELD_NAMES, *ADDRESS_FIELD_NAMES)


def flag_long_fields(merged: pd.DataFrame, *, after: str | None = None) -> tuple[pd.DataFrame, int]:
    """``merged`` with :data:`PROBLEMS_COLUMN` (after the column ``after``, else last): per row, each §2.3
    field of the service's text longer than its maximum, as ``Housekey: 23 characters, at most 19``
    (``""`` when none); and how many rows have a problem. Vectorised: one ``str.len`` per field."""
    problems = pd.Series("", index=merged.index, dtype=object)
    for field in SERVICE_FIELDS:
        if field not in merged.columns:
            continue
        values = merged[field]
        if isinstance(values.dtype, pd.CategoricalDtype) or not (
            pd.api.types.is_string_dtype(values) or values.dtype == object
        ):
            continue
        lengths = values.map(lambda value: len(value) if isinstance(value, str) else 0)
        limit = MAX_LENGTH[field]
        long = lengths > limit
        if not long.any():
            continue
        text = f"{field}: " + lengths[long].astype(str) + f" characters, at most {limit}"
        joined = problems[long].where(problems[long] == "", problems[long] + "; ")
        problems[long] = joined + text
    flagged = merged.copy(deep=False)
    columns = list(flagged.columns)
    position = columns.index(after) + 1 if after in columns else len(columns)
    flagged.insert(position, PROBLEMS_COLUMN, problems)
    return flagged, int((problems != "").sum())
