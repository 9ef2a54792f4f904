"""Native charts in workbooks: drawn by both writers from their sheet's own table, every row a category."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from fileio.workbook_charts import Chart
from fileio.workbooks import write_xlsx, write_xlsx_plain

TABLE = pd.DataFrame({"Kind": ["street", "town", "P.O. box"], "Rows": [3, 0, 1], "Other": [1, 1, 1]})
CHARTS = {
    "By kind": [
        Chart("Rows by kind", "Kind", ("Rows",)),
        Chart("Both", "Kind", ("Rows", "Other"), kind="column"),
    ]
}


def _charts(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as package:
        names = sorted(name for name in package.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", name))
        return [package.read(name).decode() for name in names]


def _ranges(chart: str) -> list[str]:
    return re.findall(r"<c:f>([^<]*)</c:f>", chart)


@pytest.mark.parametrize("writer", [write_xlsx, write_xlsx_plain])
def test_each_chart_covers_every_row_of_its_table(tmp_path: Path, writer: object) -> None:
    path = writer(
        tmp_path / "charts.xlsx", {"Data": pd.DataFrame({"A": [1]}), "By kind": TABLE}, charts=CHARTS
    )  # type: ignore[operator]
    bars, columns = _charts(path)
    assert "Rows by kind" in bars and '<c:barDir val="bar"/>' in bars
    assert '<c:barDir val="col"/>' in columns
    assert "'By kind'!$A$2:$A$4" in _ranges(bars) and "'By kind'!$B$2:$B$4" in _ranges(bars)
    assert "'By kind'!$C$2:$C$4" in _ranges(columns)
    sheet = openpyxl.load_workbook(path)["By kind"]
    assert [row[0] for row in sheet.iter_rows(min_row=2, values_only=True)] == ["street", "town", "P.O. box"]


def test_both_writers_draw_the_same_series(tmp_path: Path) -> None:
    sheets = {"By kind": TABLE}
    fast = _charts(write_xlsx(tmp_path / "fast.xlsx", sheets, charts=CHARTS))
    plain = _charts(write_xlsx_plain(tmp_path / "plain.xlsx", sheets, charts=CHARTS))
    assert [_ranges(chart) for chart in fast] == [_ranges(chart) for chart in plain]


def test_charts_go_to_the_sheet_under_its_valid_name(tmp_path: Path) -> None:
    path = write_xlsx(
        tmp_path / "named.xlsx", {"Moves: by kind": TABLE}, charts={"Moves: by kind": CHARTS["By kind"]}
    )
    assert openpyxl.load_workbook(path).sheetnames == ["Moves_ by kind"]
    assert "'Moves_ by kind'!$A$2:$A$4" in _ranges(_charts(path)[0])


@pytest.mark.parametrize(
    ("charts", "message"),
    [
        ({"Elsewhere": CHARTS["By kind"]}, "sheets that are not written: Elsewhere"),
        ({"By kind": [Chart("Bad", "Kind", ("Missing",))]}, "no column 'Missing'"),
    ],
)
def test_a_chart_that_cannot_be_drawn_is_refused(tmp_path: Path, charts: dict, message: str) -> None:
    for writer in (write_xlsx, write_xlsx_plain):
        with pytest.raises(ValueError, match=message):
            writer(tmp_path / "refused.xlsx", {"By kind": TABLE}, charts=charts)
        assert not (tmp_path / "refused.xlsx").exists()
