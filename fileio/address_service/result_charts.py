"""The pictures of an address batch's results: rows per QSTAT class, corrections per kind and moves per kind,
as small tables with a native chart each (sheets of results.xlsx), and the QSTAT classes as a PNG beside
summary.md and as a table of bars in markdown. Every category is always listed, a category of no rows too,
so that two runs' pictures compare at a glance.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from connectors.address_service.codes import QSTAT, normalize_qstat
from fileio.lazy import lazy_module
from fileio.pictures import write_bar_chart
from fileio.reports import markdown_bars
from fileio.workbook_charts import Chart

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

CLASS_COLUMN, KIND_COLUMN, ROWS_COLUMN = "QSTAT class", "Kind", "Rows"
DUPLICATE_CODES = frozenset({"K", "F"})
NO_STATUS = "no status"
UNKNOWN_QSTAT = "unknown QSTAT"
CORRECTION_KINDS: tuple[str, ...] = ("street", "house number", "postcode", "town", "P.O. box")
MOVE_KINDS: Mapping[str, str] = {
    "4": "new address known (QSTAT 4)",
    "26": "moved abroad (QSTAT 26)",
    "27": "new address unknown (QSTAT 27)",
}
MOVES_FILE = "in the moves file"
QSTAT_CHART = Chart("Rows by QSTAT class", CLASS_COLUMN, (ROWS_COLUMN,))
CORRECTIONS_CHART = Chart("Corrections by kind", KIND_COLUMN, (ROWS_COLUMN,))
MOVES_CHART = Chart("Moves", KIND_COLUMN, (ROWS_COLUMN,))
PICTURE_FILE = "qstat.png"
PICTURE_ALT = "QSTAT classes"


def qstat_classes(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows per QSTAT class (columns ``QSTAT class``, ``Rows``) from :func:`qstat_summary`'s table: every
    §2.4 class in its order, zero rows included, then ``unknown QSTAT`` when some rows carry a code §2.4 does
    not know, and ``no status`` (no QSTAT delivered, or the row not returned) last. The duplicate classes K
    and F are listed only where the QSTAT carries them: the service reports duplicates in Double_DSTAT,
    counted on their own (:func:`~fileio.address_service.result_codes.duplicate_counts`)."""
    counts = _counts_by_code(summary)
    rows = [
        (f"{code} {info.designation}", counts.pop(code, 0))
        for code, info in QSTAT.items()
        if code not in DUPLICATE_CODES or counts.get(code)
    ]
    no_status = counts.pop("", 0)
    if counts:
        rows.append((UNKNOWN_QSTAT, sum(counts.values())))
    rows.append((NO_STATUS, no_status))
    return _table(CLASS_COLUMN, rows)


def corrections_by_kind(corrections: Mapping[str, int] | None) -> pd.DataFrame:
    """Rows corrected per kind (columns ``Kind``, ``Rows``), every kind of :data:`CORRECTION_KINDS` listed;
    ``corrections`` None: none counted (every kind zero).

    Raises:
        ValueError: a kind that is not one of :data:`CORRECTION_KINDS`.
    """
    given = dict(corrections or {})
    unknown = sorted(set(given) - set(CORRECTION_KINDS))
    if unknown:
        raise ValueError(f"corrections of unknown kinds {unknown}; the kinds are {list(CORRECTION_KINDS)}")
    return _table(KIND_COLUMN, [(kind, int(given.get(kind, 0))) for kind in CORRECTION_KINDS])


def moves_by_kind(summary: pd.DataFrame, moves_file_rows: int | None = None) -> pd.DataFrame:
    """Rows per kind of move (columns ``Kind``, ``Rows``): QSTAT 4, 26 and 27, and with a moves file the
    notifications it holds."""
    counts = _counts_by_code(summary)
    rows = [(label, counts.get(code, 0)) for code, label in MOVE_KINDS.items()]
    if moves_file_rows is not None:
        rows.append((MOVES_FILE, moves_file_rows))
    return _table(KIND_COLUMN, rows)


def result_chart_sheets(
    summary: pd.DataFrame,
    *,
    corrections: Mapping[str, int] | None = None,
    moves_file_rows: int | None = None,
) -> tuple[dict[str, pd.DataFrame], dict[str, list[Chart]]]:
    """The chart sheets of results.xlsx (by sheet name: its table, and its chart)."""
    tables = {
        "Rows by QSTAT class": (qstat_classes(summary), QSTAT_CHART),
        "Corrections by kind": (corrections_by_kind(corrections), CORRECTIONS_CHART),
        "Moves by kind": (moves_by_kind(summary, moves_file_rows), MOVES_CHART),
    }
    return (
        {name: table for name, (table, _) in tables.items()},
        {name: [chart] for name, (_, chart) in tables.items()},
    )


def write_qstat_picture(path: Path, summary: pd.DataFrame) -> Path:
    """The QSTAT classes as a PNG bar chart at ``path`` (a bar per class, fixed in number)."""
    classes = qstat_classes(summary)
    return write_bar_chart(
        path,
        classes[CLASS_COLUMN].tolist(),
        classes[ROWS_COLUMN].tolist(),
        title=QSTAT_CHART.title,
        value_label=ROWS_COLUMN.lower(),
    )


def qstat_markdown(summary: pd.DataFrame, *, picture: str | None = None) -> str:
    """The QSTAT classes as a markdown table of proportional bars, after the link to their ``picture`` (a
    path relative to the markdown file) when there is one."""
    classes = qstat_classes(summary)
    lines = [f"![{PICTURE_ALT}]({picture})", ""] if picture else []
    lines.append(markdown_bars(classes[CLASS_COLUMN].tolist(), classes[ROWS_COLUMN].tolist(), CLASS_COLUMN))
    return "\n".join(lines)


def _counts_by_code(summary: pd.DataFrame) -> dict[str, int]:
    counts: dict[str, int] = {}
    for code, count in zip(summary["QSTAT"].fillna(""), summary["Count"], strict=True):
        key = normalize_qstat(code)
        counts[key] = counts.get(key, 0) + int(count)
    return counts


def _table(label: str, rows: list[tuple[str, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=[label, ROWS_COLUMN]).astype({ROWS_COLUMN: "int64"})
