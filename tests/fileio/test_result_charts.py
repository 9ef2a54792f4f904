"""The pictures of a batch's results: every QSTAT class, kind of correction and kind of move is always a
category (zero rows too), in results.xlsx's native charts, the PNG beside summary.md and the markdown bars."""

from __future__ import annotations

import re
import struct
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from connectors.address_service.codes import QSTAT
from fileio.address_service.records import AddressInput
from fileio.address_service.result_charts import (
    CORRECTION_KINDS,
    NO_STATUS,
    UNKNOWN_QSTAT,
    corrections_by_kind,
    moves_by_kind,
    qstat_classes,
    qstat_markdown,
    write_qstat_picture,
)
from fileio.address_service.result_codes import qstat_summary
from fileio.address_service.results import write_address_results
from fileio.address_service.user_results import user_results
from fileio.pictures import MAX_BARS, write_bar_chart
from fileio.reports import markdown_bars

CLASSES = [f"{code} {info.designation}" for code, info in QSTAT.items() if code not in ("K", "F")]
ORIGINAL = "K Original (header duplicate)"


def _summary(*codes: str) -> pd.DataFrame:
    return qstat_summary(pd.DataFrame({"QSTAT": list(codes)}, dtype=object))


def test_every_qstat_class_is_listed_in_spec_order_with_no_status_last() -> None:
    classes = qstat_classes(_summary("1", "01", "4", "K", "", ""))
    assert classes.columns.tolist() == ["QSTAT class", "Rows"]
    # K and F only where the QSTAT carries them: here one K, no F.
    assert classes["QSTAT class"].tolist() == [*CLASSES, ORIGINAL, NO_STATUS]
    counts = dict(zip(classes["QSTAT class"], classes["Rows"], strict=True))
    assert counts["1 Person hit"] == 2 and counts["4 Relocation hit"] == 1 and counts[NO_STATUS] == 2
    assert counts[ORIGINAL] == 1 and counts["50 Person unknown at this address"] == 0
    assert len(classes) == 11


def test_codes_the_spec_does_not_know_are_one_category() -> None:
    classes = qstat_classes(_summary("77", "X", "1"))
    assert classes["QSTAT class"].tolist() == [*CLASSES, UNKNOWN_QSTAT, NO_STATUS]
    assert classes["Rows"].tolist()[-2:] == [2, 0]
    assert classes["Rows"].sum() == 3


def test_every_kind_of_correction_is_listed() -> None:
    assert corrections_by_kind(None)["Rows"].tolist() == [0] * 5
    kinds = corrections_by_kind({"town": 4, "street": 2})
    assert (
        kinds["Kind"].tolist()
        == list(CORRECTION_KINDS)
        == ["street", "house number", "postcode", "town", "P.O. box"]
    )
    assert kinds["Rows"].tolist() == [2, 0, 0, 4, 0]
    with pytest.raises(ValueError, match="unknown kinds \\['zip'\\]"):
        corrections_by_kind({"zip": 1})


def test_moves_by_kind_with_and_without_a_moves_file() -> None:
    summary = _summary("4", "4", "27", "1")
    assert moves_by_kind(summary)["Rows"].tolist() == [2, 0, 1]
    with_file = moves_by_kind(summary, moves_file_rows=0)
    assert with_file["Kind"].tolist()[-1] == "in the moves file" and with_file["Rows"].tolist() == [
        2,
        0,
        1,
        0,
    ]


def test_results_xlsx_holds_a_native_chart_per_picture_with_every_category(tmp_path: Path) -> None:
    merged = pd.DataFrame({"RecordId": [1, 2, 3], "QSTAT": ["1", "4", ""]})
    summary = qstat_summary(merged)
    moves = pd.DataFrame({"Name": ["Muster"]})
    records = AddressInput(merged[["RecordId"]], pd.DataFrame(), pd.DataFrame(), {}, [], tmp_path / "in.csv")
    paths = write_address_results(
        user_results(merged, records), summary, tmp_path, moves=moves, corrections={"postcode": 1}
    )
    workbook = paths[1]
    with zipfile.ZipFile(workbook) as package:
        charts = sorted(n for n in package.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", n))
        texts = [package.read(name).decode() for name in charts]
    assert len(charts) == 3
    expected = {
        "Rows by QSTAT class": ("'Rows by QSTAT class'!$A$2:$A$11", [*CLASSES, NO_STATUS]),
        "Corrections by kind": ("'Corrections by kind'!$A$2:$A$6", list(CORRECTION_KINDS)),
        "Moves": ("'Moves by kind'!$A$2:$A$5", None),
    }
    book = openpyxl.load_workbook(workbook)
    for title, (categories, labels) in expected.items():
        [chart] = [text for text in texts if f"<a:t>{title}</a:t>" in text]
        assert f"<c:f>{categories}</c:f>" in chart
        sheet = book[categories.split("!")[0].strip("'")]
        listed = [row[0] for row in sheet.iter_rows(min_row=2, values_only=True)]
        assert labels is None or listed == labels
    moved = book["Moves by kind"]
    assert [row for row in moved.iter_rows(min_row=2, values_only=True)] == [
        ("new address known (QSTAT 4)", 1), ("moved abroad (QSTAT 26)", 0),
        ("new address unknown (QSTAT 27)", 0), ("in the moves file", 1),
    ]  # fmt: skip
    assert book["Corrections by kind"]["B4"].value == 1


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_the_qstat_picture_is_a_png_of_a_bar_per_class(tmp_path: Path) -> None:
    few = write_qstat_picture(tmp_path / "few.png", _summary("1"))
    many = write_qstat_picture(tmp_path / "many.png", _summary(*(["1"] * 5000 + ["51"] * 3 + ["77"])))
    width, height = _png_size(few)
    assert width == 800 and 400 < height < 700
    # The same bars whatever the rows; an unknown code adds one.
    assert _png_size(many)[0] == width and 0 < _png_size(many)[1] - height <= 40


def test_a_picture_has_a_bounded_number_of_bars(tmp_path: Path) -> None:
    labels = [str(n) for n in range(MAX_BARS + 1)]
    with pytest.raises(ValueError, match=f"at most {MAX_BARS}"):
        write_bar_chart(tmp_path / "many.png", labels, [1] * len(labels), title="too many")
    assert not (tmp_path / "many.png").exists()


def test_markdown_bars_are_proportional_to_the_largest_count() -> None:
    table = markdown_bars(["a", "b", "c", "d"], [60, 30, 1, 0], "Class", width=30)
    lines = table.splitlines()
    assert lines[0] == "| Class | Rows | Share | |"
    assert lines[2] == "| a | 60 | 65.9 % | " + "█" * 30 + " |"
    assert lines[3] == "| b | 30 | 33.0 % | " + "█" * 15 + " |"
    assert lines[4] == "| c | 1 | 1.1 % | █ |"  # a row at least shows
    assert lines[5] == "| d | 0 | 0.0 % |  |"
    assert markdown_bars(["a"], [0], "Class").splitlines()[2] == "| a | 0 | - |  |"


def test_qstat_markdown_links_the_picture_and_lists_every_class() -> None:
    text = qstat_markdown(_summary("1", "1", "51"), picture="qstat.png")
    assert text.startswith("![QSTAT classes](qstat.png)\n\n| QSTAT class | Rows | Share | |")
    assert "| 1 Person hit | 2 | 66.7 % | " + "█" * 30 + " |" in text
    assert "| 50 Person unknown at this address | 0 | 0.0 % |  |" in text
    assert f"| {NO_STATUS} | 0 |" in text
    assert not qstat_markdown(_summary("1")).startswith("!")
