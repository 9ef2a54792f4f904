"""CommerceClient's parcel operations against the fake written from the spec: pickup points as received (§4.3,
a body shaped like the pickup user request with verified null, possibly without names), address labels and
return orders as received (§4.4, shapes not shown): a PDF answer or JSON, read no further than a label of
the largest size accepted, and never sent twice on their own."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from connectors.commerce import PickupUserRequest
from connectors.errors import MalformedResponse, ResponseTooLarge, ServerError
from connectors.limits import BASE64_SLACK_BYTES, base64_length
from tests.connectors.commerce_support import BASE, FakeCommerce, commerce_client, reply

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


async def test_a_label_answer_is_read_no_further_than_the_largest_label_could_be() -> None:
    largest = 3 * 1024
    limit = base64_length(largest) + BASE64_SLACK_BYTES
    server = FakeCommerce()
    server.route(
        "POST",
        LABELS,
        lambda request: httpx.Response(
            200, content=b"%PDF-" + b"x" * limit, headers={"Content-Type": "application/pdf"}
        ),
    )
    async with commerce_client(server, document_max_bytes=largest) as client:
        with pytest.raises(ResponseTooLarge, match="POSTFLOWS_DOWNLOAD_MAX_BYTES") as refused:
            await client.create_address_label_as_received(LABEL_BODY)
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
