"""Address-service sandbox: individual queries (/runquery2, /runquery2withclient) and the error-tolerant
matching behind them: every QSTAT, ShortReport positions, the 94 % rule and field-name spellings."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.address_service.fields import INPUT_FIELDS
from sandbox.address_service.matching import MIN_SCORE, Matcher
from sandbox.address_service.reference_seed import load_reference
from sandbox.address_service.shortreport import REPORT_LENGTH
from tests.sandbox.test_address_support import (
    HANS_MUSTER,
    MAINTENANCE,
    VALIDATION,
    address_client,
    make_config,
    query_body,
    result_data,
)

pytestmark = pytest.mark.asyncio

QUERY_FIELDS = [
    "QSTAT", "ShortReport", "CorrectionType", "TotalScore", "ValidFrom", "ValidTo", "Birthdate", "Housekey",
    "Company", "Prename", "Prename2", "Name", "MaidenName", "AddressAddition", "CoAddress", "Streetname",
    "HouseNo", "HouseNoAddition", "Floor", "ZIPcode", "ZIPAddition", "TownName", "Canton", "CountryCode",
    "PoBoxTerm", "PoBoxNo", "PoBoxZIP", "PoBoxZIPAddition", "PoBoxTownName",
]  # fmt: skip
POSITION = {name: index for index, name in enumerate(INPUT_FIELDS)}


def person(prename: str, name: str, street: str, house_no: str, zip_code: str, town: str) -> dict[str, str]:
    return {
        "Prename_in": prename,
        "Name_in": name,
        "StreetName_in": street,
        "HouseNo_in": house_no,
        "ZIPCode_in": zip_code,
        "TownName_in": town,
    }


def company(name: str, street: str, house_no: str, zip_code: str, town: str) -> dict[str, str]:
    return {
        "Company_in": name,
        "Streetname_in": street,
        "HouseNo_in": house_no,
        "ZipCode_in": zip_code,
        "TownName_in": town,
    }


async def query(fields: dict[str, str], key: str = MAINTENANCE, record_id: int = 1) -> dict[str, str]:
    async with address_client() as client:
        response = await client.post("/runquery2", json=query_body(key, record_id, **fields))
    body = response.json()
    assert body["RunQuery2Result"]["Status"] == 0
    return result_data(body)


async def test_response_shape_and_field_names() -> None:
    async with address_client() as client:
        response = await client.post("/runquery2", json=query_body(record_id=4711, **HANS_MUSTER))
    body = response.json()
    assert list(body) == ["RunQuery2Result"]
    result = body["RunQuery2Result"]
    assert set(result) == {"Result", "SettlementId", "Status"}
    assert result["Status"] == 0 and isinstance(result["SettlementId"], int) and result["SettlementId"] > 0
    assert result["Result"]["Id"] == 4711
    assert [item["FieldName"] for item in result["Result"]["Data"]] == QUERY_FIELDS
    assert all(isinstance(item["Value"], str) for item in result["Result"]["Data"])


@pytest.mark.parametrize(
    ("fields", "qstat", "expected"),
    [
        (HANS_MUSTER, "1", {"Prename": "Hans", "Name": "Muster", "Birthdate": "19750314", "Canton": "LU"}),
        (person("Beat", "Muster", "Lindenstrasse", "12", "6010", "Kriens"), "2", {"Name": "Muster"}),
        (
            company("Bäckerei Huber", "Hauptstrasse", "5", "5070", "Frick"),
            "3",
            {"Company": "Bäckerei Huber AG"},
        ),
        (
            person("Peter", "Meier", "Bahnhofstrasse", "8", "5070", "Frick"),
            "4",
            {"Streetname": "Zentralstrasse", "HouseNo": "40", "ZIPcode": "2502", "ValidFrom": "20240301"},
        ),
        (person("Rosa", "Keller", "Dorfstrasse", "3", "4322", "Mumpf"), "25", {"ValidTo": "20230115"}),
        (
            company("Schreinerei Frei GmbH", "Industriestrasse", "10", "5082", "Kaisten"),
            "25",
            {"ValidTo": "20221231"},
        ),
        (
            person("Marco", "Rossi", "Via Leoncavallo", "4", "6614", "Brissago"),
            "27",
            {"ValidFrom": "20230901"},
        ),
        (person("Lisa", "Niemand", "Lindenstrasse", "12", "6010", "Kriens"), "50", {"Name": "Niemand"}),
        (person("Hans", "Muster", "Nirgendweg", "99", "6010", "Kriens"), "51", {"Streetname": "Nirgendweg"}),
    ],
)
async def test_each_qstat(fields: dict[str, str], qstat: str, expected: dict[str, str]) -> None:
    data = await query(fields)
    assert data["QSTAT"] == qstat
    assert {name: data[name] for name in expected} == expected
    assert len(data["ShortReport"]) == REPORT_LENGTH


async def test_exact_hit_report_positions() -> None:
    data = await query(HANS_MUSTER)
    report = data["ShortReport"]
    assert report[POSITION["Prename"]] == report[POSITION["Name"]] == "1"
    assert report[POSITION["Streetname"]] == report[POSITION["HouseNo"]] == "1"
    assert report[POSITION["ZIPCode"]] == report[POSITION["TownName"]] == "1"
    assert (
        report[POSITION["ZIPAddition"]]
        == report[POSITION["Canton"]]
        == report[POSITION["CountryCode"]]
        == "4"
    )
    assert report[POSITION["Company"]] == report[POSITION["Floor"]] == "-"
    assert report[21:] == "P-1"
    assert data["CorrectionType"] == "0" and data["TotalScore"] == "100.00"


async def test_typos_are_corrected_and_reported() -> None:
    data = await query(person("Hans", "Mustr", "Lindenstrase", "12", "6010", "Krienz"))
    report = data["ShortReport"]
    assert data["QSTAT"] == "1"
    assert (data["Name"], data["Streetname"], data["TownName"]) == ("Muster", "Lindenstrasse", "Kriens")
    assert report[POSITION["Name"]] == report[POSITION["Streetname"]] == report[POSITION["TownName"]] == "3"
    assert data["CorrectionType"] == "1"
    assert 94.0 <= float(data["TotalScore"]) < 100.0


async def test_umlauts_and_case_are_standardized() -> None:
    data = await query(person("JUERG", "zuercher", "Muehleweg", "7", "5073", "gipf-oberfrick"))
    report = data["ShortReport"]
    assert data["QSTAT"] == "1"
    assert (data["Prename"], data["Name"], data["Streetname"]) == ("Jürg", "Zürcher", "Mühleweg")
    assert (
        report[POSITION["Prename"]] == report[POSITION["Streetname"]] == report[POSITION["TownName"]] == "2"
    )
    assert data["CorrectionType"] == "0"


async def test_missing_postcode_is_supplemented() -> None:
    fields = person("Eva", "Brunner", "Wehntalerstr.", "21", "", "Schöfflisdorf")
    data = await query(fields)
    assert data["QSTAT"] == "1" and data["ZIPcode"] == "8165"
    assert data["ShortReport"][POSITION["ZIPCode"]] == "4"
    assert data["ShortReport"][POSITION["Streetname"]] == "2"


async def test_house_number_with_addition_is_split() -> None:
    data = await query(person("Sabine", "Graf", "Lindenstrasse", "14a", "6010", "Kriens"))
    assert (data["QSTAT"], data["HouseNo"], data["HouseNoAddition"]) == ("1", "14", "a")
    assert data["ShortReport"][POSITION["HouseNo"]] == data["ShortReport"][POSITION["HouseNoAddition"]] == "2"


async def test_move_is_marked_in_the_report() -> None:
    data = await query(person("Peter", "Meier", "Bahnhofstrasse", "8", "5070", "Frick"))
    report = data["ShortReport"]
    assert (
        report[POSITION["Streetname"]] == report[POSITION["ZIPCode"]] == report[POSITION["TownName"]] == "5"
    )
    assert report[23] == "H"
    assert data["CorrectionType"] == "1"


async def test_deceased_person_is_marked_deleted() -> None:
    data = await query(person("Rosa", "Keller", "Dorfstrasse", "3", "4322", "Mumpf"))
    assert data["ShortReport"][POSITION["Name"]] == data["ShortReport"][POSITION["Prename"]] == "9"


async def test_unknown_address_echoes_the_input_with_no_hit_positions() -> None:
    fields = person("Hans", "Muster", "Nirgendweg", "99", "6010", "Kriens")
    data = await query(fields)
    assert (data["Prename"], data["Streetname"], data["HouseNo"], data["ZIPcode"]) == (
        "Hans",
        "Nirgendweg",
        "99",
        "6010",
    )
    assert data["Canton"] == "" and data["Housekey"] == ""
    assert data["ShortReport"][POSITION["Streetname"]] == "0"
    assert data["ShortReport"][23] == "0"
    assert data["TotalScore"] == "0.00"


@pytest.mark.parametrize(
    "fields",
    [
        person("Hans", "Muster", "Lindnstr", "12", "6010", "Krns"),  # too many errors together
        person("Hans", "Muster", "Lindenstrasse", "12", "6010", "Zürich"),  # town contradicts the postcode
        person("Hans", "Muster", "Lindenstrasse", "13", "6010", "Kriens"),  # no such building
    ],
)
async def test_no_match_below_94_percent(fields: dict[str, str]) -> None:
    data = await query(fields)
    assert data["QSTAT"] == "51"
    assert data["Streetname"] == fields["StreetName_in"] and data["TownName"] == fields["TownName_in"]


async def test_weak_person_match_falls_back_to_person_unknown() -> None:
    data = await query(person("Hanspeter", "Mustermann", "Lindenstrasse", "12", "6010", "Kriens"))
    assert data["QSTAT"] == "50"
    assert data["Prename"] == "Hanspeter" and data["Name"] == "Mustermann"


async def test_every_returned_match_scores_at_least_94() -> None:
    matcher = Matcher(load_reference())
    reference = load_reference()
    hits = 0
    for resident in reference.residents[:400]:
        address = reference.address(resident.house_key)
        record = {
            "Prename": resident.prename[:-1],
            "Name": resident.name,
            "Company": resident.company,
            "Streetname": address.street.street_name[:-2],
            "HouseNo": address.building.house_no,
            "HouseNoAddition": address.building.house_no_addition,
            "ZIPCode": address.town.zip_code,
            "TownName": address.town.town_name,
        }
        result = matcher.match(record)
        if result.qstat in ("1", "2", "3", "4", "25", "27"):
            assert result.score >= MIN_SCORE
            hits += 1
        if result.qstat == "51":
            assert result.output["Streetname"] == record["Streetname"]
    assert hits > 200  # slightly misspelt records still match


@pytest.mark.parametrize(
    ("street_field", "zip_field"),
    [("StreetName_in", "ZIPCode_in"), ("Streetname_in", "ZipCode_in"), ("streetname", "ZIPCODE")],
)
async def test_both_field_spellings_are_accepted(street_field: str, zip_field: str) -> None:
    fields = {
        "Prename_in": "Hans",
        "Name_in": "Muster",
        street_field: "Lindenstrasse",
        "HouseNo_in": "12",
        zip_field: "6010",
    }
    data = await query(fields)
    assert data["QSTAT"] == "1" and data["TownName"] == "Kriens"


@pytest.mark.parametrize(
    ("fields", "qstat"),
    [
        (HANS_MUSTER, "1"),
        (company("Muster Informatik AG", "Obernauerstrasse", "3", "6010", "Kriens"), "3"),
        (person("Peter", "Meier", "Bahnhofstrasse", "8", "5070", "Frick"), ""),
        (person("Lisa", "Niemand", "Lindenstrasse", "12", "6010", "Kriens"), ""),
    ],
)
async def test_validation_key_reports_only_1_and_3(fields: dict[str, str], qstat: str) -> None:
    data = await query(fields, key=VALIDATION)
    assert data["QSTAT"] == qstat
    if not qstat:
        assert data["ShortReport"] == "-" * 24 and data["TotalScore"] == ""
        assert data["Streetname"] == fields["StreetName_in"]


async def test_unknown_key_answers_103() -> None:
    async with address_client() as client:
        body = (await client.post("/runquery2", json=query_body("other_v1", **HANS_MUSTER))).json()
    assert body == {"RunQuery2Result": {"Result": None, "SettlementId": 0, "Status": 103}}


@pytest.mark.parametrize(
    ("reference", "status"), [("RRN-0001", 0), ("#", 402), ("RRN-0009", 403), ("RRN-4040", 404)]
)
async def test_runquery2withclient_validates_the_billing_reference(reference: str, status: int) -> None:
    body: dict[str, Any] = query_body(**HANS_MUSTER)
    body.update(billingReferenceNumber=reference, clientIdentifier="C-1", clientName="Kunde")
    async with address_client() as client:
        response = (await client.post("/runquery2withclient", json=body)).json()["RunQuery2Result"]
    assert response["Status"] == status
    if status == 0:
        assert result_data({"RunQuery2Result": response})["QSTAT"] == "1"


async def test_runquery2withclient_without_permission_answers_105() -> None:
    body: dict[str, Any] = query_body(**HANS_MUSTER)
    body["billingReferenceNumber"] = "RRN-0001"
    async with address_client(make_config(address_client_methods_allowed=False)) as client:
        response = (await client.post("/runquery2withclient", json=body)).json()
    assert response["RunQuery2Result"]["Status"] == 105
