"""The review of an address batch: every input row once, in input order, given beside corrected."""

from __future__ import annotations

import pandas as pd

from fileio.address_service.corrections import REJECTED, classify
from fileio.address_service.review import (
    DESIGNATION_COLUMN,
    DETAILS_COLUMN,
    HUMAN_COLUMN,
    ROW_COLUMN,
    WRITTEN_COLUMN,
    review_charts,
    review_sheet,
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


def test_the_charts_list_every_category() -> None:
    charts = review_charts(classify(_merged()), rejected_rows=1, moves_file_rows=5)

    assert list(charts) == ["Rows by QSTAT class", "Corrections by kind", "Moves", "Needs a human"]
    assert len(charts["Rows by QSTAT class"]) == 12
    assert charts["Rows by QSTAT class"]["51 Address unknown"] == 1
    assert charts["Corrections by kind"]["street"] == 1
    assert charts["Moves"]["in the moves file"] == 5
    assert charts["Needs a human"][REJECTED] == 1
