"""Commerce models against the spec's shapes (§2) and the values real responses carry: the compact
``expires`` form, open enums with the real address type names, pickup calendars, same-day product codes,
userinfo flags, and fields the spec does not list."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from connectors.commerce import (
    Address,
    AddressType,
    Deliverabilities,
    PickupPoints,
    PickupUserRequest,
    Quality,
    SameDayAcceptance,
    Userinfo,
    ValidationRequest,
    ValidationResult,
    ZipEntry,
    format_expires,
    parse_expires,
)


def tz(hours: int, minutes: int = 0) -> dt.timezone:
    sign = -1 if hours < 0 else 1
    return dt.timezone(sign * dt.timedelta(hours=abs(hours), minutes=minutes))


# --- 2.3 expires -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("20300618T235959+0200", dt.datetime(2030, 6, 18, 23, 59, 59, tzinfo=tz(2))),
        ("20301231T080000-0500", dt.datetime(2030, 12, 31, 8, 0, 0, tzinfo=tz(-5))),
        ("20300101T000000+0000", dt.datetime(2030, 1, 1, tzinfo=dt.UTC)),
        ("20300618T120000+0530", dt.datetime(2030, 6, 18, 12, 0, 0, tzinfo=tz(5, 30))),
        ("2030-06-18T23:59:59+02:00", dt.datetime(2030, 6, 18, 23, 59, 59, tzinfo=tz(2))),
    ],
)
def test_expires_compact_form_is_an_aware_datetime(text: str, expected: dt.datetime) -> None:
    result = ValidationResult.model_validate({"quality": "CERTIFIED", "expires": text})
    assert result.expires == expected
    assert result.expires is not None and result.expires.utcoffset() == expected.utcoffset()


def test_expires_with_a_negative_offset_is_later_in_utc() -> None:
    moment = parse_expires("20300618T230000-0100")
    assert isinstance(moment, dt.datetime)
    assert moment.astimezone(dt.UTC) == dt.datetime(2030, 6, 19, 0, 0, tzinfo=dt.UTC)


def test_expires_round_trips_through_the_compact_form() -> None:
    moment = dt.datetime(2030, 6, 18, 23, 59, 59, tzinfo=tz(-3))
    assert format_expires(moment) == "20300618T235959-0300"
    assert parse_expires(format_expires(moment)) == moment


def test_unreadable_expires_names_the_field() -> None:
    with pytest.raises(ValidationError, match="expires"):
        ValidationResult.model_validate({"expires": "18.06.2030"})


# --- open enums ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        ("PICK_POST", "PICKUP_POINT"),
        ("MY_POST_24", "LOCKER"),
        ("PICKUP_POINT", "PICKUP_POINT"),
        ("LOCKER", "LOCKER"),
        ("MAIN", "MAIN"),
        ("BUSINESS", "BUSINESS"),
    ],
)
def test_address_types_are_open_and_real_names_map_to_the_spec(value: str, canonical: str) -> None:
    address = Address.model_validate({"id": "a", "type": value})
    assert address.type == value
    assert address.type is not None and address.type.canonical == canonical
    assert isinstance(address.type.canonical, AddressType)


def test_real_address_type_names_are_kept_when_written_back() -> None:
    address = Address.model_validate({"type": "MY_POST_24"})
    assert address.to_body() == {"type": "MY_POST_24"}


def test_address_type_knows_the_spec_values() -> None:
    assert AddressType("POSTBOX").is_known
    assert not AddressType("PICK_POST").is_known


@pytest.mark.parametrize("quality", ["CERTIFIED", "UNCERTIFIED", "CORRECTED", "DOMICILE_CERTIFIED"])
def test_quality_accepts_values_beyond_certified(quality: str) -> None:
    result = ValidationResult.model_validate({"quality": quality})
    assert result.quality == quality
    assert isinstance(result.quality, Quality)
    assert (result.quality == Quality.CERTIFIED) is (quality == "CERTIFIED")


def test_unknown_delivery_enum_values_are_read() -> None:
    result = Deliverabilities.model_validate(
        {
            "days": [{"deliveryDate": "2030-06-17", "deliverabilities": [], "activity": "HOLIDAY"}],
            "quality": "ESTIMATED",
            "deliveryToTheDoor": "NOT_AVAILABLE",
        }
    )
    assert (result.quality, result.delivery_to_the_door) == ("ESTIMATED", "NOT_AVAILABLE")
    assert result.days[0].activity == "HOLIDAY"


# --- 2.1 address ---------------------------------------------------------------------------------------


def test_address_of_the_spec_with_missing_house_fields() -> None:
    address = Address.model_validate(
        {
            "type": "MY_POST_24",
            "id": "9d8e7f6a-5b4c-4d3e-8f2a-1b0c9d8e7f6a",
            "nickname": "Locker",
            "addressee": {"firstName": "Hans", "lastName": "Muster"},
            "geographicLocation": {
                "house": {"street": "Bahnhofplatz"},
                "zip": {"zip": "3011", "city": "Bern"},
            },
            "logisticLocation": {
                "postBoxNumber": "",
                "house": {"street": "My Post 24 Bern Bahnhof"},
                "zip": {"zip": "3011", "city": "Bern"},
            },
        }
    )
    assert address.addressee is not None and address.addressee.title is None
    location = address.geographic_location
    assert location is not None and location.house is not None and location.house.house_number is None
    logistic = address.logistic_location
    assert logistic is not None and logistic.house is not None
    assert logistic.house.street == "My Post 24 Bern Bahnhof"


def test_main_address_without_id_and_unknown_fields_kept() -> None:
    address = Address.model_validate(
        {"type": "MAIN", "addressee": {"title": "MISTRESS", "lastName": "Muster"}, "validFrom": "2020-01-01"}
    )
    assert address.id is None
    assert address.addressee is not None and address.addressee.title == "MISTRESS"
    assert address.model_extra == {"validFrom": "2020-01-01"}
    assert address.to_body()["validFrom"] == "2020-01-01"


# --- 2.2 validation request -------------------------------------------------------------------------


def test_validation_request_body_has_the_spec_shape() -> None:
    request = ValidationRequest.of(
        {
            "firstName": "Hans",
            "lastName": "Muster",
            "title": "MISTER",
            "street": "Viktoriastrasse",
            "houseNumber": "21",
            "additionalAddress": "c/o Meier",
            "zip": "3013",
            "city": "Bern",
        }
    )
    assert request.to_body() == {
        "addressee": {"firstName": "Hans", "lastName": "Muster", "title": "MISTER"},
        "geographicLocation": {
            "house": {"street": "Viktoriastrasse", "houseNumber": "21", "additionalAddress": "c/o Meier"},
            "zip": {"zip": "3013", "city": "Bern"},
        },
        "logisticLocation": {"postBoxNumber": ""},
        "fullValidation": True,
    }


def test_validation_request_with_a_post_box() -> None:
    body = ValidationRequest.of(
        {"lastName": "Muster", "postBoxNumber": "1234"}, full_validation=False
    ).to_body()
    assert body["logisticLocation"] == {"postBoxNumber": "1234"}
    assert body["fullValidation"] is False


# --- 2.4 auto-completion ------------------------------------------------------------------------------


def test_zip_entry_keeps_city39() -> None:
    entry = ZipEntry.model_validate(
        {"zip": "8001", "city18": "Zürich", "city27": "Zürich", "city39": "Zürich City"}
    )
    assert entry.city39 == "Zürich City"
    assert entry.city == "Zürich City"
    assert entry.model_dump(by_alias=True) == {
        "zip": "8001",
        "city18": "Zürich",
        "city27": "Zürich",
        "city39": "Zürich City",
    }


def test_zip_entry_without_city39_uses_the_longest_name_given() -> None:
    entry = ZipEntry.model_validate({"zip": "1000", "city18": "Lausanne", "city27": "Lausanne 1 Dépôt"})
    assert entry.city39 is None and entry.city == "Lausanne 1 Dépôt"


# --- 2.5 deliverabilities -------------------------------------------------------------------------------


def test_deliverabilities_of_the_spec() -> None:
    result = Deliverabilities.model_validate(
        {
            "days": [
                {
                    "deliveryDate": "2030-06-17",
                    "deliverabilities": [
                        {"incomingDate": "2030-06-16", "productCode": "ECO"},
                        {"incomingDate": "2030-06-17", "productCode": "PRI"},
                    ],
                    "activity": "WORK",
                },
                {"deliveryDate": "2030-06-18", "deliverabilities": [], "activity": "NO_SERVICE"},
            ],
            "quality": "RELIABLE",
            "deliveryToTheDoor": "AVAILABLE",
        }
    )
    work, closed = result.days
    assert work.delivery_date == dt.date(2030, 6, 17)
    assert work.product_codes == ["ECO", "PRI"] and work.deliverable
    assert work.deliverabilities[0].incoming_date == dt.date(2030, 6, 16)
    assert closed.activity == "NO_SERVICE" and not closed.deliverable


# --- 2.8 same-day --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "codes"),
    [("A", ["A"]), ("A,B", ["A", "B"]), ("A, B ,C", ["A", "B", "C"]), ("A,,B,", ["A", "B"])],
)
def test_same_day_product_code_holds_several_codes(code: str, codes: list[str]) -> None:
    result = SameDayAcceptance.model_validate(
        {"quality": "RELIABLE", "results": [{"productCode": code, "dropOffInfo": []}]}
    )
    assert result.results[0].product_codes == codes


def test_same_day_drop_off_point() -> None:
    result = SameDayAcceptance.model_validate(
        {
            "quality": "RELIABLE",
            "results": [
                {
                    "productCode": "SD",
                    "dropOffInfo": [
                        {
                            "dropOffPoint": {
                                "technicalZip": "301101",
                                "description": "Bern 1 Schanzenpost",
                                "street": "Schanzenstrasse",
                                "streetNumber": "4",
                                "zip": {"zip": "3011", "city": "Bern"},
                            },
                            "lastDropOffTime": "12:00",
                        }
                    ],
                }
            ],
        }
    )
    drop_off = result.results[0].drop_off_info[0]
    assert drop_off.drop_off_point is not None and drop_off.drop_off_point.street_number == "4"
    assert drop_off.last_drop_off_time == "12:00"


# --- 2.9 / 2.10 pickup ----------------------------------------------------------------------------------


def pickup_points(calendar: dict[str, object]) -> PickupPoints:
    return PickupPoints.model_validate(
        {
            "points": [
                {
                    "ppNumber": "PP-1",
                    "service": "PICKUP",
                    "name": "Bern Bahnhof",
                    "address": {"street": "Bahnhofplatz 1", "zip": "3011", "city": "Bern"},
                    "webLink": "https://example.test/pp/1",
                    "delivery": {"street": "Bahnhofplatz 1", "zip": "3011", "city": "Bern"},
                    "geographicPosition": {"latitude": "46.9490", "longitude": "7.4391"},
                    "calendar": calendar,
                    "openingHoursText": "Mo-Sa",
                }
            ]
        }
    )


def test_pickup_calendar_open_and_closed_days() -> None:
    point = pickup_points(
        {
            "2030-06-17": {
                "openingIntervals": [
                    {"from": "07:00:00", "to": "12:00:00"},
                    {"from": "13:30:00", "to": "18:30:00"},
                ]
            },
            "2030-06-18": [],
            "2030-06-19": {"openingIntervals": []},
        }
    ).points[0]
    open_day = point.calendar[dt.date(2030, 6, 17)]
    assert [(interval.from_, interval.to) for interval in open_day.opening_intervals] == [
        ("07:00:00", "12:00:00"),
        ("13:30:00", "18:30:00"),
    ]
    assert not open_day.closed
    assert point.calendar[dt.date(2030, 6, 18)].closed
    assert point.calendar[dt.date(2030, 6, 19)].closed
    assert list(point.calendar) == [dt.date(2030, 6, 17), dt.date(2030, 6, 18), dt.date(2030, 6, 19)]
    assert point.hint is None
    assert point.geographic_position is not None and point.geographic_position.latitude == "46.9490"
    assert point.model_extra == {"openingHoursText": "Mo-Sa"}


def test_pickup_user_request_sends_verified_null() -> None:
    request = PickupUserRequest.model_validate(
        {
            "userDetails": {"gender": "FEMALE", "firstName": "Anna", "lastName": "Muster", "language": "FR"},
            "address": {
                "house": {"street": "Rue du Lac", "houseNumber": "2"},
                "zip": {"zip": "1000", "city": "Lausanne", "countryCode": "CH"},
            },
            "notification": {"notifyMode": "SMS", "mobileNumber": "+41790000000"},
        }
    )
    body = request.to_body()
    assert body["verified"] is None and "verified" in body
    assert body["service"] == "PICKUP"
    assert body["userDetails"]["gender"] == "FEMALE"
    assert body["notification"] == {"notifyMode": "SMS", "mobileNumber": "+41790000000"}
    assert body["address"]["zip"] == {"zip": "1000", "city": "Lausanne", "countryCode": "CH"}


# --- 2.11 userinfo ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "flag"), [("TRUE", True), ("FALSE", False), ("true", True), (True, True), (False, False)]
)
def test_userinfo_flags(raw: object, flag: bool) -> None:
    info = Userinfo.model_validate({"sub": "u1", "email_verified": raw, "phone_number_verified": raw})
    assert info.email_verified is flag and info.phone_number_verified is flag


def test_userinfo_claims_and_unknown_claims_kept() -> None:
    info = Userinfo.model_validate(
        {
            "sub": "u1",
            "name": "Hans Muster",
            "given_name": "Hans",
            "family_name": "Muster",
            "preferred_username": "hans",
            "email": "hans@example.test",
            "email_verified": "TRUE",
            "gender": "male",
            "locale": "de",
            "phone_number": "+41790000000",
            "phone_number_verified": "FALSE",
            "address": {
                "formatted": "Hans Muster\nViktoriastrasse 21\n3013 Bern\nSchweiz",
                "street_address": "Viktoriastrasse 21",
                "locality": "Bern",
                "postal_code": "3013",
                "country": "CH",
            },
            "updated_at": 1_900_000_000,
            "customer_number": "C-42",
        }
    )
    assert info.email_verified is True and info.phone_number_verified is False
    assert info.address is not None and info.address.postal_code == "3013"
    assert info.model_extra == {"customer_number": "C-42"}


def test_a_validation_request_refuses_a_name_that_is_no_leaf_field() -> None:
    with pytest.raises(ValueError, match="not a field of a validation request: first_name, zipCode"):
        ValidationRequest.of({"first_name": "Hans", "zipCode": "3013", "city": "Bern"})
