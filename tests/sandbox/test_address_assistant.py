"""Address-service sandbox: the address assistant (/autocomplete4, /autocomplete3, /autocomplete2 and
/buildingverification2): every query variant of the §4.3 table, the matching rule, ordering, field names."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.address_service.reference_seed import load_reference
from tests.sandbox.test_address_support import address_client

pytestmark = pytest.mark.asyncio

KRIENS_ONRP = 1070
LINDENSTRASSE_STRID = 10001
LINDENSTRASSE_12_HOUSE_KEY = 100000006
LINDENSTRASSE_14A_HOUSE_KEY = 100000008
V4_FIELDS = {
    "Canton", "CountryCode", "HouseKey", "HouseNo", "HouseNoAddition", "ONRP", "STRID", "StreetName",
    "TownName", "ZipAddition", "ZipCode",
}  # fmt: skip
V2_FIELDS = {
    "HouseKey", "HouseNumber", "HouseNumberAddition", "Onrp", "StrId", "Streetname", "TownName",
    "ZipAddition", "Zipcode",
}  # fmt: skip


async def complete(zip_order_mode: int = 0, **request: Any) -> list[dict[str, Any]]:
    body = {"request": request, "zipOrderMode": zip_order_mode, "zipFilterMode": 0}
    async with address_client() as client:
        response = await client.post("/autocomplete4", json=body)
    result = response.json()["QueryAutoComplete4Result"]
    assert result["Status"] == 0
    entries: list[dict[str, Any]] = result["AutoCompleteResult"]
    assert all(set(entry) == V4_FIELDS for entry in entries)
    return entries


def towns(entries: list[dict[str, Any]]) -> list[str]:
    return [f"{entry['ZipCode']} {entry['TownName']}" for entry in entries]


def streets(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["StreetName"] for entry in entries]


def buildings(entries: list[dict[str, Any]]) -> list[str]:
    return [f"{entry['StreetName']} {entry['HouseNo']}{entry['HouseNoAddition']}" for entry in entries]


def reference_buildings(house_no: str, town: str | None = None) -> set[str]:
    reference = load_reference()
    found = set()
    for building in reference.buildings:
        address = reference.address(building.house_key)
        if town is not None and address.town.town_name != town:
            continue
        if f"{building.house_no}{building.house_no_addition}".startswith(house_no):
            found.add(f"{address.street.street_name} {building.house_no}{building.house_no_addition}")
    return found


async def test_towns_by_postcode_and_town_terms() -> None:
    entries = await complete(ONRP=0, ZipCode="60", TownName="K", STRID=0, StreetName="", HouseNo="")
    # The spec's example (6010 Kriens, 6047 Kastanienbaum) among every Swiss town the rule matches.
    assert towns(entries) == [
        "6010 Kriens", "6010 Pilatus Kulm", "6047 Kastanienbaum", "6056 Kägiswil", "6064 Kerns"
    ]  # fmt: skip
    kriens = entries[0]
    assert kriens["ONRP"] == str(KRIENS_ONRP) and kriens["STRID"] == "0" and kriens["HouseKey"] == "0"
    assert (kriens["Canton"], kriens["CountryCode"], kriens["ZipAddition"]) == ("LU", "CH", "00")
    assert kriens["StreetName"] == kriens["HouseNo"] == ""


async def test_town_terms_match_at_the_start_of_any_word() -> None:
    assert towns(await complete(TownName="bienne", ZipCode="2502")) == ["2502 Biel/Bienne"]
    assert towns(await complete(TownName="oberfrick")) == ["5073 Gipf-Oberfrick"]
    ricks = towns(await complete(TownName="rick"))  # Rickenbach …, never Frick or Gipf-Oberfrick
    assert ricks and all(" Rick" in town for town in ricks)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (0, ["2501", "2502", "2503", "2504", "2505", "2510"]),
        (1, ["2502", "2503", "2504", "2505", "2501", "2510"]),
        (2, ["2501", "2510", "2502", "2503", "2504", "2505"]),
    ],
)
async def test_zip_order_mode(mode: int, expected: list[str]) -> None:
    entries = await complete(mode, ZipCode="25", TownName="Biel")
    assert [entry["ZipCode"] for entry in entries] == expected


async def test_streets_without_town_restriction_follow_the_word_start_rule() -> None:
    entries = await complete(StreetName="Linden")
    assert sorted(streets(entries)) == sorted(
        ["Lindenstrasse", "Lindenweg", "Ausser-Lindenegg", "In der Linden"]
    )
    assert "Dorflindenstrasse" not in streets(entries)
    assert all(entry["STRID"] != "0" and entry["HouseKey"] == "0" for entry in entries)


async def test_streets_in_towns_by_terms() -> None:
    assert streets(await complete(StreetName="linden", TownName="Kast")) == [
        "Ausser-Lindenegg",
        "In der Linden",
        "Lindenweg",
    ]
    assert streets(await complete(StreetName="Linden", ZipCode="6010")) == ["Lindenstrasse"]


async def test_streets_in_exactly_one_town_ignore_postcode_and_town() -> None:
    entries = await complete(
        ONRP=KRIENS_ONRP, StreetName="Linden", ZipCode="9999", ZipAddition="99", TownName="X"
    )
    assert streets(entries) == ["Lindenstrasse"]
    assert entries[0]["STRID"] == str(LINDENSTRASSE_STRID)


async def test_buildings_without_restriction() -> None:
    entries = await complete(HouseNo="14a")
    assert set(buildings(entries)) == reference_buildings("14a")
    lindenstrasse = [entry for entry in entries if entry["StreetName"] == "Lindenstrasse"]
    assert lindenstrasse[0]["HouseKey"] == str(LINDENSTRASSE_14A_HOUSE_KEY)


async def test_buildings_on_streets_by_terms_are_in_house_number_order() -> None:
    entries = await complete(StreetName="Lindenstr", HouseNo="1")
    assert buildings(entries) == [f"Lindenstrasse {no}" for no in ("1", "10", "12", "14", "14a", "16")]


async def test_buildings_in_towns_by_terms() -> None:
    entries = await complete(TownName="Kastanienbaum", HouseNo="2")
    assert set(buildings(entries)) == reference_buildings("2", town="Kastanienbaum")
    assert {"Lindenweg 2", "In der Linden 2"} <= set(buildings(entries))


async def test_buildings_on_exactly_one_street_ignore_the_other_terms() -> None:
    entries = await complete(STRID=LINDENSTRASSE_STRID, StreetName="Nirgendweg", ZipCode="0000", HouseNo="1")
    assert buildings(entries) == [f"Lindenstrasse {no}" for no in ("1", "10", "12", "14", "14a", "16")]


async def test_buildings_on_streets_and_towns_by_terms() -> None:
    assert buildings(await complete(StreetName="Linden", TownName="Kriens", HouseNo="14")) == [
        "Lindenstrasse 14",
        "Lindenstrasse 14a",
    ]
    assert buildings(await complete(StreetName="Linden", ZipCode="60", HouseNoAddition="a")) == [
        "Lindenstrasse 14a"
    ]


async def test_house_key_has_no_influence() -> None:
    plain = await complete(StreetName="Linden", TownName="Kriens", HouseNo="1")
    with_key = await complete(StreetName="Linden", TownName="Kriens", HouseNo="1", HouseKey=123)
    assert plain == with_key


async def test_empty_request_finds_nothing() -> None:
    assert await complete() == []


async def test_autocomplete3_returns_numbers() -> None:
    body = {"request": {"StreetName": "Lindenstr", "HouseNo": "12"}, "zipOrderMode": 0}
    async with address_client() as client:
        result = (await client.post("/autocomplete3", json=body)).json()
    assert list(result) == ["QueryAutoComplete3Result"]
    (entry,) = result["QueryAutoComplete3Result"]["AutoCompleteResult"]
    assert set(entry) == V4_FIELDS
    assert entry["HouseKey"] == LINDENSTRASSE_12_HOUSE_KEY
    assert entry["ONRP"] == KRIENS_ONRP and entry["STRID"] == LINDENSTRASSE_STRID


async def test_autocomplete2_uses_the_obsolete_names() -> None:
    body = {"request": {"Onrp": 0, "Zipcode": "6010", "StrId": 0, "Streetname": "Linden", "HouseNumber": "1",
                        "HouseNumberAddition": "a"}, "zipOrderMode": 0}  # fmt: skip
    async with address_client() as client:
        result = (await client.post("/autocomplete2", json=body)).json()
    assert list(result) == ["QueryAutoCompleteResult"]
    (entry,) = result["QueryAutoCompleteResult"]["AutoCompleteResult"]
    assert set(entry) == V2_FIELDS  # no Canton, no CountryCode
    assert entry == {
        "HouseKey": LINDENSTRASSE_14A_HOUSE_KEY,
        "HouseNumber": "14",
        "HouseNumberAddition": "a",
        "Onrp": KRIENS_ONRP,
        "StrId": LINDENSTRASSE_STRID,
        "Streetname": "Lindenstrasse",
        "TownName": "Kriens",
        "ZipAddition": "00",
        "Zipcode": "6010",
    }


async def test_autocomplete_is_a_hard_comparison() -> None:
    assert await complete(StreetName="Lindnstrasse") == []


async def verify(**params: str) -> dict[str, Any]:
    async with address_client() as client:
        body = (await client.get("/buildingverification2", params=params)).json()
    result = body["QueryBuildingVerification2Result"]
    assert result["Status"] == 0
    data: dict[str, Any] = result["BuildingVerificationData"]
    return data


async def test_building_verification_of_an_accurate_address() -> None:
    data = await verify(
        streetname="Lindenstrasse", houseno="12", housenoaddition="", zipcode="6010", townName="Kriens"
    )
    assert data == {
        "Canton": "LU",
        "CountryCode": "CH",
        "HouseKey": LINDENSTRASSE_12_HOUSE_KEY,
        "HouseNo": "12",
        "HouseNoAddition": "",
        "ONRP": KRIENS_ONRP,
        "PSTAT": 1,
        "STRID": LINDENSTRASSE_STRID,
        "StreetName": "Lindenstrasse",
        "TownName": "Kriens",
        "ZipAddition": "00",
        "ZipCode": "6010",
    }


async def test_building_verification_returns_the_official_spelling() -> None:
    data = await verify(streetname="muehleweg", houseno="7", zipcode="5073")
    assert (data["PSTAT"], data["StreetName"], data["TownName"]) == (2, "Mühleweg", "Gipf-Oberfrick")
    with_addition = await verify(
        streetname="Lindenstrasse", houseno="14", housenoaddition="A", townName="Kriens"
    )
    assert (with_addition["PSTAT"], with_addition["HouseKey"]) == (2, LINDENSTRASSE_14A_HOUSE_KEY)


@pytest.mark.parametrize(
    ("params", "pstat"),
    [
        ({"streetname": "Lindenstrasse", "houseno": "13", "zipcode": "6010"}, 3),
        ({"streetname": "Lindenstrase", "houseno": "12", "zipcode": "6010"}, 4),
        ({"streetname": "Lindenstrasse", "houseno": "12", "zipcode": "9999"}, 5),
        ({"streetname": "Lindenstrasse", "houseno": "12", "zipcode": "6010", "townName": "Frick"}, 5),
    ],
)
async def test_building_verification_of_inaccurate_addresses(params: dict[str, str], pstat: int) -> None:
    data = await verify(**params)
    assert data["PSTAT"] == pstat
    assert data["HouseKey"] == 0
