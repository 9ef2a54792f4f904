"""The review of an address batch: every input row once, in input order, given beside corrected."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pandas as pd
from openpyxl import load_workbook

from fileio.address_service.corrections import REJECTED, classify
from fileio.address_service.result_codes import qstat_summary
from fileio.address_service.review import (
    DESIGNATION_COLUMN,
    DETAILS_COLUMN,
    HUMAN_COLUMN,
    ROW_COLUMN,
    WRITTEN_COLUMN,
    review_sheet,
    write_review,
)
from fileio.rejected_rows import PROBLEMS, ROW

STREET_CHANGED = "-------3" + "-" * 16
MOVED = "-------5---5-5" + "-" * 10


def _merged() -> pd.DataFrame:
    """Result rows 1, 3 and 4 (row 2 was rejected): a corrected street, a move, an unknown address."""
    return pd.DataFrame(
        {
            "RecordId": [1, 3, 4],
            "KundenNr": ["A1", "A3", "A4"],
            "ReturnedByService": [True, True, True],
            "QSTAT": ["1", "4", "51"],
            "ShortReport": [STREET_CHANGED, MOVED, "0" * 24],
            "CorrectionType": ["1", "1", "0"],
            "Streetname": ["Lindenstrasse", "Zentralstrasse", "Nowhere"],
            "Streetname_in": ["Lindenstr.", "Bahnhofstrasse", "Nowhere"],
            "ZIPCode": ["6010", "2502", "9999"],
            "ZIPCode_in": ["6010", "5070", "9999"],
            "TownName": ["Kriens", "Biel/Bienne", "X"],
            "TownName_in": ["Kriens", "Frick", "X"],
        }
    )


def _rejected() -> pd.DataFrame:
    return pd.DataFrame(
        {"KundenNr": ["A2"], "line": [3], ROW: [2], PROBLEMS: ["PLZ: ZIPCode missing"], "values": [""]}
    )


def test_every_input_row_appears_once_in_input_order_with_its_reason() -> None:
    corrections = classify(_merged())

    sheet = review_sheet(
        corrections,
        _rejected(),
        policy="corrections",
        written=corrections.applied("corrections"),
        ids=pd.Series(["A1", "A3", "A4"], index=corrections.given.index),
        id_header="KundenNr",
    )

    frame = sheet.frame
    assert frame[ROW_COLUMN].tolist() == [1, 2, 3, 4]
    assert frame["KundenNr"].tolist() == ["A1", "A2", "A3", "A4"]
    assert frame[HUMAN_COLUMN].tolist() == ["", REJECTED, "moved (QSTAT 4)", "address unknown (QSTAT 51)"]
    assert frame[DESIGNATION_COLUMN].tolist() == ["Person hit", "", "Relocation hit", "Address unknown"]
    assert frame.loc[0, ["Street given", "Street corrected"]].tolist() == ["Lindenstr.", "Lindenstrasse"]
    assert frame[WRITTEN_COLUMN].tolist() == ["Street", "", "", ""]
    assert frame.loc[1, DETAILS_COLUMN] == "PLZ: ZIPCode missing"


def test_changed_cells_and_human_rows_carry_their_reason() -> None:
    corrections = classify(_merged())

    sheet = review_sheet(
        corrections, _rejected(), policy="corrections", written=corrections.applied("corrections")
    )

    assert sheet.changed[(0, "Street corrected")] == (
        "ShortReport 3: changed; corrected or replaced by official designation; written back"
    )
    assert sheet.changed[(2, "Town corrected")] == "QSTAT 4: a movers' address exists; not written back"
    assert set(sheet.changed) == {
        (0, "Street corrected"),
        (2, "Street corrected"),
        (2, "Postcode corrected"),
        (2, "Town corrected"),
    }
    assert set(sheet.human) == {1, 2, 3}
    assert sheet.human[3].startswith("address unknown (QSTAT 51): address incorrect or incomplete")


def test_moves_written_back_say_so() -> None:
    corrections = classify(_merged())

    sheet = review_sheet(corrections, _rejected(), policy="all", written=corrections.applied("all"))

    assert sheet.frame.loc[2, HUMAN_COLUMN] == "moved (QSTAT 4): new address written back"
    assert sheet.frame.loc[2, WRITTEN_COLUMN] == "Street, Postcode, Town"


def test_the_workbook_has_fills_notes_an_autofilter_and_native_charts(tmp_path: Path) -> None:
    corrections = classify(_merged())
    sheet = review_sheet(
        corrections, _rejected(), policy="corrections", written=corrections.applied("corrections")
    )
    summary = qstat_summary(_merged())

    path = write_review(tmp_path / "review.xlsx", sheet, summary, corrections, rejected_rows=1)

    book = load_workbook(path)
    review = book["Review"]
    assert review.auto_filter.ref == f"A1:{review.cell(1, review.max_column).column_letter}5"
    assert review.freeze_panes == "A2"
    header = [cell.value for cell in review[1]]
    street = header.index("Street corrected") + 1
    human = header.index(HUMAN_COLUMN) + 1
    assert review.cell(2, street).fill.fgColor.rgb == "FFFFEB9C"
    assert "ShortReport 3: changed" in review.cell(2, street).comment.text
    assert review.cell(2, human).comment is None
    assert review.cell(5, human).value == "address unknown (QSTAT 51)"
    assert review.cell(5, human).fill.fgColor.rgb == "FFFF9C9C"
    assert "address incorrect or incomplete" in review.cell(5, human).comment.text
    assert review.cell(5, 1).fill.fgColor.rgb == "FFFFE4E4"
    assert book.sheetnames == [
        "Review",
        "Rows by QSTAT class",
        "Corrections by kind",
        "Moves by kind",
        "Needs a human",
    ]
    reasons = {row[0]: row[1] for row in book["Needs a human"].iter_rows(min_row=2, values_only=True)}
    assert reasons[REJECTED] == 1 and reasons["address unknown (QSTAT 51)"] == 1 and len(reasons) == 10
    with zipfile.ZipFile(path) as package:
        assert (
            len([name for name in package.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", name)]) == 4
        )
