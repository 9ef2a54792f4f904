"""The results in the customer's words: rows named as rejected.csv names them, each address column under
the customer's name with the service's value right after it, the changed cells found with their reason, the
service's dates as ISO dates, and the moves file named the same way."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fileio.address_service.records import AddressInput, read_address_file
from fileio.address_service.result_codes import decode_results
from fileio.address_service.results import merge_results
from fileio.address_service.user_results import iso_dates, user_moves, user_results
from tests.fileio.test_address_records import write_text

HEADER = ["Notiz", "KdNr", "Vorname", "Name", "Strasse", "PLZ", "Ort", "line"]
ROWS = [
    ["vip", "A-1", "Anna", "Meier", "Bahnhofstr. 12a", "3000", "Bärn", "x"],
    ["", "A-2", "Luc", "Favre", "Postfach 44", "1204", "Genève", "y"],
    ["", "A-3", "Ida", "Lang", "Lindenweg 4", "3000", "Bern", "z"],
]


def _input(tmp_path: Path) -> AddressInput:
    return read_address_file(write_text(tmp_path / "kunden.csv", HEADER, ROWS, ";"))


def _answer(rows: list[dict[str, str]]) -> pd.DataFrame:
    return decode_results(pd.DataFrame(rows, dtype=object).fillna(""))


def _report(**chars: str) -> str:
    """A ShortReport with the given characters at the positions of §2.5 (``StreetName=3``)."""
    from connectors.address_service.codes import SHORT_REPORT_POSITIONS

    return "".join(chars.get(name, "-") for name in SHORT_REPORT_POSITIONS)


ANSWER = [
    {
        "RecordId": "1", "QSTAT": "1", "ShortReport": _report(StreetName="3", TownName="3"),
        "CorrectionType": "1", "Birthdate": "19361203", "ValidFrom": "20230402", "Prename": "Anna",
        "Name": "Meier", "Streetname": "Bahnhofstrasse", "HouseNo": "12", "HouseNoAddition": "a",
        "ZIPCode": "3000", "TownName": "Bern", "Canton": "BE",
    },
    {
        "RecordId": "2", "QSTAT": "1", "ShortReport": _report(), "Prename": "Luc", "Name": "Favre",
        "ZIPCode": "1204", "TownName": "Genève", "PoBoxTerm": "Postfach", "PoBoxNo": "44",
    },
]  # fmt: skip


def test_each_address_column_is_followed_by_the_services_value(tmp_path: Path) -> None:
    given = _input(tmp_path)
    shown = user_results(merge_results(given, _answer(ANSWER)), given)
    frame = shown.frame
    columns = frame.columns.tolist()
    # The id column leads (a customer number, not the file's first column), then line and row; the customer's
    # own "line" column keeps its values under a name that says so.
    assert columns[:3] == ["KdNr", "line", "row"]
    assert columns[3:14] == [
        "Notiz", "Vorname", "Vorname (Post)", "Name", "Name (Post)", "Strasse", "Strasse (Post)",
        "PLZ", "PLZ (Post)", "Ort", "Ort (Post)",
    ]  # fmt: skip
    assert columns[14] == "line (report)"
    assert list(frame["line (report)"]) == ["x", "y", "z"]
    assert list(frame["line"]) == [2, 3, 4] and list(frame["row"]) == [1, 2, 3]
    assert columns[15:19] == ["QSTAT", "QSTAT_Designation", "QSTAT_Meaning", "ShortReport"]
    # The street line gets the service's street, number and addition in one; a P.O. box line its box.
    assert list(frame["Strasse"]) == ["Bahnhofstr. 12a", "Postfach 44", "Lindenweg 4"]
    assert list(frame["Strasse (Post)"]) == ["Bahnhofstrasse 12a", "Postfach 44", ""]
    assert list(frame["Ort"]) == ["Bärn", "Genève", "Bern"] and list(frame["Ort (Post)"]) == [
        "Bern",
        "Genève",
        "",
    ]
    # The service's fields the file has no column for follow, marked as the service's.
    assert "Canton (Post)" in columns and "HouseNo (Post)" not in columns and "PoBoxNo (Post)" not in columns
    assert not [c for c in columns if c.endswith("_in")]
    assert list(frame["Birthdate"])[:2] == ["1936-12-03", ""] and frame["ValidFrom"][0] == "2023-04-02"


def test_the_changed_cells_are_found_with_the_short_reports_reason(tmp_path: Path) -> None:
    given = _input(tmp_path)
    shown = user_results(merge_results(given, _answer(ANSWER)), given)
    assert set(shown.changed) == {(0, "Strasse (Post)"), (0, "Ort (Post)")}
    assert shown.changed[(0, "Ort (Post)")].startswith("ShortReport 3: changed")
    # Row 3 did not come back: its empty values are no change.
    assert not [key for key in shown.changed if key[0] == 2]


def test_the_legend_names_every_column_and_its_field(tmp_path: Path) -> None:
    given = _input(tmp_path)
    shown = user_results(merge_results(given, _answer(ANSWER)), given)
    legend = shown.legend.set_index("Column")
    assert legend.index.tolist() == shown.frame.columns.tolist()
    assert legend.at["Ort", "Specification field"] == "TownName_in"
    assert legend.at["Ort (Post)", "Specification field"] == "TownName"
    assert legend.at["Strasse (Post)", "Specification field"] == "Streetname"
    assert legend.at["row", "Specification field"] == "RecordId"
    assert (legend["What it holds"].str.len() > 0).all()


def test_a_country_written_out_is_no_change_when_the_service_has_its_code(tmp_path: Path) -> None:
    path = write_text(
        tmp_path / "k.csv",
        ["Vorname", "Name", "Strasse", "Nr", "PLZ", "Ort", "Land"],
        [["Anna", "Meier", "Seeweg", "3", "8001", "Zürich", "Schweiz"]],
        ";",
    )
    given = read_address_file(path)
    answer = [
        {"RecordId": "1", "QSTAT": "1", "ShortReport": _report(), "Streetname": "Seeweg", "HouseNo": "3",
         "HouseNoAddition": "b", "ZIPCode": "8001", "TownName": "Zürich", "CountryCode": "CH"},
    ]  # fmt: skip
    shown = user_results(merge_results(given, _answer(answer)), given)
    row = shown.frame.iloc[0]
    assert (row["Land"], row["Land (Post)"]) == ("Schweiz", "CH")
    assert row["Nr (Post)"] == "3b"  # the file has no addition column: the number keeps it
    assert shown.changed == {(0, "Nr (Post)"): "the service's value differs from the one sent"}
    # Without a customer-number column the rows are named by line and row alone.
    assert shown.frame.columns.tolist()[:3] == ["line", "row", "Vorname"]


def test_iso_dates_change_only_dates() -> None:
    values = pd.Series(
        ["20230402", "02042023", "2023-04-02", "", None, "99999999", "17991231", "12345"], dtype=object
    )
    assert iso_dates(values).tolist() == [
        "2023-04-02", "02042023", "2023-04-02", "", None, "99999999", "17991231", "12345",
    ]  # fmt: skip


def test_the_moves_are_named_as_the_results_name_their_rows(tmp_path: Path) -> None:
    given = _input(tmp_path)
    moves = pd.DataFrame(
        {
            "RecordNo": ["2"],
            "Name": ["Lang"],
            "BirthDate": ["19700101"],
            "MoveDate": ["20230402"],
            "KdNr": ["A-3"],
            "RecordId": ["3"],
        }
    )
    shown = user_moves(moves, given)
    assert shown.columns.tolist() == [
        "KdNr",
        "line",
        "row",
        "RecordNo (Post)",
        "Name",
        "BirthDate",
        "MoveDate",
    ]
    assert shown.iloc[0].tolist() == ["A-3", 4, 3, "2", "Lang", "1970-01-01", "2023-04-02"]
