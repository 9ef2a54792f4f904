"""Order endpoints of the newspaper sandbox: submission rules and messages, the statuses an order goes
through (LOADED for good by default, or the configured sequence), reports, delivery note."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import pytest_asyncio
from pydantic import ValidationError

from sandbox.config import SandboxConfig
from sandbox.faults import FaultRule
from tests.sandbox.test_newspaper_support import (
    ORDERS,
    ZURICH,
    FakeClock,
    authorised_client,
    codes,
    decode_document,
    gratis_order,
    pdf_text,
    sandbox,
    standard_order,
)

pytestmark = pytest.mark.asyncio
# Orders of these tests go through three statuses, so every phase can be looked at: CONTROL from halfway
# through the job (10 s), DONE at its end.
THREE_STATUSES = ("LOADED", "CONTROL", "DONE")


@pytest_asyncio.fixture
async def env() -> AsyncIterator[tuple[httpx.AsyncClient, FakeClock, SandboxConfig]]:
    config, clock = sandbox(order_statuses=THREE_STATUSES)
    async with authorised_client(config) as http:
        yield http, clock, config


async def submit(http: httpx.AsyncClient, order: dict[str, Any], kind: str = "standard") -> httpx.Response:
    return await http.post(f"{ORDERS}/{kind}", json=order)


async def accepted_id(http: httpx.AsyncClient, order: dict[str, Any], kind: str = "standard") -> int:
    response = await submit(http, order, kind)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["errors"] == [], body
    return int(body["id"])


async def test_clean_standard_order_returns_an_id_and_empty_messages(env: Any) -> None:
    http, clock, _ = env
    response = await submit(http, standard_order(clock))
    assert response.status_code == 200
    assert response.json() == {"id": 7000001, "errors": [], "warnings": []}
    assert (await accepted_id(http, standard_order(clock, issueNumber={"from": 25}))) == 7000002


async def test_late_delivery_and_missing_weight_give_warnings_on_an_accepted_order(env: Any) -> None:
    http, clock, _ = env
    order = standard_order(clock, lateDelivery=True)
    del order["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]["weight"]
    body = (await submit(http, order)).json()
    assert isinstance(body["id"], int)
    assert codes(body, "warnings") == ["0900", "0901"]
    assert body["warnings"][0]["error"].startswith("0900 Late delivery")


async def test_status_moves_loaded_control_final_by_the_clock(env: Any) -> None:
    http, clock, _ = env
    order_id = await accepted_id(http, standard_order(clock))
    start = datetime.fromtimestamp(clock.now, ZURICH)
    seen = []
    for step in (0, 4, 1, 4, 1, 100):
        clock.advance(step)
        seen.append((await http.get(f"{ORDERS}/{order_id}/status")).json())
    assert [item["statusValue"] for item in seen] == [
        "LOADED",
        "LOADED",
        "CONTROL",
        "CONTROL",
        "DONE",
        "DONE",
    ]
    assert seen[0]["statusDate"] == start.isoformat(timespec="seconds") == "2025-06-16T09:00:00+02:00"
    assert seen[2]["statusDate"] == (start + timedelta(seconds=5)).isoformat(timespec="seconds")
    assert seen[5]["statusDate"] == (start + timedelta(seconds=10)).isoformat(timespec="seconds")


async def test_an_order_stays_loaded_by_default_and_is_reported_on() -> None:
    config, clock = sandbox()
    assert config.order_statuses == ("LOADED",)
    async with authorised_client(config) as http:
        order_id = await accepted_id(http, standard_order(clock))
        start = datetime.fromtimestamp(clock.now, ZURICH).isoformat(timespec="seconds")
        early = await http.get(f"{ORDERS}/{order_id}/corrected-standard-order")
        assert codes(early.json()) == ["0000"]
        for step in (0, 9, 1, 3000):
            clock.advance(step)
            status = (await http.get(f"{ORDERS}/{order_id}/status")).json()
            assert status == {"statusValue": "LOADED", "statusDate": start}
        assert (await http.get(f"{ORDERS}/{order_id}/summary")).json()["statusValue"] == "LOADED"
        assert (await http.get(f"{ORDERS}/{order_id}/sendings")).json()["nationalItems"]
        # The job is done: the released order is served, the status stays.
        released = await http.get(f"{ORDERS}/{order_id}/corrected-standard-order")
        assert released.json()["basisInformation"]["issueNumber"] == {"from": 24}


async def test_the_status_sequence_comes_from_the_config_spread_over_the_job() -> None:
    config, clock = sandbox(job_seconds=9, order_statuses="loaded, CONTROL,RELEASED ,ARCHIVED")
    assert config.order_statuses == ("LOADED", "CONTROL", "RELEASED", "ARCHIVED")
    async with authorised_client(config) as http:
        order_id = await accepted_id(http, standard_order(clock))
        start = clock.now
        seen = []
        for step in (0, 2.9, 0.1, 3, 2.9, 0.1, 100):
            clock.advance(step)
            seen.append((await http.get(f"{ORDERS}/{order_id}/status")).json())
    assert [item["statusValue"] for item in seen] == [
        "LOADED",
        "LOADED",
        "CONTROL",
        "RELEASED",
        "RELEASED",
        "ARCHIVED",
        "ARCHIVED",
    ]
    entered = [datetime.fromisoformat(item["statusDate"]).timestamp() - start for item in seen]
    assert entered == [0, 0, 3, 6, 6, 9, 9]


async def test_an_order_keeps_the_sequence_it_was_accepted_with() -> None:
    config, clock = sandbox(order_statuses=("LOADED", "DONE"))
    async with authorised_client(config) as http:
        order_id = await accepted_id(http, standard_order(clock))
        config.order_statuses = ("CONTROL",)
        later = await accepted_id(http, standard_order(clock, issueNumber={"from": 25}))
        clock.advance(10)
        statuses = [
            (await http.get(f"{ORDERS}/{oid}/status")).json()["statusValue"] for oid in (order_id, later)
        ]
    assert statuses == ["DONE", "CONTROL"]


@pytest.mark.parametrize("setting", ["", " , ", "LOADED,,DONE", "LOADED;DONE", "IN CONTROL", []])
async def test_a_status_sequence_that_names_no_statuses_is_refused(setting: object) -> None:
    with pytest.raises(ValidationError, match="expected status names separated by commas"):
        SandboxConfig(order_statuses=setting)


async def test_summary_and_sendings_are_refused_in_control_only(env: Any) -> None:
    http, clock, _ = env
    order_id = await accepted_id(http, standard_order(clock))
    loaded = await http.get(f"{ORDERS}/{order_id}/summary")
    assert loaded.status_code == 200 and loaded.json()["statusValue"] == "LOADED"
    clock.advance(6)
    for leaf in ("summary", "sendings"):
        refused = await http.get(f"{ORDERS}/{order_id}/{leaf}")
        assert refused.status_code == 200
        body = refused.json()
        assert codes(body) == ["0000"] and "CONTROL" in body["errors"][0]["error"]
        assert "totalNewspaper" not in body and "nationalItems" not in body
    clock.advance(5)
    assert (await http.get(f"{ORDERS}/{order_id}/sendings")).json()["nationalItems"]


async def test_summary_and_sendings_shapes(env: Any) -> None:
    http, clock, _ = env
    order_id = await accepted_id(http, standard_order(clock))
    clock.advance(10)
    summary = (await http.get(f"{ORDERS}/{order_id}/summary")).json()
    assert summary == {
        "issueDate": (clock.today() + timedelta(days=2)).isoformat(),
        "issueNumber": {"from": 24},
        "barcodeNumber": summary["barcodeNumber"],
        "totalNewspaper": 900 + 120 + 30 + 12,
        "statusValue": "DONE",
        "difference": False,
    }
    assert summary["barcodeNumber"].isdigit()
    sendings = (await http.get(f"{ORDERS}/{order_id}/sendings")).json()
    assert sendings["nationalItems"] == [
        {
            "product": "SORTED",
            "weight": 180,
            "countMailMan": 900,
            "countCity": 120,
            "countRest": 30,
            "count": 1050,
        }
    ]
    assert sendings["internationalItems"] == [
        {"country": "DE", "product": "ECONOMY", "weight": 180, "count": 12}
    ]
    assert sendings["gratisItems"] == []


async def test_original_and_corrected_orders(env: Any) -> None:
    http, clock, _ = env
    order = standard_order(clock)
    del order["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]["weight"]
    order_id = await accepted_id(http, order)
    assert (await http.get(f"{ORDERS}/{order_id}/original-standard-order")).json() == order
    early = await http.get(f"{ORDERS}/{order_id}/corrected-standard-order")
    assert early.status_code == 200 and codes(early.json()) == ["0000"]
    clock.advance(10)
    corrected = (await http.get(f"{ORDERS}/{order_id}/corrected-standard-order")).json()
    assert corrected["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]["weight"] == 180
    assert corrected["basisInformation"] == order["basisInformation"]
    assert (await http.get(f"{ORDERS}/{order_id}/summary")).json()["difference"] is True
    wrong_kind = await http.get(f"{ORDERS}/{order_id}/original-gratis-order")
    assert wrong_kind.status_code == 404 and wrong_kind.json()["errors"]
    unknown = await http.get(f"{ORDERS}/12345/status")
    assert unknown.status_code == 404 and "12345" in unknown.json()["errors"][0]["error"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"deliveryDate": "2020-01-01"}, "0005"),
        ({"deliveryDate": "16.06.2025"}, "0005"),
        ({"issueNumber": {"from": 24, "to": 24}}, "0008"),
        ({"issueNumber": {"from": 24, "to": 20}}, "0008"),
        ({"issueNumber": {"from": 0}}, "0009"),
    ],
)
async def test_basis_information_rules_reject_with_200(
    env: Any, change: dict[str, Any], expected: str
) -> None:
    http, clock, _ = env
    response = await submit(http, standard_order(clock, **change))
    assert response.status_code == 200
    body = response.json()
    assert body["id"] is None and codes(body) == [expected]


async def test_past_date_message_names_the_dates(env: Any) -> None:
    http, clock, _ = env
    yesterday = (clock.today() - timedelta(days=1)).isoformat()
    body = (await submit(http, standard_order(clock, deliveryDate=yesterday))).json()
    assert body["errors"][0]["error"].startswith("0005 ") and yesterday in body["errors"][0]["error"]
    today = clock.today().isoformat()
    assert (await submit(http, standard_order(clock, deliveryDate=today))).json()["errors"] == []


@pytest.mark.parametrize(
    ("number", "expected"), [("1234", "0002"), ("12ab", "0002"), ("9001", "0001"), ("4712", "0003")]
)
async def test_unusable_newspapers_are_refused_with_400(env: Any, number: str, expected: str) -> None:
    http, clock, _ = env
    response = await submit(http, standard_order(clock, newspaperNumber=number))
    assert response.status_code == 400
    assert codes(response.json()) == [expected]


async def test_weight_ranges_are_named_in_the_message(env: Any) -> None:
    http, clock, _ = env
    order = standard_order(clock)
    order["nationalDelivery"]["sortedDelivery"]["sortedShipments"] = [
        {"weight": 2500, "countMailMan": 10, "countCity": 0, "countRest": 0},
        {"weight": 5, "countMailMan": 0, "countCity": 10, "countRest": 0},
        {"weight": 1600, "countMailMan": 0, "countCity": 0, "countRest": 10},
    ]
    body = (await submit(http, order)).json()
    assert body["id"] is None
    assert [item["error"] for item in body["errors"]] == [
        "0030 Permitted weight range for district bundles: 10 - 2000 g",
        "0031 Permitted weight range for locality bundles: 10 - 2000 g",
        "0032 Permitted weight range for other bundles: 20 - 1500 g",
    ]


async def test_international_rules(env: Any) -> None:
    http, clock, _ = env
    order = standard_order(clock)
    lanes = order["internationalDelivery"]["internationalShipments"]
    lanes[0]["economyShipments"][0]["shipmentRemark"] = "x" * 51
    lanes.append(
        {"productLabel": "PRESSE_INT", "country": "XX", "economyShipments": [{"weight": 10, "count": 1}]}
    )
    lanes.append(
        {
            "productLabel": "PRESSE_INT",
            "country": "US",
            "contractPrice": True,
            "priorityShipments": [{"weight": 10, "count": 1}],
        }
    )
    lanes.append(
        {
            "productLabel": "PRESSE_INT",
            "country": "AT",
            "contractPrice": True,
            "economyShipments": [{"weight": 1500, "count": 1}],
        }
    )
    lanes.append(
        {"productLabel": "PRESSE_INT", "country": "GB", "priorityShipments": [{"weight": 2001, "count": 1}]}
    )
    body = (await submit(http, order)).json()
    assert codes(body) == ["0152", "0151", "0173", "0176", "0175"]
    assert body["errors"][0]["error"] == "0152 Comment too long: maximum 50 characters"
    assert body["errors"][1]["error"].endswith(": XX")
    assert body["errors"][3]["error"].endswith("1 - 1000 g")


async def test_all_problems_are_reported_together_with_warnings(env: Any) -> None:
    http, clock, _ = env
    order = standard_order(
        clock, deliveryDate="2020-01-01", lateDelivery=True, issueNumber={"from": 3, "to": 1}
    )
    order["nationalDelivery"]["sortedDelivery"]["sortedShipments"][0]["weight"] = 3000
    body = (await submit(http, order)).json()
    assert body["id"] is None
    assert codes(body) == ["0005", "0008", "0030", "0031", "0032"]
    assert codes(body, "warnings") == ["0900"]


async def test_issue_number_used_for_another_date_is_0007(env: Any) -> None:
    http, clock, _ = env
    await accepted_id(http, standard_order(clock))
    other_day = (clock.today() + timedelta(days=9)).isoformat()
    assert codes((await submit(http, standard_order(clock, deliveryDate=other_day))).json()) == ["0007"]
    assert (await submit(http, standard_order(clock))).json()["errors"] == []


@pytest.mark.parametrize(
    "body", ["{not json", '{"language": "DE"}', '{"basisInformation": {"newspaperNumber": "4711"}}']
)
async def test_malformed_bodies_are_400_in_the_envelope(env: Any, body: str) -> None:
    http, _, _ = env
    response = await http.post(
        f"{ORDERS}/standard", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["errors"] and response.json()["warnings"] == []
    assert all(item["error"].startswith("Invalid request") for item in response.json()["errors"])


async def test_gratis_order_fills_counts_from_the_distribution_list(env: Any) -> None:
    http, clock, _ = env
    order = gratis_order(clock)
    order_id = await accepted_id(http, order, "gratis")
    assert (await http.get(f"{ORDERS}/{order_id}/original-gratis-order")).json() == order
    clock.advance(10)
    corrected = (await http.get(f"{ORDERS}/{order_id}/corrected-gratis-order")).json()
    assert corrected["gratisDelivery"]["gratisShipments"][1]["count"] == 960 + 2480
    sendings = (await http.get(f"{ORDERS}/{order_id}/sendings")).json()
    assert sendings["gratisItems"] == [
        {"locationCategory": "A", "weight": 90, "count": 2930},
        {"locationCategory": "B", "weight": 90, "count": 3440},
    ]
    assert (await http.get(f"{ORDERS}/{order_id}/summary")).json()["totalNewspaper"] == 2930 + 3440
    assert (await http.get(f"{ORDERS}/{order_id}/corrected-standard-order")).status_code == 404


async def test_gratis_rules(env: Any) -> None:
    http, clock, _ = env
    not_gratis = await submit(http, gratis_order(clock, "4711"), "gratis")
    assert not_gratis.status_code == 400 and codes(not_gratis.json()) == ["0100"]
    no_c = gratis_order(
        clock, "5121", [{"locationCategory": "C", "weight": 50}, {"locationCategory": "A", "weight": 401}]
    )
    assert codes((await submit(http, no_c, "gratis")).json()) == ["0104", "0105"]
    heavy_c = gratis_order(clock, "5120", [{"locationCategory": "C", "weight": 301}])
    body = (await submit(http, heavy_c, "gratis")).json()
    assert (
        body["errors"][0]["error"] == "0107 Permitted weight range for gratis location category C: 10 - 300 g"
    )
    unknown_category = gratis_order(clock, "5120", [{"locationCategory": "D", "weight": 50}])
    assert (await submit(http, unknown_category, "gratis")).status_code == 400
    as_standard = await submit(http, standard_order(clock, newspaperNumber="5120"))
    assert codes(as_standard.json()) == ["0020", "0021", "0022"]


async def test_delivery_note_is_a_pdf_document_or_raw_pdf_by_accept(env: Any) -> None:
    http, clock, _ = env
    order_id = await accepted_id(http, standard_order(clock))
    url = f"{ORDERS}/{order_id}/delivery-note"
    as_json = await http.get(url)
    assert as_json.headers["content-type"].startswith("application/json")
    lines = decode_document(as_json.json(), "application/pdf")
    assert lines[0] == "Delivery note" and f"Order {order_id}" in lines
    assert "partialDeliveryNotes" not in as_json.json()
    raw = await http.get(url, headers={"Accept": "application/pdf"})
    assert raw.headers["content-type"] == "application/pdf"
    assert raw.content == base64.b64decode(as_json.json()["document"]["data"])
    assert pdf_text(raw.content)[0] == "Delivery note"
    tie = await http.get(url, headers={"Accept": "application/json, application/pdf"})
    assert tie.headers["content-type"].startswith("application/json")
    ranked = await http.get(url, headers={"Accept": "application/json;q=0.5, application/pdf"})
    assert ranked.headers["content-type"] == "application/pdf"


async def test_gratis_delivery_note_carries_partial_notes(env: Any) -> None:
    http, clock, _ = env
    order_id = await accepted_id(http, gratis_order(clock), "gratis")
    body = (await http.get(f"{ORDERS}/{order_id}/delivery-note")).json()
    decode_document(body)
    partial = body["partialDeliveryNotes"]
    assert [note["locationCategory"] for note in partial] == ["A", "B"]
    assert decode_document(partial[1])[0] == "Partial delivery note, location category B"


async def test_service_status_fault_answers_200_with_the_code(env: Any) -> None:
    http, clock, config = env
    order_id = await accepted_id(http, standard_order(clock))
    config.faults.add(FaultRule(api="newspaper", endpoint="*/status", kind="service_status", value="0000"))
    faulted = await http.get(f"{ORDERS}/{order_id}/status")
    assert faulted.status_code == 200
    assert faulted.json() == {
        "errors": [{"error": "0000 Function not available yet", "resource": None}],
        "warnings": [],
    }
    assert (await http.get(f"{ORDERS}/{order_id}/status")).json()["statusValue"] == "LOADED"


async def test_job_faults_set_the_outcome_and_the_duration(env: Any) -> None:
    http, clock, config = env
    config.faults.add(
        FaultRule(api="newspaper", endpoint="*orders/standard", kind="job_outcome", value="failed")
    )
    failed = await accepted_id(http, standard_order(clock))
    config.faults.add(FaultRule(api="newspaper", endpoint="*orders/standard", kind="job_seconds", value=100))
    slow = await accepted_id(http, standard_order(clock))
    normal = await accepted_id(http, standard_order(clock))
    clock.advance(10)
    statuses = [
        (await http.get(f"{ORDERS}/{oid}/status")).json()["statusValue"] for oid in (failed, slow, normal)
    ]
    assert statuses == ["FAILED", "LOADED", "DONE"]


async def test_a_job_outcome_fault_ends_an_order_that_stays_in_one_status() -> None:
    config, clock = sandbox(job_seconds=10)
    config.faults.add(
        FaultRule(api="newspaper", endpoint="*orders/standard", kind="job_outcome", value="canceled")
    )
    async with authorised_client(config) as http:
        order_id = await accepted_id(http, standard_order(clock))
        start = clock.now
        clock.advance(9)
        assert (await http.get(f"{ORDERS}/{order_id}/status")).json()["statusValue"] == "LOADED"
        clock.advance(1)
        ended = (await http.get(f"{ORDERS}/{order_id}/status")).json()
    assert ended["statusValue"] == "CANCELED"
    assert datetime.fromisoformat(ended["statusDate"]).timestamp() == start + 10


async def test_transport_faults_reach_the_order_endpoints(env: Any) -> None:
    http, clock, config = env
    config.faults.add(FaultRule(api="newspaper", endpoint="*orders/standard", kind="http_status", value=503))
    assert (await submit(http, standard_order(clock))).status_code == 503
    config.faults.add(FaultRule(api="newspaper", endpoint="*orders/standard", kind="drop"))
    with pytest.raises(httpx.RemoteProtocolError):
        await submit(http, standard_order(clock))
    assert (await submit(http, standard_order(clock))).json()["id"] == 7000001
