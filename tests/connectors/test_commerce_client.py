"""CommerceClient against a fake written from the spec (§4, §5, §7), not against the sandbox: method, path
below a base URL with a path prefix, query and body of every endpoint, the bearer token and the scope each
operation asks for, token reuse and renewal, error bodies, and which failures are sent again."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from connectors.commerce import (
    AddressNotFound,
    CommercePaths,
    CommerceRejected,
    CommerceScopes,
    DeliveryAddress,
    PickupUserRequest,
    SameDayRequest,
    ValidationRequest,
)
from connectors.commerce.client import CommerceClient
from connectors.commerce.oidc import UserSession
from connectors.errors import AuthFailed, LoginRequired, NotFound, ServerError, TransportFailure
from connectors.oauth import ClientCredentials
from tests.connectors.commerce_support import (
    BASE,
    CLIENT_ID,
    SECRET,
    TODAY,
    TOKEN_URL,
    FakeCommerce,
    commerce_client,
    oidc_client,
    reply,
)

ADDRESS = f"{BASE}/address/v1"
DELIVERY = f"{BASE}/api/delivery/v1"
PICKUP = f"{BASE}/pickup/v1"
PERSONAL = f"{ADDRESS}/users/current/addresses"
ADDRESS_ID = "3f2b8c1e-9d4a-4e6b-8a7c-1d2e3f4a5b6c"

VALIDATION_RESULT = {
    "quality": "CERTIFIED",
    "expires": "20300618T235959+0200",
    "address": {
        "type": "DOMICILE",
        "addressee": {"firstName": "Hans", "lastName": "Muster"},
        "logisticLocation": {"postBoxNumber": "", "house": {}, "zip": {}},
        "geographicLocation": {
            "house": {"street": "Viktoriastrasse", "houseNumber": "21", "houseKey": "76543210"},
            "zip": {"zip": "3013", "city": "Bern"},
        },
        "id": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
    },
}
DELIVERABILITIES = {
    "days": [
        {
            "deliveryDate": "2030-06-17",
            "deliverabilities": [{"incomingDate": "2030-06-16", "productCode": "ECO"}],
            "activity": "WORK",
        },
        {"deliveryDate": "2030-06-18", "deliverabilities": [], "activity": "NO_SERVICE"},
    ],
    "quality": "RELIABLE",
    "deliveryToTheDoor": "AVAILABLE",
}
PICKUP_POINTS = {
    "points": [
        {
            "ppNumber": "PP-1",
            "service": "PICKUP",
            "name": "Bern Bahnhof",
            "address": {"street": "Bahnhofplatz 1", "zip": "3011", "city": "Bern"},
            "calendar": {"2030-06-17": {"openingIntervals": [{"from": "08:00:00", "to": "18:00:00"}]}},
        }
    ]
}


@pytest.fixture
def server() -> FakeCommerce:
    return FakeCommerce()


@pytest.fixture
async def client(server: FakeCommerce) -> AsyncIterator[CommerceClient]:
    async with commerce_client(server) as client:
        yield client


def validation_request() -> ValidationRequest:
    return ValidationRequest.of(
        {
            "firstName": "Hans",
            "lastName": "Muster",
            "street": "Viktoriastr.",
            "houseNumber": "21",
            "zip": "3013",
            "city": "Bern",
        }
    )


def delivery_address() -> DeliveryAddress:
    return DeliveryAddress.of(zip_code="3013", city="Bern", street="Viktoriastrasse", house_number="21")


def pickup_user(verified: str | None = None) -> PickupUserRequest:
    return PickupUserRequest.model_validate(
        {
            "userDetails": {"gender": "MALE", "firstName": "Hans", "lastName": "Muster", "language": "DE"},
            "address": {
                "house": {"street": "Viktoriastrasse", "houseNumber": "21"},
                "zip": {"zip": "3013", "city": "Bern", "countryCode": "CH"},
            },
            "notification": {"notifyMode": "EMAIL", "email": "hans@example.test", "mobileNumber": ""},
            "service": "PICKUP",
            "verified": verified,
        }
    )


PICKUP_USER_BODY = {
    "userDetails": {"gender": "MALE", "firstName": "Hans", "lastName": "Muster", "language": "DE"},
    "address": {
        "house": {"street": "Viktoriastrasse", "houseNumber": "21"},
        "zip": {"zip": "3013", "city": "Bern", "countryCode": "CH"},
    },
    "notification": {"notifyMode": "EMAIL", "email": "hans@example.test", "mobileNumber": ""},
    "service": "PICKUP",
    "verified": None,
}


# --- 4.1 validation and auto-completion ---------------------------------------------------------------


async def test_validation_posts_the_request_body_with_the_address_read_scope(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("POST", f"{ADDRESS}/addresses/validation", VALIDATION_RESULT)
    result = await client.validate_address(validation_request())
    (call,) = server.calls
    assert call.path == "/dcapi/address/v1/addresses/validation"
    assert call.body == {
        "addressee": {"firstName": "Hans", "lastName": "Muster"},
        "geographicLocation": {
            "house": {"street": "Viktoriastr.", "houseNumber": "21"},
            "zip": {"zip": "3013", "city": "Bern"},
        },
        "logisticLocation": {"postBoxNumber": ""},
        "fullValidation": True,
    }
    assert call.params == []
    assert call.authorization == "Bearer cc:DCAPI_ADDRESS_READ:1"
    assert server.token_scopes == ["DCAPI_ADDRESS_READ"]
    assert result.quality == "CERTIFIED"
    assert result.address is not None and result.address.geographic_location is not None
    assert result.address.geographic_location.house is not None
    assert result.address.geographic_location.house.house_key == "76543210"
    assert result.expires == dt.datetime(2030, 6, 18, 23, 59, 59, tzinfo=dt.timezone(dt.timedelta(hours=2)))


async def test_token_request_is_a_client_credentials_form_with_the_secret_in_the_body_only(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("POST", f"{ADDRESS}/addresses/validation", VALIDATION_RESULT)
    await client.validate_address(validation_request())
    (token_call,) = server.token_calls
    assert token_call.url == TOKEN_URL
    assert token_call.fields() == {
        "grant_type": "client_credentials",
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "scope": "DCAPI_ADDRESS_READ",
    }
    assert "authorization" not in {name.lower() for name in token_call.headers}
    assert SECRET not in server.calls[0].url
    assert SECRET not in (server.calls[0].authorization or "")


async def test_zips_query_and_extra_city_fields_are_kept(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route(
        "GET",
        f"{ADDRESS}/zips",
        {"zips": [{"zip": "3013", "city18": "Bern", "city27": "Bern", "city39": "Bern Breitenrain"}]},
    )
    zips = await client.zips("301", type_="DOMICILE")
    (call,) = server.calls
    assert (call.method, call.path) == ("GET", "/dcapi/address/v1/zips")
    assert call.params == [("zipCity", "301"), ("type", "DOMICILE")]
    assert call.scope == "DCAPI_ADDRESS_READ"
    assert [(entry.zip, entry.city18, entry.city39) for entry in zips] == [
        ("3013", "Bern", "Bern Breitenrain")
    ]
    assert zips[0].model_dump(by_alias=True)["city39"] == "Bern Breitenrain"


async def test_zips_without_type_sends_only_the_search_term(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("GET", f"{ADDRESS}/zips", {"zips": []})
    await client.zips("Bern")
    assert server.calls[0].params == [("zipCity", "Bern")]


async def test_streets_are_an_array_of_strings(client: CommerceClient, server: FakeCommerce) -> None:
    server.route("GET", f"{ADDRESS}/streets", {"streets": ["Viktoriastrasse", "Viktoriaplatz"]})
    assert await client.streets("Vikt", zip_code="3013") == ["Viktoriastrasse", "Viktoriaplatz"]
    (call,) = server.calls
    assert (call.method, call.path) == ("GET", "/dcapi/address/v1/streets")
    assert call.params == [("name", "Vikt"), ("zip", "3013")]
    assert call.scope == "DCAPI_ADDRESS_READ"


async def test_houses_are_an_array_of_strings(client: CommerceClient, server: FakeCommerce) -> None:
    server.route("GET", f"{ADDRESS}/houses", {"houses": ["21", "21 A", "21 B"]})
    assert await client.houses("3013", "Viktoriastrasse", "21") == ["21", "21 A", "21 B"]
    (call,) = server.calls
    assert (call.method, call.path) == ("GET", "/dcapi/address/v1/houses")
    assert call.params == [("zip", "3013"), ("streetname", "Viktoriastrasse"), ("number", "21")]
    assert call.scope == "DCAPI_ADDRESS_READ"


@pytest.mark.parametrize(
    ("endpoint", "lookup"),
    [
        ("zips", lambda client: client.zips("9999")),
        ("streets", lambda client: client.streets("Nowhere")),
        ("houses", lambda client: client.houses("3013", "Viktoriastrasse", "999")),
    ],
)
async def test_no_results_404_is_an_empty_list(
    client: CommerceClient, server: FakeCommerce, endpoint: str, lookup: Any
) -> None:
    server.route("GET", f"{ADDRESS}/{endpoint}", reply({"message": "no results"}, 404))
    assert await lookup(client) == []
    assert len(server.calls) == 1


async def test_incomplete_lookup_400_is_refused_not_an_empty_list(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("GET", f"{ADDRESS}/streets", reply({"code": "400", "message": "name too short"}, 400))
    with pytest.raises(CommerceRejected, match="name too short"):
        await client.streets("V")
    assert len(server.calls) == 1


async def test_public_client_scopes_are_settings(server: FakeCommerce) -> None:
    server.route("POST", f"{ADDRESS}/addresses/validation", VALIDATION_RESULT)
    server.route("GET", f"{ADDRESS}/zips", {"zips": []})
    server.route("GET", f"{ADDRESS}/streets", {"streets": []})
    scopes = CommerceScopes(validation="DCAPI_ADDRESS_VALIDATE", autocomplete="DCAPI_ADDRESS_AUTOCOMPLETE")
    async with commerce_client(server, scopes=scopes) as client:
        await client.validate_address(validation_request())
        await client.zips("30")
        await client.streets("Vi")
    assert [call.scope for call in server.calls] == [
        "DCAPI_ADDRESS_VALIDATE",
        "DCAPI_ADDRESS_AUTOCOMPLETE",
        "DCAPI_ADDRESS_AUTOCOMPLETE",
    ]
    assert server.token_scopes == ["DCAPI_ADDRESS_VALIDATE", "DCAPI_ADDRESS_AUTOCOMPLETE"]


async def test_one_token_per_scope_is_reused(client: CommerceClient, server: FakeCommerce) -> None:
    server.route("POST", f"{ADDRESS}/addresses/validation", VALIDATION_RESULT)
    server.route("GET", f"{ADDRESS}/zips", {"zips": []})
    server.route("GET", f"{DELIVERY}/options/holidays", [])
    for _ in range(3):
        await client.validate_address(validation_request())
        await client.zips("30")
        await client.holidays()
    assert server.token_scopes == ["DCAPI_ADDRESS_READ", "DCAPI_DELIVERY"]
    assert {call.authorization for call in server.calls} == {
        "Bearer cc:DCAPI_ADDRESS_READ:1",
        "Bearer cc:DCAPI_DELIVERY:2",
    }


async def test_concurrent_calls_share_one_token_request(client: CommerceClient, server: FakeCommerce) -> None:
    server.route("POST", f"{ADDRESS}/addresses/validation", VALIDATION_RESULT)
    await asyncio.gather(*(client.validate_address(validation_request()) for _ in range(8)))
    assert server.token_scopes == ["DCAPI_ADDRESS_READ"]
    assert len(server.calls) == 8


async def test_clients_built_on_one_credentials_share_its_tokens(server: FakeCommerce) -> None:
    server.route("GET", f"{DELIVERY}/options/holidays", [])
    credentials = ClientCredentials(TOKEN_URL, CLIENT_ID, SecretStr(SECRET))
    async with commerce_client(server, credentials=credentials) as first:
        await first.holidays()
    async with commerce_client(server, credentials=credentials) as second:
        await second.holidays()
    assert server.token_scopes == ["DCAPI_DELIVERY"]


async def test_token_is_renewed_once_on_401(client: CommerceClient, server: FakeCommerce) -> None:
    server.route("GET", f"{ADDRESS}/zips", reply(status=401), {"zips": [{"zip": "3013"}]})
    assert [entry.zip for entry in await client.zips("3013")] == ["3013"]
    assert [call.authorization for call in server.calls] == [
        "Bearer cc:DCAPI_ADDRESS_READ:1",
        "Bearer cc:DCAPI_ADDRESS_READ:2",
    ]
    assert server.token_scopes == ["DCAPI_ADDRESS_READ", "DCAPI_ADDRESS_READ"]


async def test_a_second_401_is_auth_failed_without_a_third_try(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("GET", f"{ADDRESS}/zips", reply(status=401))
    with pytest.raises(AuthFailed):
        await client.zips("3013")
    assert len(server.calls) == 2
    assert len(server.token_calls) == 2


async def test_a_403_renews_the_token_once_and_the_request_succeeds(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route(
        "GET", f"{ADDRESS}/zips", reply({"message": "not authorized"}, 403), {"zips": [{"zip": "3013"}]}
    )
    assert [entry.zip for entry in await client.zips("3013")] == ["3013"]
    assert [call.authorization for call in server.calls] == [
        "Bearer cc:DCAPI_ADDRESS_READ:1",
        "Bearer cc:DCAPI_ADDRESS_READ:2",
    ]
    assert server.token_scopes == ["DCAPI_ADDRESS_READ", "DCAPI_ADDRESS_READ"]


async def test_pickup_registration_refused_with_403_is_sent_once_more_with_a_new_token(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("POST", f"{PICKUP}/users", reply(status=403), {"id": "P-1", "verified": "NONE"})
    assert (await client.register_pickup_user(pickup_user())).id == "P-1"
    sent = server.api_calls("POST", f"{PICKUP}/users")
    assert [call.authorization for call in sent] == ["Bearer cc:DCAPI_PICKUP:1", "Bearer cc:DCAPI_PICKUP:2"]
    assert sent[0].body == sent[1].body == PICKUP_USER_BODY
    assert server.token_scopes == ["DCAPI_PICKUP", "DCAPI_PICKUP"]


async def test_a_second_403_is_auth_failed_naming_the_scope_after_two_tries(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("POST", f"{PICKUP}/users", reply({"message": "not authorized"}, 403))
    with pytest.raises(AuthFailed) as caught:
        await client.register_pickup_user(pickup_user())
    text = str(caught.value)
    assert "HTTP 403" in text and text.endswith("(scope DCAPI_PICKUP)")
    assert "cc:" not in text and SECRET not in text
    assert caught.value.status_code == 403 and not caught.value.retryable
    assert len(server.api_calls("POST", f"{PICKUP}/users")) == 2
    assert server.token_scopes == ["DCAPI_PICKUP", "DCAPI_PICKUP"]


# --- 7 error bodies and retries -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "code"),
    [
        (reply({"code": "ADDR_INVALID", "message": "zip 9999 does not exist"}, 400), "ADDR_INVALID"),
        (
            reply({"error": "invalid_request", "error_description": "zip 9999 does not exist"}, 400),
            "invalid_request",
        ),
        (
            reply({"errors": [{"code": "E17", "message": "zip 9999 does not exist", "field": "zip"}]}, 400),
            "E17",
        ),
        (reply(text="zip 9999 does not exist", status=400), "400"),
        (
            reply(
                {
                    "type": "about:blank",
                    "title": "Bad Request",
                    "status": 400,
                    "detail": "zip 9999 does not exist",
                },
                400,
            ),
            "400",
        ),
        (
            reply(
                {
                    "timestamp": "2030-06-17T08:00:00.000+00:00",
                    "status": 400,
                    "error": "Bad Request",
                    "message": "zip 9999 does not exist",
                    "path": "/address/v1/addresses/validation",
                },
                400,
            ),
            "Bad Request",
        ),
        (reply([{"code": "E18", "message": "zip 9999 does not exist"}], 400), "E18"),
    ],
    ids=[
        "code-message",
        "oauth-style",
        "errors-array",
        "plain-text",
        "problem-json",
        "spring",
        "top-level-array",
    ],
)
async def test_validation_400_carries_the_service_message(
    client: CommerceClient, server: FakeCommerce, response: Any, code: str
) -> None:
    server.route("POST", f"{ADDRESS}/addresses/validation", response)
    with pytest.raises(CommerceRejected) as caught:
        await client.validate_address(validation_request())
    assert "zip 9999 does not exist" in str(caught.value)
    assert caught.value.status_code == 400
    assert caught.value.code == code
    assert not caught.value.retryable
    assert len(server.calls) == 1


async def test_validation_5xx_is_retried_as_a_read(client: CommerceClient, server: FakeCommerce) -> None:
    server.route(
        "POST",
        f"{ADDRESS}/addresses/validation",
        reply({"message": "busy"}, 503),
        reply(status=500),
        VALIDATION_RESULT,
    )
    result = await client.validate_address(validation_request())
    assert result.quality == "CERTIFIED"
    assert len(server.calls) == 3
    assert server.calls[0].body == server.calls[2].body


async def test_pickup_registration_is_not_resent_after_a_5xx(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("POST", f"{PICKUP}/users", reply(status=502), {"id": "P-1", "verified": "NONE"})
    with pytest.raises(ServerError):
        await client.register_pickup_user(pickup_user())
    assert len(server.api_calls("POST", f"{PICKUP}/users")) == 1


async def test_pickup_registration_is_not_resent_after_a_dropped_connection(
    client: CommerceClient, server: FakeCommerce
) -> None:
    def drop(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("connection reset", request=request)

    server.route("POST", f"{PICKUP}/users", drop, {"id": "P-1", "verified": "NONE"})
    with pytest.raises(TransportFailure, match="ReadError") as caught:
        await client.register_pickup_user(pickup_user())
    assert caught.value.outcome_unknown
    assert len(server.api_calls("POST", f"{PICKUP}/users")) == 1


async def test_pickup_registration_is_resent_after_a_rate_limit(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("POST", f"{PICKUP}/users", reply(status=429), {"id": "P-1", "verified": "NONE"})
    assert (await client.register_pickup_user(pickup_user())).id == "P-1"
    assert len(server.api_calls("POST", f"{PICKUP}/users")) == 2


async def test_pickup_registration_waits_out_a_token_endpoint_outage(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.token_outage = 1
    server.route("POST", f"{PICKUP}/users", {"id": "P-1", "verified": "NONE"})
    assert (await client.register_pickup_user(pickup_user())).id == "P-1"
    assert len(server.token_calls) == 2
    assert len(server.api_calls("POST", f"{PICKUP}/users")) == 1


# --- 4.1 personal addresses ----------------------------------------------------------------------------


@pytest.fixture
async def user_client(server: FakeCommerce) -> AsyncIterator[CommerceClient]:
    session = UserSession(oidc_client(server), SecretStr("refresh-0"))
    async with commerce_client(server, user=session) as client:
        yield client


async def test_personal_addresses_use_the_user_token(
    user_client: CommerceClient, server: FakeCommerce
) -> None:
    server.route(
        "GET",
        PERSONAL,
        [
            {"type": "MAIN", "geographicLocation": {"zip": {"zip": "3013", "city": "Bern"}}},
            {"id": ADDRESS_ID, "type": "PICK_POST", "nickname": "Bahnhof"},
        ],
    )
    server.route("GET", f"{PERSONAL}/main", {"type": "MAIN", "nickname": "home"})
    server.route("GET", f"{PERSONAL}/{ADDRESS_ID}", {"id": ADDRESS_ID, "type": "MY_POST_24"})
    addresses = await user_client.addresses()
    main = await user_client.main_address()
    one = await user_client.address(ADDRESS_ID)
    assert [(call.method, call.path) for call in server.calls] == [
        ("GET", "/dcapi/address/v1/users/current/addresses"),
        ("GET", "/dcapi/address/v1/users/current/addresses/main"),
        ("GET", f"/dcapi/address/v1/users/current/addresses/{ADDRESS_ID}"),
    ]
    assert {call.authorization for call in server.calls} == {"Bearer user:1"}
    assert [call.grant for call in server.token_calls] == ["refresh_token"]
    assert [address.id for address in addresses] == [None, ADDRESS_ID]
    assert addresses[1].type is not None and addresses[1].type.canonical == "PICKUP_POINT"
    assert main.type == "MAIN" and main.id is None
    assert one.type is not None and one.type.canonical == "LOCKER"


async def test_a_403_on_personal_data_renews_the_user_token_once(
    user_client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("GET", f"{PERSONAL}/main", reply(status=403), {"type": "MAIN", "nickname": "home"})
    assert (await user_client.main_address()).nickname == "home"
    assert [call.authorization for call in server.calls] == ["Bearer user:1", "Bearer user:2"]
    assert [call.grant for call in server.token_calls] == ["refresh_token", "refresh_token"]


async def test_a_second_403_on_personal_data_names_the_personal_scope(
    user_client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("GET", f"{PERSONAL}/main", reply(status=403))
    with pytest.raises(AuthFailed, match=r"HTTP 403 .*\(scope DCAPI_ADDRESS_READ\)$"):
        await user_client.main_address()
    assert len(server.calls) == 2


async def test_a_user_without_addresses_is_an_empty_list(
    user_client: CommerceClient, server: FakeCommerce
) -> None:
    """§7: 404 on users/current/addresses means "no result"."""
    server.route("GET", PERSONAL, reply({"message": "no result"}, 404))
    assert await user_client.addresses() == []
    assert len(server.calls) == 1


async def test_address_not_found_or_not_owned(user_client: CommerceClient, server: FakeCommerce) -> None:
    server.route("GET", f"{PERSONAL}/{ADDRESS_ID}", reply({"message": "no result"}, 404))
    with pytest.raises(AddressNotFound, match=ADDRESS_ID) as caught:
        await user_client.address(ADDRESS_ID)
    assert isinstance(caught.value, NotFound) and caught.value.status_code == 404
    assert len(server.calls) == 1


async def test_address_invalid_id_is_refused_with_the_service_message(
    user_client: CommerceClient, server: FakeCommerce
) -> None:
    server.route(
        "GET", f"{PERSONAL}/not-a-uuid", reply({"code": "400", "message": "invalid id parameter"}, 400)
    )
    with pytest.raises(CommerceRejected, match="invalid id parameter"):
        await user_client.address("not-a-uuid")


async def test_address_id_is_one_path_segment(user_client: CommerceClient, server: FakeCommerce) -> None:
    server.route("GET", f"{PERSONAL}/a%2Fb", reply(status=404))
    with pytest.raises(AddressNotFound):
        await user_client.address("a/b")
    assert server.calls[0].url == f"{PERSONAL}/a%2Fb"


@pytest.mark.parametrize(
    "personal",
    [
        lambda client: client.addresses(),
        lambda client: client.main_address(),
        lambda client: client.address(ADDRESS_ID),
    ],
    ids=["list", "main", "by-id"],
)
async def test_personal_endpoints_without_a_user_need_a_login_first(
    client: CommerceClient, server: FakeCommerce, personal: Any
) -> None:
    with pytest.raises(LoginRequired, match="commerce-login"):
        await personal(client)
    assert server.calls == [] and server.token_calls == []


# --- 4.2 delivery ------------------------------------------------------------------------------------


async def test_deliverabilities_get_has_dotted_params_and_the_defaults(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("GET", f"{DELIVERY}/deliverabilities/when", DELIVERABILITIES)
    result = await client.deliverabilities(delivery_address())
    (call,) = server.calls
    assert call.path == "/dcapi/api/delivery/v1/deliverabilities/when"
    assert call.params == [
        ("address.geographicLocation.zip.zip", "3013"),
        ("address.geographicLocation.zip.city", "Bern"),
        ("address.geographicLocation.house.street", "Viktoriastrasse"),
        ("address.geographicLocation.house.houseNumber", "21"),
        ("date", TODAY.isoformat()),
        ("dayCount", "14"),
    ]
    assert call.body is None
    assert call.scope == "DCAPI_DELIVERY"
    assert [day.product_codes for day in result.days] == [["ECO"], []]
    assert result.days[1].activity == "NO_SERVICE" and not result.days[1].deliverable


async def test_deliverabilities_get_with_start_and_day_count_without_street(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("GET", f"{DELIVERY}/deliverabilities/when", DELIVERABILITIES)
    await client.deliverabilities(
        DeliveryAddress.of(zip_code="3013", city="Bern"), start=dt.date(2030, 7, 1), day_count=3
    )
    assert server.calls[0].params == [
        ("address.geographicLocation.zip.zip", "3013"),
        ("address.geographicLocation.zip.city", "Bern"),
        ("date", "2030-07-01"),
        ("dayCount", "3"),
    ]


async def test_deliverabilities_get_repeats_delivery_dates(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("GET", f"{DELIVERY}/deliverabilities/when", DELIVERABILITIES)
    await client.deliverabilities(
        DeliveryAddress.of(zip_code="3013", city="Bern"),
        delivery_dates=[dt.date(2030, 6, 17), dt.date(2030, 6, 18)],
    )
    assert server.calls[0].query == (
        "address.geographicLocation.zip.zip=3013&address.geographicLocation.zip.city=Bern"
        "&deliveryDates=2030-06-17&deliveryDates=2030-06-18"
    )


async def test_deliverabilities_post_body(client: CommerceClient, server: FakeCommerce) -> None:
    server.route("POST", f"{DELIVERY}/deliverabilities/when", DELIVERABILITIES)
    result = await client.deliverabilities_on(
        delivery_address(), [dt.date(2030, 6, 17), dt.date(2030, 6, 18)]
    )
    (call,) = server.calls
    assert call.path == "/dcapi/api/delivery/v1/deliverabilities/when"
    assert call.params == []
    assert call.body == {
        "address": {
            "geographicLocation": {
                "house": {"street": "Viktoriastrasse", "houseNumber": "21"},
                "zip": {"zip": "3013", "city": "Bern"},
            }
        },
        "deliveryDates": ["2030-06-17", "2030-06-18"],
    }
    assert call.scope == "DCAPI_DELIVERY"
    assert result.quality == "RELIABLE" and result.delivery_to_the_door == "AVAILABLE"


async def test_logistic_product_path(client: CommerceClient, server: FakeCommerce) -> None:
    server.route(
        "GET",
        f"{DELIVERY}/deliverabilities/how/ECO",
        {
            "productCode": "ECO",
            "barcode": "99.00",
            "deliveryInstructions": [{"code": "DI1"}],
            "additionalServices": [{"code": "SI", "mandatory": True}],
        },
    )
    product = await client.logistic_product("ECO")
    assert server.calls[0].path == "/dcapi/api/delivery/v1/deliverabilities/how/ECO"
    assert server.calls[0].scope == "DCAPI_DELIVERY"
    assert product.additional_services[0].mandatory is True
    assert [item.code for item in product.delivery_instructions] == ["DI1"]


async def test_options_paths_and_shapes(client: CommerceClient, server: FakeCommerce) -> None:
    name = {"de": "Samstag", "fr": "Samedi", "it": "Sabato", "en": "Saturday"}
    server.route(
        "GET", f"{DELIVERY}/options/additionalservices", [{"code": "SA", "name": name, "barcode": "1"}]
    )
    server.route(
        "GET",
        f"{DELIVERY}/options/deliveryinstructions",
        [
            {
                "code": "DI1",
                "barcode": "2",
                "name": name,
                "editable": True,
                "placeHolderNames": ["floor"],
                "optionNames": [],
            }
        ],
    )
    server.route("GET", f"{DELIVERY}/options/holidays", [{"date": "2030-08-01", "name": name}])
    services = await client.additional_services()
    instructions = await client.delivery_instructions()
    holidays = await client.holidays()
    assert [(call.method, call.path) for call in server.calls] == [
        ("GET", "/dcapi/api/delivery/v1/options/additionalservices"),
        ("GET", "/dcapi/api/delivery/v1/options/deliveryinstructions"),
        ("GET", "/dcapi/api/delivery/v1/options/holidays"),
    ]
    assert {call.scope for call in server.calls} == {"DCAPI_DELIVERY"}
    assert services[0].name.best("fr") == "Samedi"
    assert instructions[0].editable is True and instructions[0].place_holder_names == ["floor"]
    assert holidays[0].date == dt.date(2030, 8, 1)


async def test_same_day_is_a_get_with_a_json_body_at_the_configured_path(server: FakeCommerce) -> None:
    path = "/api/delivery/v1/sameday/points"
    server.route(
        "GET",
        f"{BASE}{path}",
        {
            "quality": "RELIABLE",
            "results": [
                {
                    "productCode": "SD1,SD2",
                    "dropOffInfo": [
                        {
                            "dropOffPoint": {
                                "technicalZip": "301300",
                                "zip": {"zip": "3013", "city": "Bern"},
                            },
                            "lastDropOffTime": "11:30",
                        }
                    ],
                }
            ],
        },
    )
    request = SameDayRequest(
        address=DeliveryAddress.of(zip_code="3013", city="Bern", street="Viktoriastrasse", house_number="21"),
        delivery_date=dt.date(2030, 6, 18),
    )
    async with commerce_client(server, paths=CommercePaths(same_day=path)) as client:
        result = await client.same_day_acceptance_points(request)
    (call,) = server.calls
    assert (call.method, call.path) == ("GET", f"/dcapi{path}")
    assert call.body == {
        "address": {
            "geographicLocation": {
                "house": {"street": "Viktoriastrasse", "houseNumber": "21"},
                "zip": {"zip": "3013", "city": "Bern"},
            }
        },
        "deliveryDate": "2030-06-18",
    }
    assert call.scope == "DCAPI_DELIVERY"
    assert result.results[0].product_codes == ["SD1", "SD2"]
    assert result.results[0].drop_off_info[0].last_drop_off_time == "11:30"


# --- 4.3 pickup ----------------------------------------------------------------------------------------


async def test_register_pickup_user_posts_the_user(client: CommerceClient, server: FakeCommerce) -> None:
    server.route("POST", f"{PICKUP}/users", {"id": "P-4711", "verified": "NONE"})
    user = await client.register_pickup_user(pickup_user())
    (call,) = server.calls
    assert (call.method, call.path) == ("POST", "/dcapi/pickup/v1/users")
    assert call.body == PICKUP_USER_BODY
    assert call.authorization is not None and call.authorization.startswith("Bearer cc:")
    assert (user.id, user.verified) == ("P-4711", "NONE")


async def test_pickup_path_is_a_setting(server: FakeCommerce) -> None:
    server.route("POST", f"{BASE}/pickpost/v1/users", {"id": "P-1", "verified": "NONE"})
    server.route("POST", f"{BASE}/pickpost/v1/points", PICKUP_POINTS)
    async with commerce_client(server, paths=CommercePaths(pickup="/pickpost/v1")) as client:
        await client.register_pickup_user(pickup_user())
        points = await client.pickup_points(pickup_user())
    assert [call.path for call in server.calls] == ["/dcapi/pickpost/v1/users", "/dcapi/pickpost/v1/points"]
    assert points.points[0].pp_number == "PP-1"


@pytest.mark.parametrize("pickup", ["/pickpost/v1/", "pickpost/v1", "/pickpost/v1"])
async def test_pickup_path_setting_is_joined_with_one_slash(server: FakeCommerce, pickup: str) -> None:
    server.route("POST", f"{BASE}/pickpost/v1/users", {"id": "P-1", "verified": "NONE"})
    server.route("POST", f"{BASE}/pickpost/v1/points", PICKUP_POINTS)
    async with commerce_client(server, paths=CommercePaths(pickup=pickup)) as client:
        await client.register_pickup_user(pickup_user())
        await client.pickup_points(pickup_user())
    assert [call.path for call in server.calls] == ["/dcapi/pickpost/v1/users", "/dcapi/pickpost/v1/points"]


async def test_sub_api_paths_with_a_trailing_slash(server: FakeCommerce) -> None:
    server.route("GET", f"{ADDRESS}/zips", {"zips": []})
    server.route("GET", f"{DELIVERY}/options/holidays", [])
    async with commerce_client(
        server, paths=CommercePaths(address="/address/v1/", delivery="/api/delivery/v1/")
    ) as client:
        await client.zips("30")
        await client.holidays()
    assert [call.path for call in server.calls] == [
        "/dcapi/address/v1/zips",
        "/dcapi/api/delivery/v1/options/holidays",
    ]


async def test_pickup_points_send_the_user_with_verified_null(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("POST", f"{PICKUP}/points", PICKUP_POINTS)
    await client.pickup_points(pickup_user(verified="NONE"))
    assert server.calls[0].body == PICKUP_USER_BODY


async def test_pickup_points_method_and_path_are_settings(server: FakeCommerce) -> None:
    server.route("GET", f"{BASE}/pickpost/v1/pickuppoints/search", PICKUP_POINTS)
    paths = CommercePaths(pickup_points="/pickpost/v1/pickuppoints/search", pickup_points_method="GET")
    async with commerce_client(server, paths=paths) as client:
        points = await client.pickup_points(pickup_user())
    (call,) = server.calls
    assert (call.method, call.path) == ("GET", "/dcapi/pickpost/v1/pickuppoints/search")
    assert call.body == PICKUP_USER_BODY
    assert not points.points[0].calendar[dt.date(2030, 6, 17)].closed


async def test_a_server_error_is_retried_for_pickup_points_a_read(
    client: CommerceClient, server: FakeCommerce
) -> None:
    server.route("POST", f"{PICKUP}/points", reply(status=503), PICKUP_POINTS)
    await client.pickup_points(pickup_user())
    assert len(server.calls) == 2
