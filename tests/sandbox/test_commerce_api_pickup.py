"""The commerce API sandbox's pickup, barcode and return-order endpoints, paths moved by settings, and fault
injection on the commerce mount."""

from __future__ import annotations

import base64
import re
import uuid
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox.commerce.labels import label_pdf
from sandbox.commerce.paths import CommercePaths
from sandbox.commerce.pickup import USERS_TABLE
from sandbox.config import SandboxConfig
from sandbox.faults import FaultPlan, FaultRule
from sandbox.inprocess import SANDBOX_ORIGIN, SandboxTransport
from tests.sandbox.commerce_api_support import COMMERCE, commerce_client, commerce_sandbox, error_code, mint

PICKUP = "DCAPI_PICKUP"
USERS = "/pickup/v1/users"
POINTS = "/pickup/v1/points"


def pickup_user(**changes: Any) -> dict[str, Any]:
    """A pickup user (§2.9); ``changes`` replace top-level sections."""
    body: dict[str, Any] = {
        "userDetails": {"gender": "MALE", "firstName": "Hans", "lastName": "Muster", "language": "DE"},
        "address": {
            "house": {"street": "Wankdorfallee", "houseNumber": "4"},
            "zip": {"zip": "3030", "city": "Bern", "countryCode": "CH"},
        },
        "notification": {"notifyMode": "EMAIL", "email": "hans.muster@example.ch", "mobileNumber": ""},
        "service": "PICKUP",
        "verified": None,
    }
    body.update(changes)
    return body


async def test_the_same_user_gets_the_same_id_and_a_new_user_a_new_one() -> None:
    config, _ = commerce_sandbox()
    same_in_other_spelling = pickup_user(
        userDetails={"gender": "MALE", "firstName": "HANS", "lastName": " Muster", "language": "EN"},
        notification={"notifyMode": "EMAIL", "email": "Hans.Muster@example.ch"},
    )
    async with commerce_client(config, PICKUP) as http:
        first = await http.post(USERS, json=pickup_user())
        again = await http.post(USERS, json=same_in_other_spelling)
        other_email = await http.post(
            USERS, json=pickup_user(notification={"notifyMode": "EMAIL", "email": "hans@example.org"})
        )
        other_address = await http.post(
            USERS, json=pickup_user(address={"house": {"street": "Spitalgasse", "houseNumber": "2"}})
        )
    assert first.status_code == 200
    assert first.json()["verified"] == "NONE"
    assert set(first.json()) == {"id", "verified"}
    assert again.json() == first.json()
    ids = {first.json()["id"], other_email.json()["id"], other_address.json()["id"]}
    assert len(ids) == 3


async def test_pickup_ids_are_shared_by_apps_on_one_state_dir(tmp_path: Path) -> None:
    ids = []
    for _ in range(2):
        config = SandboxConfig(state_dir=tmp_path / "state")
        token = mint(config, PICKUP)
        async with httpx.AsyncClient(
            transport=SandboxTransport(config),
            base_url=COMMERCE,
            headers={"Authorization": f"Bearer {token}"},
        ) as http:
            ids.append((await http.post(USERS, json=pickup_user())).json()["id"])
    assert ids[0] == ids[1]
    uuid.UUID(ids[0])
    # Without the shared directory a new app knows nobody.
    config, _ = commerce_sandbox()
    async with commerce_client(config, PICKUP) as http:
        fresh = (await http.post(USERS, json=pickup_user())).json()["id"]
    assert fresh != ids[0]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (pickup_user(userDetails={"lastName": "Muster"}), "userDetails.firstName"),
        (pickup_user(userDetails={"firstName": "Hans", "lastName": ""}), "userDetails.lastName"),
        (pickup_user(notification={"email": 42}), "notification.email"),
        (pickup_user(verified=True), "verified"),
        (pickup_user(address="Wankdorfallee 4"), "address"),
    ],
)
async def test_a_pickup_user_with_a_bad_field_is_400(body: dict[str, Any], named: str) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, PICKUP) as http:
        response = await http.post(USERS, json=body)
    assert response.status_code == 400
    assert error_code(response) == "INVALID_PARAMETER"
    assert named in response.json()["message"]


async def test_pickup_points_near_the_address_with_a_week_of_opening_hours() -> None:
    config, clock = commerce_sandbox()
    async with commerce_client(config, PICKUP) as http:
        response = await http.post(POINTS, json=pickup_user())
    assert response.status_code == 200
    points = response.json()["points"]
    assert len(points) == 3
    assert points[0]["address"] == {"street": "Wankdorfallee 1", "zip": "3030", "city": "Bern"}
    today = clock.today()
    for point in points:
        assert {"ppNumber", "service", "name", "address", "webLink", "delivery", "geographicPosition"} <= set(
            point
        )
        assert point["webLink"].startswith("https://")
        float(point["geographicPosition"]["latitude"])
        float(point["geographicPosition"]["longitude"])
        calendar = point["calendar"]
        assert list(calendar) == [(today + timedelta(days=n)).isoformat() for n in range(7)]
        assert calendar["2025-06-22"] == []  # Sunday
        assert calendar["2025-06-21"] == {"openingIntervals": [{"from": "08:00:00", "to": "12:00:00"}]}
        monday = calendar[today.isoformat()]["openingIntervals"]
        assert monday[0]["from"] == "07:30:00" and monday[-1]["to"] == "18:30:00"
    assert date.fromisoformat(next(iter(points[0]["calendar"]))) == today


async def test_pickup_points_are_in_the_address_s_own_town_anywhere_in_the_country() -> None:
    config, _ = commerce_sandbox()
    grindelwald = {"house": {"street": "Dorfstrasse", "houseNumber": "1"}, "zip": {"zip": "3818"}}
    async with commerce_client(config, PICKUP) as http:
        points = (await http.post(POINTS, json=pickup_user(address=grindelwald))).json()["points"]
    assert points[0]["address"] == {"street": "Bahnhofstrasse 1", "zip": "3818", "city": "Grindelwald"}
    assert len({point["ppNumber"] for point in points}) == 3
    assert all(abs(int(point["address"]["zip"]) - 3818) < 20 for point in points)


@pytest.mark.parametrize(
    "body",
    [
        pickup_user(address={"house": {"street": "Wankdorfallee"}}),
        pickup_user(address={"zip": {"zip": "30"}}),
    ],
)
async def test_pickup_points_need_a_four_digit_zip(body: dict[str, Any]) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, PICKUP) as http:
        response = await http.post(POINTS, json=body)
    assert response.status_code == 400
    assert "address.zip.zip" in response.json()["message"]


async def test_pickup_served_under_a_moved_prefix_with_another_points_method() -> None:
    paths = CommercePaths(
        pickup_prefix="pickpost/v1/", pickup_points_method="GET", pickup_points_path="pickuppoints"
    )
    config, _ = commerce_sandbox(commerce_paths=paths)
    async with commerce_client(config, PICKUP) as http:
        user = await http.post("/pickpost/v1/users", json=pickup_user())
        points = await http.request("GET", "/pickpost/v1/pickuppoints", json=pickup_user())
        old_users = await http.post(USERS, json=pickup_user())
        points_by_post = await http.post("/pickpost/v1/pickuppoints", json=pickup_user())
    assert user.status_code == 200 and user.json()["verified"] == "NONE"
    assert points.status_code == 200 and len(points.json()["points"]) == 3
    assert old_users.status_code == 404
    assert points_by_post.status_code == 405


def test_a_path_setting_needs_a_segment() -> None:
    with pytest.raises(ValueError, match="segment"):
        CommercePaths(pickup_prefix="/")


@pytest.mark.parametrize(
    ("path", "scope"),
    [
        ("/barcode/v1/addresslabels", "DCAPI_BARCODE_READ"),
        ("/delivery/collection/order/v2/orders", "DCAPI_RETURN_ORDER"),
    ],
)
async def test_barcode_and_return_order_accept_any_json_object(path: str, scope: str) -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, scope) as http:
        accepted = await http.post(path, json={"recipient": {"name": "Hans"}, "items": [1, 2]})
        again = await http.post(path, json={})
        refused = await http.post(path, json=["not", "an", "object"])
    assert accepted.status_code == 200
    assert accepted.json()["received"] == ["items", "recipient"]
    assert accepted.json()["id"] != again.json()["id"]
    uuid.UUID(accepted.json()["id"])
    assert (refused.status_code, error_code(refused)) == (400, "INVALID_PARAMETER")


async def test_a_label_answer_carries_a_pdf_at_item_label_and_a_return_order_none() -> None:
    config, _ = commerce_sandbox()
    async with commerce_client(config, "DCAPI_BARCODE_READ", "DCAPI_RETURN_ORDER") as http:
        label = (await http.post("/barcode/v1/addresslabels", json={"item": {"itemID": "1"}})).json()
        order = (await http.post("/delivery/collection/order/v2/orders", json={"a": 1})).json()
    pdf = base64.b64decode(label["item"]["label"][0], validate=True)
    assert pdf.startswith(b"%PDF-1.4\n") and pdf.rstrip().endswith(b"%%EOF")
    assert label["item"]["identCode"].encode() in pdf  # the page shows the label's number
    assert re.fullmatch(r"99\.60\.\d{12}", label["item"]["identCode"])
    assert set(order) == {"id", "received"}


def test_the_sandbox_label_is_a_pdf_whose_cross_reference_points_at_its_objects() -> None:
    pdf = label_pdf("99.60.000000000042")
    table = int(pdf.rsplit(b"startxref\n", 1)[1].split(b"\n", 1)[0])
    assert pdf[table:].startswith(b"xref\n0 6\n")
    offsets = re.findall(rb"(\d{10}) 00000 n ", pdf[table:])
    assert len(offsets) == 5
    for number, offset in enumerate(offsets, start=1):
        assert pdf[int(offset) :].startswith(b"%d 0 obj\n" % number)
    stream = re.search(rb"<< /Length (\d+) >>\nstream\n(.*?)\nendstream", pdf, re.DOTALL)
    assert stream is not None and int(stream.group(1)) == len(stream.group(2))


async def test_barcode_and_return_order_paths_are_settings() -> None:
    paths = CommercePaths(barcode_path="/labels/v2/generate", return_order_path="/returns/v1/orders")
    config, _ = commerce_sandbox(commerce_paths=paths)
    async with commerce_client(config, "DCAPI_BARCODE_READ", "DCAPI_RETURN_ORDER") as http:
        label = await http.post("/labels/v2/generate", json={})
        order = await http.post("/returns/v1/orders", json={})
        old = await http.post("/barcode/v1/addresslabels", json={})
    assert label.status_code == order.status_code == 200
    assert old.status_code == 404


# Faults


def faulted(*rules: FaultRule) -> SandboxConfig:
    config, _ = commerce_sandbox(faults=FaultPlan(list(rules)))
    return config


async def test_an_http_status_fault_on_a_commerce_endpoint() -> None:
    config = faulted(FaultRule(api="commerce", endpoint="address/v1/zips", kind="http_status", value=503))
    async with commerce_client(config, "DCAPI_ADDRESS_READ") as http:
        faulted_once = await http.get("/address/v1/zips", params={"zipCity": "Bern"})
        then = await http.get("/address/v1/zips", params={"zipCity": "Bern"})
        other = await http.get("/address/v1/streets", params={"name": "Linden"})
    assert faulted_once.status_code == 503
    assert then.status_code == 200 and other.status_code == 200


async def test_a_service_status_fault_answers_after_the_bearer_check() -> None:
    config = faulted(
        FaultRule(api="commerce", endpoint="api/delivery/*", kind="service_status", value=500, times=None)
    )
    async with commerce_client(config, "DCAPI_DELIVERY") as http:
        failed = await http.get("/api/delivery/v1/options/holidays")
        unauthorised = await http.get("/api/delivery/v1/options/holidays", headers={"Authorization": ""})
    assert failed.status_code == 500
    assert error_code(failed) == "INTERNAL_ERROR"
    assert unauthorised.status_code == 401


async def test_a_processed_status_fault_keeps_the_registration() -> None:
    config = faulted(FaultRule(api="commerce", endpoint="pickup/v1/users", kind="processed_status"))
    transport = SandboxTransport(config)
    headers = {"Authorization": f"Bearer {mint(config, PICKUP)}"}
    users = transport.app.state.sandbox_state.table(USERS_TABLE)
    async with httpx.AsyncClient(transport=transport, base_url=COMMERCE, headers=headers) as http:
        lost = await http.post(USERS, json=pickup_user())
        registered = [user_id for _, user_id in users.items()]
        retried = await http.post(USERS, json=pickup_user())
        counted = (await http.get(f"{SANDBOX_ORIGIN}/_sandbox/requests")).json()
    assert lost.status_code == 500
    assert error_code(lost) == "INTERNAL_ERROR"
    # The failed answer hid a registration: the retry is answered the id that one made.
    assert len(registered) == 1
    assert retried.status_code == 200
    assert retried.json()["id"] == registered[0]
    assert {"api": "commerce", "method": "POST", "endpoint": "pickup/v1/users", "count": 2} in counted
