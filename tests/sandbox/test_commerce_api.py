"""The commerce API sandbox's address sub-API: personal addresses (ownership, type spellings), validation
(qualities, corrections, refusals), auto-completion, and the scope checks of every endpoint group."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta

import httpx
import pytest

from sandbox.commerce.paths import CommercePaths
from sandbox.commerce.validation import ZURICH
from sandbox.config import COMMERCE_SCOPES
from tests.sandbox.commerce_api_support import (
    ANNA,
    ANNAS_DOMICILE,
    HANS,
    HANS_DOMICILE,
    PERSONAL,
    address_body,
    commerce_client,
    commerce_sandbox,
    error_code,
)

READ = "DCAPI_ADDRESS_READ"
VALIDATION = "/address/v1/addresses/validation"
COMPACT_TIMESTAMP = re.compile(r"^\d{8}T\d{6}[+-]\d{4}$")


# Personal addresses


async def test_the_list_holds_the_users_addresses_of_every_type() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ, subject=HANS) as http:
        response = await http.get(PERSONAL)
    assert response.status_code == 200
    addresses = response.json()
    assert [a["type"] for a in addresses] == ["MAIN", "DOMICILE", "PICKUP_POINT", "LOCKER", "POSTBOX"]
    main, domicile, _, locker, postbox = addresses
    assert "id" not in main
    assert all(uuid.UUID(a["id"]) for a in addresses[1:])
    assert domicile["geographicLocation"]["house"]["houseKey"] == "12345678"
    assert "houseNumber" not in locker["geographicLocation"]["house"]
    assert postbox["logisticLocation"]["postBoxNumber"] == "1234"
    assert all(a["addressee"]["lastName"] == "Muster" for a in addresses)


async def test_main_address_and_an_address_by_its_id() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ, subject=HANS) as http:
        main = await http.get(f"{PERSONAL}/main")
        by_id = await http.get(f"{PERSONAL}/{HANS_DOMICILE}")
        upper_case = await http.get(f"{PERSONAL}/{HANS_DOMICILE.upper()}")
    assert main.status_code == 200
    assert main.json()["type"] == "MAIN" and "id" not in main.json()
    assert main.json()["geographicLocation"]["zip"] == {"zip": "3030", "city": "Bern"}
    assert by_id.status_code == 200
    assert by_id.json()["id"] == HANS_DOMICILE
    assert by_id.json()["geographicLocation"]["zip"]["city"] == "Zürich"
    assert upper_case.json() == by_id.json()


async def test_another_users_address_is_not_found() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ, subject=HANS) as http:
        annas = await http.get(f"{PERSONAL}/{ANNAS_DOMICILE}")
        unknown = await http.get(f"{PERSONAL}/{uuid.uuid4()}")
    async with commerce_client(config, READ, subject=ANNA) as http:
        own = await http.get(f"{PERSONAL}/{ANNAS_DOMICILE}")
        hans = await http.get(f"{PERSONAL}/{HANS_DOMICILE}")
    assert (annas.status_code, error_code(annas)) == (404, "NOT_FOUND")
    assert (unknown.status_code, error_code(unknown)) == (404, "NOT_FOUND")
    assert own.status_code == 200
    assert hans.status_code == 404


@pytest.mark.parametrize("bad_id", ["not-a-uuid", "12345", "5b7c2f1e-3d4a-4c8b-9e6f"])
async def test_an_id_that_is_no_uuid_is_400(bad_id: str) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ, subject=HANS) as http:
        response = await http.get(f"{PERSONAL}/{bad_id}")
    assert response.status_code == 400
    assert error_code(response) == "INVALID_ID"
    assert bad_id in response.json()["message"]


async def test_a_user_the_sandbox_does_not_know_has_no_addresses() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ, subject="someone-else") as http:
        listed = await http.get(PERSONAL)
        main = await http.get(f"{PERSONAL}/main")
    assert listed.status_code == main.status_code == 404


async def test_real_type_spelling_serves_pick_post_and_my_post_24() -> None:
    config, _ = commerce_sandbox(commerce_type_spelling="real")
    async with commerce_client(config, READ, subject=HANS) as http:
        listed = (await http.get(PERSONAL)).json()
        locker = (await http.get(f"{PERSONAL}/7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d")).json()
    assert [a["type"] for a in listed] == ["MAIN", "DOMICILE", "PICK_POST", "MY_POST_24", "POSTBOX"]
    assert locker["type"] == "MY_POST_24"
    # The configured users keep the spec's spelling: only the answer changes.
    assert config.commerce_users[HANS].addresses[3]["type"] == "LOCKER"


# Scopes and tokens


async def test_a_client_credentials_token_cannot_read_personal_addresses() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        response = await http.get(PERSONAL)
    assert response.status_code == 403
    assert response.json()["error"] == "insufficient_scope"
    assert response.json()["code"] == "FORBIDDEN"
    assert response.headers["www-authenticate"].startswith("Bearer ")


async def test_a_user_token_without_the_read_scope_is_403() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, "DCAPI_DELIVERY", "openid", subject=HANS) as http:
        response = await http.get(PERSONAL)
    assert response.status_code == 403
    assert "DCAPI_ADDRESS_READ" in response.headers["www-authenticate"]


@pytest.mark.parametrize("authorization", [None, "Bearer unknown-token", "Basic c2FuZGJveDpzZWNyZXQ="])
async def test_without_a_valid_bearer_token_every_endpoint_is_401(authorization: str | None) -> None:
    config, _ = commerce_sandbox()
    headers = {"Authorization": authorization} if authorization else {}
    async with commerce_client(config) as http:
        personal = await http.get(PERSONAL, headers=headers)
        zips = await http.get("/address/v1/zips", params={"zipCity": "Bern"}, headers=headers)
        # A bad body from an unauthorised caller is never looked at.
        validation = await http.post(VALIDATION, content=b"not json", headers=headers)
    for response in (personal, zips, validation):
        assert response.status_code == 401
        assert response.json()["code"] == "UNAUTHORIZED"
        assert response.json()["error"] == "invalid_token"


async def test_an_expired_token_is_401() -> None:
    config, clock = commerce_sandbox()
    async with commerce_client(config, READ, subject=HANS) as http:
        clock.advance(3601)
        response = await http.get(PERSONAL)
    assert response.status_code == 401


_ZIPS = ("GET", "/address/v1/zips?zipCity=Bern", None)
_VALIDATE = ("POST", VALIDATION, address_body("Wankdorfallee", "4", "3030", "Bern"))
_WHEN = ("GET", "/api/delivery/v1/deliverabilities/when?address.geographicLocation.zip.zip=3030", None)
_USERS = ("POST", "/pickup/v1/users", {"userDetails": {"firstName": "Hans", "lastName": "Muster"}})
_POINTS = ("POST", "/pickup/v1/points", {"address": {"zip": {"zip": "3030"}}, "verified": None})
_PATHS = CommercePaths()


@pytest.mark.parametrize(
    ("request_", "granted", "refused"),
    [
        (_VALIDATE, "DCAPI_ADDRESS_READ", "DCAPI_ADDRESS_AUTOCOMPLETE"),
        (_VALIDATE, "DCAPI_ADDRESS_VALIDATE", "DCAPI_DELIVERY"),
        (_ZIPS, "DCAPI_ADDRESS_READ", "DCAPI_ADDRESS_VALIDATE"),
        (_ZIPS, "DCAPI_ADDRESS_AUTOCOMPLETE", "DCAPI_DELIVERY"),
        (("GET", "/address/v1/streets?name=Linden", None), "DCAPI_ADDRESS_AUTOCOMPLETE", "DCAPI_PICKUP"),
        (
            ("GET", "/address/v1/houses?zip=6010&streetname=Lindenstrasse&number=1", None),
            "DCAPI_ADDRESS_AUTOCOMPLETE",
            "DCAPI_ADDRESS_VALIDATE",
        ),
        (_WHEN, "DCAPI_DELIVERY", "DCAPI_ADDRESS_READ"),
        (("GET", "/api/delivery/v1/options/holidays", None), "DCAPI_DELIVERY", "DCAPI_PICKUP"),
        (("GET", "/api/delivery/v1/deliverabilities/how/PRI", None), "DCAPI_DELIVERY", "openid"),
        (_USERS, "DCAPI_PICKUP", "DCAPI_DELIVERY"),
        (_POINTS, "DCAPI_PICKUP", "DCAPI_ADDRESS_READ"),
        (("POST", _PATHS.barcode_path, {"any": "label"}), "DCAPI_BARCODE_READ", "DCAPI_RETURN_ORDER"),
        (("POST", _PATHS.return_order_path, {"any": "order"}), "DCAPI_RETURN_ORDER", "DCAPI_BARCODE_READ"),
    ],
)
async def test_each_endpoint_group_takes_its_scopes(
    request_: tuple[str, str, dict[str, object] | None], granted: str, refused: str
) -> None:
    method, path, body = request_
    config, _ = commerce_sandbox()
    async with commerce_client(config, granted) as http:
        allowed = await http.request(method, path, json=body)
    async with commerce_client(config, refused) as http:
        forbidden = await http.request(method, path, json=body)
    assert allowed.status_code == 200, allowed.text
    assert forbidden.status_code == 403
    assert forbidden.json()["error"] == "insufficient_scope"


async def test_unknown_paths_answer_the_commerce_error_body() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, *COMMERCE_SCOPES, subject=HANS) as http:
        missing = await http.get("/address/v1/nothing")
        wrong_method = await http.delete("/address/v1/zips")
    assert (missing.status_code, error_code(missing)) == (404, "NOT_FOUND")
    assert (wrong_method.status_code, error_code(wrong_method)) == (405, "METHOD_NOT_ALLOWED")


# Validation


async def validate(body: object, *, http: httpx.AsyncClient) -> httpx.Response:
    return await http.post(VALIDATION, json=body)


async def test_a_building_as_given_is_certified_in_its_official_spelling() -> None:
    config, clock = commerce_sandbox()
    async with commerce_client(config, "DCAPI_ADDRESS_VALIDATE") as http:
        response = await validate(address_body("lindenstr.", "14 A", "6010", "KRIENS"), http=http)
    assert response.status_code == 200
    result = response.json()
    assert result["quality"] == "CERTIFIED"
    address = result["address"]
    assert address["type"] == "DOMICILE"
    assert address["geographicLocation"]["house"]["street"] == "Lindenstrasse"
    assert address["geographicLocation"]["house"]["houseNumber"] == "14a"
    assert address["geographicLocation"]["house"]["houseKey"].isdigit()
    assert address["geographicLocation"]["zip"] == {"zip": "6010", "city": "Kriens"}
    assert address["addressee"] == {"firstName": "Hans", "lastName": "Muster"}
    assert address["logisticLocation"] == {"postBoxNumber": "", "house": {}, "zip": {}}
    uuid.UUID(address["id"])
    assert COMPACT_TIMESTAMP.match(result["expires"])
    expires = datetime.strptime(result["expires"], "%Y%m%dT%H%M%S%z")
    assert expires == datetime.fromtimestamp(clock(), ZURICH).replace(microsecond=0) + timedelta(days=365)


async def test_umlauts_spelled_out_still_certify() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        response = await validate(address_body("Bahnhofstrasse", "1", "8001", "Zuerich"), http=http)
    assert response.json()["quality"] == "CERTIFIED"
    assert response.json()["address"]["geographicLocation"]["zip"]["city"] == "Zürich"


async def test_the_same_address_validates_to_the_same_id() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        first = await validate(address_body("Wankdorfallee", "4", "3030", "Bern"), http=http)
        again = await validate(address_body("wankdorfallee", "4", "3030", "bern"), http=http)
        other = await validate(address_body("Wankdorfallee", "6", "3030", "Bern"), http=http)
    assert first.json()["address"]["id"] == again.json()["address"]["id"]
    assert first.json()["address"]["id"] != other.json()["address"]["id"]


async def test_every_default_users_domicile_address_certifies_with_its_house_key() -> None:
    config, _ = commerce_sandbox()
    houses = [
        address
        for user in config.commerce_users.values()
        for address in user.addresses
        if address["type"] in ("MAIN", "DOMICILE")
    ]
    async with commerce_client(config, READ) as http:
        for address in houses:
            location = address["geographicLocation"]
            body = address_body(
                location["house"]["street"],
                location["house"]["houseNumber"],
                location["zip"]["zip"],
                location["zip"]["city"],
            )
            result = (await validate(body, http=http)).json()
            assert result["quality"] == "CERTIFIED", address
            assert (
                result["address"]["geographicLocation"]["house"]["houseKey"] == location["house"]["houseKey"]
            )


@pytest.mark.parametrize(
    ("given", "zip_city"),
    [
        # The zip of another part of the town.
        (("Zentralstrasse", "40", "2503", "Biel"), ("2502", "Biel/Bienne")),
        # No town name.
        (("Lindenweg", "4", "6047", ""), ("6047", "Kastanienbaum")),
        # No zip.
        (("Mühleweg", "5", "", "Gipf-Oberfrick"), ("5073", "Gipf-Oberfrick")),
        # The wrong town for the zip.
        (("Bahnhofstrasse", "1", "3030", "Zürich"), ("8001", "Zürich")),
    ],
)
async def test_a_building_found_once_zip_or_city_is_corrected_is_usually_certified(
    given: tuple[str, str, str, str], zip_city: tuple[str, str]
) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        result = (await validate(address_body(*given), http=http)).json()
    assert result["quality"] == "USUALLY_CERTIFIED"
    location = result["address"]["geographicLocation"]
    assert (location["zip"]["zip"], location["zip"]["city"]) == zip_city
    assert location["house"]["houseKey"].isdigit()


@pytest.mark.parametrize(
    ("given", "street"),
    [
        (("lindenstrasse", "99", "6010", "Kriens"), "Lindenstrasse"),
        (("Nirgendweg", "1", "6010", "Kriens"), "Nirgendweg"),
        (("Lindenstrasse", "", "6010", "Kriens"), "Lindenstrasse"),
    ],
)
async def test_an_unknown_building_in_a_known_town_is_domicile_unknown(
    given: tuple[str, str, str, str], street: str
) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        result = (await validate(address_body(*given), http=http)).json()
    assert result["quality"] == "DOMICILE_UNKNOWN"
    house = result["address"]["geographicLocation"]["house"]
    assert house["street"] == street
    assert "houseKey" not in house
    assert result["address"]["geographicLocation"]["zip"] == {"zip": "6010", "city": "Kriens"}


COUNTRY = [
    ("Hauptstrasse", "20", "3818", "Grindelwald"),
    ("Via Serlas", "12", "7500", "St. Moritz"),
    ("Rue de Lausanne", "5", "1950", "Sion"),
    ("Marktgasse", "3", "9000", "St. Gallen"),
    ("Rue du Seyon", "10", "2000", "Neuchâtel"),
    ("Freie Strasse", "35", "4001", "Basel"),
    ("Stadthausstrasse", "4", "8400", "Winterthur"),
    ("Rue de Romont", "2", "1700", "Fribourg"),
    ("Promenade", "60", "7270", "Davos Platz"),
    ("Via della Posta", "2", "6600", "Locarno"),
]


async def test_an_address_anywhere_in_the_country_validates_from_the_postcode_directory() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        results = [(await validate(address_body(*given), http=http)).json() for given in COUNTRY]
        again = (await validate(address_body(*COUNTRY[0]), http=http)).json()
        typo = (await validate(address_body("Hauptstrasse", "20", "3818", "Grindelwlad"), http=http)).json()
        nowhere = (await validate(address_body("xyz", "1", "3818", "Grindelwald"), http=http)).json()
    certified = [result for result in results if result["quality"] == "CERTIFIED"]
    assert len(certified) >= 9  # a few buildings the draw says do not exist
    for result in certified:
        assert result["address"]["geographicLocation"]["house"]["houseKey"].isdigit()
    assert again == results[0]  # the same address, the same answer
    assert typo["quality"] == "USUALLY_CERTIFIED"
    assert typo["address"]["geographicLocation"]["zip"] == {"zip": "3818", "city": "Grindelwald"}
    assert nowhere["quality"] == "DOMICILE_UNKNOWN"
    assert "houseKey" not in nowhere["address"]["geographicLocation"]["house"]


async def test_an_unknown_town_is_unknown_and_echoed() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        result = (await validate(address_body("Hauptgasse", "1", "9999", "Nowhere"), http=http)).json()
    assert result["quality"] == "UNKNOWN"
    assert result["address"]["geographicLocation"]["zip"] == {"zip": "9999", "city": "Nowhere"}


async def test_a_post_box_number_makes_a_postbox_address_at_the_po_box_zip() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        with_street = await validate(
            address_body("Wankdorfallee", "4", "3030", "Bern", post_box="1234"), http=http
        )
        town_only = await validate(address_body("", "", "3030", "Bern", post_box="77"), http=http)
    assert with_street.json()["quality"] == "CERTIFIED"
    address = with_street.json()["address"]
    assert address["type"] == "POSTBOX"
    assert address["logisticLocation"] == {
        "postBoxNumber": "1234",
        "house": {"street": "Postfach 1234"},
        "zip": {"zip": "3001", "city": "Bern"},
    }
    assert address["geographicLocation"]["house"]["houseKey"] == "76543210"
    assert town_only.json()["quality"] == "CERTIFIED"
    assert town_only.json()["address"]["logisticLocation"]["postBoxNumber"] == "77"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (address_body("Wankdorfallee", "4", "", ""), "zip"),
        ({"addressee": {"firstName": "Hans"}}, "zip"),
        (address_body("Wankdorfallee", "4", 3030, "Bern"), "geographicLocation.zip.zip"),  # type: ignore[arg-type]
        (address_body("Wankdorfallee", 4, "3030", "Bern"), "geographicLocation.house.houseNumber"),  # type: ignore[arg-type]
        (address_body("Wankdorfallee", "4", "3030", "Bern", fullValidation="yes"), "fullValidation"),
        ({"geographicLocation": "Wankdorfallee 4, 3030 Bern"}, "geographicLocation"),
        (
            {**address_body("", "", "3030", "Bern"), "addressee": {"lastName": ["Muster"]}},
            "addressee.lastName",
        ),
        (["Wankdorfallee", "4", "3030", "Bern"], "object"),
    ],
)
async def test_invalid_validation_requests_are_400_naming_the_field(body: object, named: str) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        response = await validate(body, http=http)
    assert response.status_code == 400
    assert error_code(response) == "INVALID_ADDRESS_PARAMETER"
    assert named in response.json()["message"]


@pytest.mark.parametrize("content", [b"", b"{not json", b"\xff\xfe"])
async def test_a_validation_body_that_is_not_json_is_400(content: bytes) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        response = await http.post(VALIDATION, content=content)
    assert response.status_code == 400
    assert error_code(response) == "INVALID_ADDRESS_PARAMETER"


# Auto-completion


async def test_zips_by_town_name_or_zip_prefix_carry_city39() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, "DCAPI_ADDRESS_AUTOCOMPLETE") as http:
        by_name = await http.get("/address/v1/zips", params={"zipCity": "bern"})
        by_zip = await http.get("/address/v1/zips", params={"zipCity": "250", "type": "DOMICILE"})
    assert by_name.status_code == 200
    zips = by_name.json()["zips"]
    bern = [entry for entry in zips if entry["city39"] == "Bern"]
    assert {"3008", "3011", "3030"} <= {entry["zip"] for entry in bern}
    assert bern[0] == {"zip": bern[0]["zip"], "city18": "Bern", "city27": "Bern", "city39": "Bern"}
    # Every locality of the postcode directory: Bernex and Berneck too, by postcode.
    assert {"Bernex", "Berneck"} <= {entry["city39"] for entry in zips}
    assert [entry["zip"] for entry in zips] == sorted(entry["zip"] for entry in zips)
    found = [z["zip"] for z in by_zip.json()["zips"]]
    assert {"2502", "2503", "2504", "2505"} <= set(found) and all(z.startswith("250") for z in found)


async def test_postbox_zips_are_the_po_box_postcodes() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        boxes = await http.get("/address/v1/zips", params={"zipCity": "Biel", "type": "POSTBOX"})
        bern = await http.get("/address/v1/zips", params={"zipCity": "Bern", "type": "postbox"})
    assert [z["zip"] for z in boxes.json()["zips"]] == ["2501", "2510"]
    assert [z["zip"] for z in bern.json()["zips"]] == ["3001"]


async def test_streets_by_word_prefix_within_a_zip() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        everywhere = await http.get("/address/v1/streets", params={"name": "linden"})
        in_kriens = await http.get("/address/v1/streets", params={"name": "linden", "zip": "6010"})
    assert everywhere.json() == {
        "streets": ["Ausser-Lindenegg", "In der Linden", "Lindenstrasse", "Lindenweg"]
    }
    assert in_kriens.json() == {"streets": ["Lindenstrasse"]}


async def test_houses_list_number_and_suffix_apart() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        all_numbers = await http.get(
            "/address/v1/houses", params={"zip": "3011", "streetname": "spitalgasse", "number": ""}
        )
        twelve = await http.get(
            "/address/v1/houses", params={"zip": "3011", "streetname": "Spitalgasse", "number": "12"}
        )
        suffix = await http.get(
            "/address/v1/houses", params={"zip": "6010", "streetname": "Lindenstrasse", "number": "14a"}
        )
    assert all_numbers.json() == {"houses": ["2", "4", "12", "12 A"]}
    assert twelve.json() == {"houses": ["12", "12 A"]}
    assert suffix.json() == {"houses": ["14 A"]}


@pytest.mark.parametrize(
    ("path", "params", "named"),
    [
        ("/address/v1/zips", {}, "zipCity"),
        ("/address/v1/zips", {"zipCity": "B"}, "zipCity"),
        ("/address/v1/zips", {"zipCity": "Bern", "type": "PARCEL"}, "type"),
        ("/address/v1/streets", {"name": " "}, "name"),
        ("/address/v1/streets", {"name": "Linden", "zip": "60"}, "zip"),
        ("/address/v1/houses", {"streetname": "Lindenstrasse", "number": "1"}, "zip"),
        ("/address/v1/houses", {"zip": "6010", "number": "1"}, "streetname"),
    ],
)
async def test_incomplete_search_parameters_are_400(path: str, params: dict[str, str], named: str) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        response = await http.get(path, params=params)
    assert response.status_code == 400
    assert error_code(response) == "INVALID_SEARCH_PARAMETER"
    assert named in response.json()["message"]


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/address/v1/zips", {"zipCity": "Atlantis"}),
        ("/address/v1/zips", {"zipCity": "3030", "type": "POSTBOX"}),
        ("/address/v1/streets", {"name": "Lindenstrasse", "zip": "3030"}),
        ("/address/v1/houses", {"zip": "6010", "streetname": "Lindenstrasse", "number": "99"}),
        ("/address/v1/houses", {"zip": "6010", "streetname": "Nirgendweg", "number": ""}),
    ],
)
async def test_a_search_without_results_is_404(path: str, params: dict[str, str]) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, READ) as http:
        response = await http.get(path, params=params)
    assert response.status_code == 404
    assert error_code(response) == "NO_RESULTS"
