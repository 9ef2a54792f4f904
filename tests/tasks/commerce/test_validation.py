"""Address validation results: the certified address read from an answer, changed cells found
case- and whitespace-insensitively, refused rows kept, the workbook's fills and summary read back."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import load_workbook

from connectors.commerce import CommerceRejected, ValidationRequest, ValidationResult
from tasks.commerce.per_row import RowOutcome
from tasks.commerce.validation import (
    certified_fields,
    changed_fields,
    still_valid,
    validate_addresses,
    validation_request,
    validation_table,
)
from tasks.commerce.validation_results import write_validation_results
from tests.outputs import read_output_csv

CHANGED_FILL, PROBLEM_FILL = "FFFFEB9C", "FFFFC7CE"


def answer(
    *,
    street: str = "Lindenstrasse",
    number: str = "12",
    zip_code: str = "6010",
    city: str = "Kriens",
    names: tuple[str, str] | None = ("Hans", "Muster"),
    quality: str = "CERTIFIED",
    box: str = "",
) -> ValidationResult:
    address: dict[str, Any] = {
        "id": "3c49d8c7-03ef-55aa-8843-b0994e393247",
        "type": "DOMICILE",
        "geographicLocation": {
            "house": {"street": street, "houseNumber": number, "houseKey": "100000006"},
            "zip": {"zip": zip_code, "city": city},
        },
        "logisticLocation": {"postBoxNumber": box, "house": {}, "zip": {}},
    }
    if names is not None:
        address["addressee"] = {"firstName": names[0], "lastName": names[1]}
    return ValidationResult.model_validate(
        {"quality": quality, "expires": "20991231T000000+0100", "address": address}
    )


def record(**values: Any) -> dict[str, Any]:
    base = dict.fromkeys(
        [
            "firstName",
            "lastName",
            "street",
            "houseNumber",
            "additionalAddress",
            "zip",
            "city",
            "postBoxNumber",
        ]
    )
    base.update({"firstName": "Hans", "lastName": "Muster", "street": "Lindenstrasse"})
    base.update({"houseNumber": "12", "zip": "6010", "city": "Kriens"})
    return base | values


def test_case_and_whitespace_differences_are_no_change() -> None:
    certified = certified_fields(answer())
    same = record(street="  lindenSTRASSE ", city="KRIENS", firstName="hans")
    assert changed_fields(same, certified) == []
    assert changed_fields(record(city="Krienz", houseNumber="12 "), certified) == ["city"]
    assert changed_fields(record(street="Linden strasse"), certified) == ["street"]


def test_a_field_the_answer_does_not_carry_is_not_compared_but_an_empty_one_is() -> None:
    no_names = certified_fields(answer(names=None))
    assert (no_names["firstName"], no_names["lastName"]) == (None, None)
    assert changed_fields(record(firstName="Someone"), no_names) == []
    # The answer carries postBoxNumber "": an input box number that is dropped is a change.
    assert changed_fields(record(postBoxNumber="12"), no_names) == ["postBoxNumber"]
    assert changed_fields(record(postBoxNumber=None), no_names) == []


def test_certified_fields_fall_back_to_the_logistic_location() -> None:
    result = ValidationResult.model_validate(
        {
            "quality": "CERTIFIED",
            "address": {
                "logisticLocation": {
                    "postBoxNumber": "12",
                    "house": {"street": "Postfach 12"},
                    "zip": {"zip": "2501", "city": "Biel/Bienne"},
                }
            },
        }
    )
    fields = certified_fields(result)
    assert (fields["street"], fields["zip"], fields["city"], fields["postBoxNumber"]) == (
        "Postfach 12",
        "2501",
        "Biel/Bienne",
        "12",
    )


def test_the_request_of_a_row_carries_every_leaf_field() -> None:
    request = validation_request(record(additionalAddress="c/o Beispiel", postBoxNumber=None))
    body = request.to_body()
    assert body["addressee"] == {"firstName": "Hans", "lastName": "Muster"}
    assert body["geographicLocation"]["house"] == {
        "street": "Lindenstrasse",
        "houseNumber": "12",
        "additionalAddress": "c/o Beispiel",
    }
    assert body["geographicLocation"]["zip"] == {"zip": "6010", "city": "Kriens"}
    assert body["logisticLocation"] == {"postBoxNumber": ""} and body["fullValidation"] is True


def test_an_expired_answer_is_not_used_again() -> None:
    result = answer()
    assert still_valid(result, now=dt.datetime(2099, 12, 30, tzinfo=dt.UTC))
    assert not still_valid(result, now=dt.datetime(2100, 1, 1, tzinfo=dt.UTC))


def _records() -> pd.DataFrame:
    rows = [
        {"row": 1, "Kunde": "A", **record()},
        {"row": 2, "Kunde": "B", **record(city="Krienz", street="Lindenstr.")},
        {"row": 4, "Kunde": "C", **record(zip="6011")},
    ]
    return pd.DataFrame(rows)


def _outcomes() -> list[RowOutcome[ValidationResult]]:
    return [
        RowOutcome(1, "answered", 200, answer=answer()),
        RowOutcome(2, "answered", 200, answer=answer(quality="USUALLY_CERTIFIED")),
        RowOutcome(4, "refused", 400, "geographicLocation.zip needs a zip or a city"),
    ]


def test_the_table_keeps_input_order_and_puts_a_refused_row_with_its_status_and_message() -> None:
    table = validation_table(_records(), _outcomes(), ["Kunde"])
    frame = table.frame
    assert frame["row"].tolist() == [1, 2, 4] and frame["Kunde"].tolist() == ["A", "B", "C"]
    assert frame["ChangedFields"].tolist() == [None, "street, city", None]
    refused = frame.iloc[2]
    assert (refused["ValidationStatus"], refused["HttpStatus"]) == ("refused", 400)
    assert refused["ValidationError"] == "geographicLocation.zip needs a zip or a city"
    assert refused["certified_city"] is None and refused["quality"] is None
    assert frame.iloc[0]["houseKey"] == "100000006" and frame.iloc[0]["expires"].startswith(
        "2099-12-31T00:00"
    )
    assert table.quality_counts() == {"CERTIFIED": 1, "USUALLY_CERTIFIED": 1}
    assert table.rows_changed == 1
    columns = list(frame.columns)
    assert columns.index("city") < columns.index("certified_firstName")  # input beside certified


def test_the_workbook_fills_changed_cells_and_marks_refused_rows(tmp_path: Path) -> None:
    table = validation_table(_records(), _outcomes(), ["Kunde"])
    csv_path, xlsx_path = write_validation_results(table, tmp_path, rejected_rows=2, empty_rows=1)

    assert read_output_csv(csv_path, dtype=str)["ChangedFields"].fillna("").tolist() == [
        "",
        "street, city",
        "",
    ]
    workbook = load_workbook(xlsx_path)
    sheet = workbook["Results"]
    header = [cell.value for cell in sheet[1]]

    def fill(row: int, column: str) -> str | None:
        return sheet.cell(row=row, column=header.index(column) + 1).fill.fgColor.rgb

    assert fill(3, "certified_city") == CHANGED_FILL and fill(3, "certified_street") == CHANGED_FILL
    assert sheet.cell(row=3, column=header.index("certified_street") + 1).value == "Lindenstrasse"
    unfilled = {None, "00000000"}
    assert fill(2, "certified_city") in unfilled and fill(3, "certified_zip") in unfilled
    assert fill(3, "city") in unfilled  # the input cell stays as it was
    assert fill(4, "ValidationStatus") == PROBLEM_FILL and fill(2, "ValidationStatus") in unfilled
    counts = dict(workbook["Summary"].iter_rows(min_row=2, values_only=True))
    assert counts["validated"] == 2 and counts["quality CERTIFIED"] == 1
    assert counts["quality USUALLY_CERTIFIED"] == 1 and counts["changed city"] == 1
    assert counts["refused by the service (HTTP 400)"] == 1
    assert counts["rejected before sending (rejected.csv)"] == 2 and counts["empty rows skipped"] == 1


class FakeClient:
    """validate_address answering from a table of cities; "Fail" is refused."""

    def __init__(self) -> None:
        self.sent: list[ValidationRequest] = []

    async def __aenter__(self) -> FakeClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    async def validate_address(self, request: ValidationRequest) -> ValidationResult:
        self.sent.append(request)
        city = request.geographic_location.zip.city if request.geographic_location.zip else None
        if city == "Fail":
            raise CommerceRejected("commerce: HTTP 400", code="400", meaning="", status_code=400, detail="no")
        return answer(city="Kriens")


async def test_validate_addresses_asks_once_per_record_and_keeps_refusals() -> None:
    client = FakeClient()
    records = pd.DataFrame([{"row": 1, **record()}, {"row": 3, **record(city="Fail")}])
    outcomes = await validate_addresses(lambda **_: client, records, concurrency=2)  # type: ignore[arg-type,return-value]
    assert [(o.row, o.status, o.http_status, o.error) for o in outcomes] == [
        (1, "answered", 200, None),
        (3, "refused", 400, "no"),
    ]
    assert len(client.sent) == 2


@pytest.mark.parametrize("value", [None, float("nan"), "", "  "])
def test_missing_values_compare_as_empty(value: object) -> None:
    assert changed_fields(record(additionalAddress=value), {"additionalAddress": ""}) == []
