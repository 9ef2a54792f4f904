"""CommerceClient's parcel operations against the fake written from the spec: pickup points as received (§4.3,
a body shaped like the pickup user request with verified null, possibly without names), address labels and
return orders as received (§4.4, shapes not shown): a PDF answer or JSON, read no further than
POSTFLOWS_RESPONSE_MAX_BYTES, and never sent twice on their own; a 404 or 405 at a path that is a setting
names the setting (where §7 lists 404, for same-day acceptance points, it is still "no results")."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from connectors.commerce import DeliveryAddress, PickupUserRequest, SameDayRequest
from connectors.commerce.errors import GuessedPathNotFound
from connectors.errors import MalformedResponse, NotFound, ResponseTooLarge, ServerError
from connectors.limits import ResponseLimits
from tests.connectors.commerce_support import BASE, TODAY, FakeCommerce, commerce_client, reply

LABELS = f"{BASE}/barcode/v1/addresslabels"
ORDERS = f"{BASE}/delivery/collection/order/v2/orders"
POINTS = f"{BASE}/pickup/v1/points"
PDF = b"%PDF-1.4\n% a label\n%%EOF\n"
LABEL_BODY = {"item": {"itemID": "ORDER-1", "recipient": {"name1": "Hans Muster"}}}


def location_only() -> PickupUserRequest:
    return PickupUserRequest.model_validate(
        {"address": {"house": {"street": "Bahnhofstrasse"}, "zip": {"zip": "8001", "countryCode": "CH"}}}
    )


async def test_pickup_points_as_received_keep_what_the_model_does_not_name() -> None:
    answer = {"points": [{"ppNumber": "PP-1", "calendar": {"2030-06-17": []}, "extra": None}], "more": 1}
    server = FakeCommerce()
    server.route("POST", POINTS, answer)
    async with commerce_client(server) as client:
        received = await client.pickup_points_as_received(location_only())
    assert received == answer
    (call,) = server.calls
    # The spec's shape with what the row gave: no names made up, verified null.
    assert call.body == {
        "userDetails": {},
        "address": {"house": {"street": "Bahnhofstrasse"}, "zip": {"zip": "8001", "countryCode": "CH"}},
        "notification": {},
        "service": "PICKUP",
        "verified": None,
    }


@pytest.mark.parametrize("answer", [[{"ppNumber": "PP-1"}], {"points": [{"name": "no ppNumber"}]}])
async def test_pickup_points_that_do_not_read_as_2_10_are_malformed(answer: object) -> None:
    server = FakeCommerce()
    server.route("POST", POINTS, answer)
    async with commerce_client(server) as client:
        with pytest.raises(MalformedResponse, match="pickup points"):
            await client.pickup_points_as_received(location_only())


async def test_a_pdf_label_answer_is_kept_as_its_bytes() -> None:
    server = FakeCommerce()
    server.route(
        "POST",
        LABELS,
        lambda request: httpx.Response(200, content=PDF, headers={"Content-Type": "application/pdf"}),
    )
    async with commerce_client(server) as client:
        answer = await client.create_address_label_as_received(LABEL_BODY)
    assert (answer.content, answer.media_type) == (PDF, "application/pdf")
    (call,) = server.calls
    assert call.body == LABEL_BODY and call.scope == "DCAPI_BARCODE_READ"


async def test_a_json_label_answer_is_kept_as_received_and_the_json_method_still_reads_it() -> None:
    body = {"item": {"identCode": "99.60.1", "label": [base64.b64encode(PDF).decode()]}}
    text = json.dumps(body, indent=3).encode()
    server = FakeCommerce()
    server.route(
        "POST",
        LABELS,
        lambda request: httpx.Response(200, content=text, headers={"Content-Type": "application/json"}),
    )
    async with commerce_client(server) as client:
        answer = await client.create_address_label_as_received(LABEL_BODY)
        parsed = await client.create_address_label(LABEL_BODY)
    assert answer.content == text and answer.media_type == "application/json"
    assert parsed == body
    requests = [call for call in server.calls if call.url == LABELS]
    assert len(requests) == 2


async def test_a_label_asks_for_json_or_pdf() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Accept"])
        return httpx.Response(200, json={"id": "L-1"})

    server = FakeCommerce()
    server.route("POST", LABELS, answer)
    async with commerce_client(server) as client:
        await client.create_address_label_as_received(LABEL_BODY)
    assert "application/json" in seen[0] and "application/pdf" in seen[0]


@pytest.mark.parametrize("media_type", ["application/pdf", "application/json"])
async def test_a_label_answer_is_read_no_further_than_the_response_limit(media_type: str) -> None:
    limit = 3 * 1024
    produced = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal produced
        for _ in range(100):
            produced += 1024
            yield b"x" * 1024

    server = FakeCommerce()
    server.route(
        "POST",
        LABELS,
        lambda request: httpx.Response(200, content=chunks(), headers={"Content-Type": media_type}),
    )
    async with commerce_client(server, limits=ResponseLimits(max_bytes=limit)) as client:
        with pytest.raises(ResponseTooLarge, match="POSTFLOWS_RESPONSE_MAX_BYTES") as refused:
            await client.create_address_label_as_received(LABEL_BODY)
    assert refused.value.max_bytes == limit
    assert produced <= limit + 1024  # refused while it streams, not read whole
    assert refused.value.outcome_unknown  # the label may exist: a submission is then uncertain
    assert len(server.api_calls("POST", LABELS)) == 1


@pytest.mark.parametrize("url", [LABELS, ORDERS])
async def test_a_label_or_return_order_is_not_sent_again_after_a_5xx(url: str) -> None:
    server = FakeCommerce()
    server.route("POST", url, reply(status=503), {"id": "X"})
    async with commerce_client(server) as client:
        with pytest.raises(ServerError):
            if url == LABELS:
                await client.create_address_label_as_received(LABEL_BODY)
            else:
                await client.create_return_order_as_received({"pickupDate": "2030-06-18"})
    assert len(server.api_calls("POST", url)) == 1


async def test_a_return_order_answer_is_kept_as_received() -> None:
    text = b'{"id": "RO-7", "state": "NEW"}'
    server = FakeCommerce()
    server.route(
        "POST",
        ORDERS,
        lambda request: httpx.Response(200, content=text, headers={"Content-Type": "application/json"}),
    )
    async with commerce_client(server) as client:
        answer = await client.create_return_order_as_received({"pickupDate": "2030-06-18"})
    assert answer.content == text
    (call,) = server.calls
    assert call.body == {"pickupDate": "2030-06-18"} and call.scope == "DCAPI_RETURN_ORDER"


# --- paths that are settings: a 404 or 405 names the setting, never "no results" ----------------------------

SAME_DAY = f"{BASE}/api/delivery/v1/sameday/acceptancepoints"


def _same_day_request() -> SameDayRequest:
    return SameDayRequest(address=DeliveryAddress.of(zip_code="3013", city="Bern"), delivery_date=TODAY)


@pytest.mark.parametrize("status", [404, 405])
async def test_pickup_points_at_a_path_the_service_does_not_have_fail_naming_the_setting(status: int) -> None:
    server = FakeCommerce()
    server.route("POST", POINTS, reply({"code": "NOT_FOUND", "message": "no route"}, status))
    async with commerce_client(server) as client:
        with pytest.raises(GuessedPathNotFound, match="POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH") as raised:
            await client.pickup_points_as_received(location_only())
    assert raised.value.setting == "POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH"
    assert not raised.value.retryable and len(server.calls) == 1
    # A 405 may be the method: its setting is named too.
    assert ("POSTFLOWS_COMMERCE_PICKUP_POINTS_METHOD" in str(raised.value)) is (status == 405)
    assert f"HTTP {status}" in str(raised.value) and "/pickup/v1/points" in str(raised.value)


async def test_a_same_day_404_is_no_results_as_section_7_lists_it() -> None:
    server = FakeCommerce()
    server.route("GET", SAME_DAY, reply({"code": "NO_RESULTS", "message": "no same-day service"}, 404))
    async with commerce_client(server) as client:
        with pytest.raises(NotFound) as raised:
            await client.same_day_acceptance_points(_same_day_request())
    assert not isinstance(raised.value, GuessedPathNotFound)


async def test_a_same_day_405_fails_naming_the_path_setting() -> None:
    server = FakeCommerce()
    server.route("GET", SAME_DAY, reply({"code": "METHOD_NOT_ALLOWED"}, 405))
    async with commerce_client(server) as client:
        with pytest.raises(GuessedPathNotFound, match="set POSTFLOWS_COMMERCE_SAME_DAY_PATH to") as raised:
            await client.same_day_acceptance_points(_same_day_request())
    assert raised.value.not_processed and raised.value.status_code == 405


@pytest.mark.parametrize(
    ("url", "setting"),
    [
        (LABELS, "POSTFLOWS_COMMERCE_BARCODE_PATH"),
        (ORDERS, "POSTFLOWS_COMMERCE_RETURN_ORDER_PATH"),
        (f"{BASE}/pickup/v1/users", "POSTFLOWS_COMMERCE_PICKUP_PATH"),
    ],
)
async def test_a_submission_to_a_path_the_service_does_not_have_is_not_processed_and_names_it(
    url: str, setting: str
) -> None:
    server = FakeCommerce()
    server.route("POST", url, reply({"code": "NOT_FOUND", "message": "Not Found"}, 404), {"id": "X"})
    async with commerce_client(server) as client:
        with pytest.raises(GuessedPathNotFound) as raised:
            if url == LABELS:
                await client.create_address_label_as_received(LABEL_BODY)
            elif url == ORDERS:
                await client.create_return_order_as_received({"pickupDate": "2030-06-18"})
            else:
                await client.register_pickup_user(location_only())
    assert raised.value.setting == setting and f"set {setting} to the service's path" in str(raised.value)
    assert raised.value.not_processed and len(server.api_calls("POST", url)) == 1


async def test_a_404_at_a_path_the_specification_shows_is_still_no_results() -> None:
    server = FakeCommerce()
    how = f"{BASE}/api/delivery/v1/deliverabilities/how/XX"
    server.route("GET", how, reply({"code": "NO_RESULTS"}, 404))
    async with commerce_client(server) as client:
        with pytest.raises(NotFound) as raised:
            await client.logistic_product("XX")
    assert not isinstance(raised.value, GuessedPathNotFound) and raised.value.outcome_unknown
