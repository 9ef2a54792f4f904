"""The address web service connector against a spec-shaped fake transport (no sandbox involved)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr, ValidationError

from connectors.address_service import (
    AddressServiceClient,
    AuthenticationStatusError,
    AutocompleteQuery,
    AutocompleteQueryError,
    AutocompleteVariant,
    DatabaseStatusError,
    InternalStatusError,
    ParameterStatusError,
    SettlementStatusError,
    ThrottledStatusError,
    TokenStatus,
    UnknownStatusError,
    ZipOrderMode,
    build_autocomplete_request,
    parse_ms_date,
    status_error,
)
from connectors.address_service.errors import STATUS_TABLE
from connectors.address_service.models import AutocompleteEntry, BuildingVerification
from connectors.errors import ApiError, MalformedResponse
from connectors.http import ClientOptions
from connectors.retry import RetryPolicy

BASE = "https://aws.example.test/REST/v1"


async def downloaded(client: AddressServiceClient, token: str) -> bytes:
    async with client.download(token) as chunks:
        return b"".join([chunk async for chunk in chunks])


def make_client(handler: Any, max_attempts: int = 3) -> AddressServiceClient:
    async def no_sleep(seconds: float) -> None:
        return None

    return AddressServiceClient(
        BASE,
        username="tech-user",
        password=SecretStr("s3cret-pw"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(max_attempts=max_attempts, base_delay=0, jitter=0),
            sleep=no_sleep,
        ),
    )


# -- Status table ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_type", "retryable"),
    [
        (101, AuthenticationStatusError, False),
        (102, AuthenticationStatusError, False),
        (103, AuthenticationStatusError, False),
        (104, AuthenticationStatusError, False),
        (105, AuthenticationStatusError, False),
        (106, ThrottledStatusError, True),
        (201, InternalStatusError, True),
        (202, InternalStatusError, True),
        (203, InternalStatusError, True),
        (301, DatabaseStatusError, False),
        (302, DatabaseStatusError, False),
        (401, SettlementStatusError, False),
        (402, SettlementStatusError, False),
        (403, SettlementStatusError, False),
        (404, SettlementStatusError, False),
        (501, ThrottledStatusError, True),
        (801, ParameterStatusError, False),
        (802, ParameterStatusError, False),
        (999, UnknownStatusError, False),
        (4711, UnknownStatusError, False),
    ],
)
def test_every_status_maps_to_a_typed_error(status: int, error_type: type, retryable: bool) -> None:
    error = status_error(status, operation="runbatch")
    assert type(error) is error_type
    assert error.retryable is retryable
    assert error.status == status
    assert f"Status {status}" in str(error) and "runbatch" in str(error)
    if status in STATUS_TABLE:
        assert STATUS_TABLE[status].name in str(error)


def test_every_listed_status_but_zero_is_an_error_class() -> None:
    assert set(STATUS_TABLE) == {
        0,
        101,
        102,
        103,
        104,
        105,
        106,
        201,
        202,
        203,
        301,
        302,
        401,
        402,
        403,
        404,
        501,
        801,
        802,
        999,
    }


# -- /Date()/ ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected_utc", "offset"),
    [
        ("/Date(1700000000000+0100)/", datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC), timedelta(hours=1)),
        (
            "/Date(1700000000000-0530)/",
            datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC),
            -timedelta(hours=5, minutes=30),
        ),
        ("/Date(1700000000123)/", datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC), timedelta(0)),
        ("/Date(0+0000)/", datetime(1970, 1, 1, tzinfo=UTC), timedelta(0)),
        ("/Date(-86400000+0200)/", datetime(1969, 12, 31, tzinfo=UTC), timedelta(hours=2)),
    ],
)
def test_ms_date_parses_to_aware_datetime(raw: str, expected_utc: datetime, offset: timedelta) -> None:
    parsed = parse_ms_date(raw)
    assert parsed is not None and parsed.tzinfo is not None
    assert parsed == expected_utc
    assert parsed.utcoffset() == offset


def test_ms_date_accepts_empty_and_iso_and_rejects_garbage() -> None:
    assert parse_ms_date(None) is None and parse_ms_date("") is None
    assert parse_ms_date("2024-01-02T03:04:05+01:00") == datetime(2024, 1, 2, 2, 4, 5, tzinfo=UTC)
    with pytest.raises(ValueError, match="Date"):
        parse_ms_date("/Date(abc)/")


def test_token_status_enum_and_unknown_values() -> None:
    assert [s.value for s in TokenStatus] == list(range(8))
    assert TokenStatus(42) is TokenStatus.UNKNOWN
    assert (
        TokenStatus.RUNNING.is_pending
        and TokenStatus.FAILED.is_failure
        and not TokenStatus.FINISHED.is_failure
    )


# -- batch ------------------------------------------------------------------------------------------------


async def test_batch_calls_send_spec_shapes_and_basic_auth(tmp_path: Path) -> None:
    seen: list[tuple[str, str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["Authorization"].startswith("Basic ")
        path = request.url.path.removeprefix("/REST/v1")
        body = request.content
        seen.append((request.method, path, body))
        if path == "/uploadfile":
            assert request.headers["Content-Type"] == "application/octet-stream"
            return httpx.Response(200, json={"UploadFileResult": {"FileToken": "in-1", "Status": 0}})
        if path == "/createfile":
            return httpx.Response(200, json={"CreateFileResult": {"FileToken": "out-1", "Status": 0}})
        if path in ("/runbatch", "/runbatchwithclient"):
            return httpx.Response(
                200, json={"RunBatchResult": {"BatchToken": "b-1", "SettlementId": 9, "Status": 0}}
            )
        if path == "/checkbatchstatus/b-1":
            return httpx.Response(
                200,
                json={
                    "CheckBatchStatusResult": {
                        "BatchStatus": {
                            "LastUpdateDateTime": "/Date(1700000060000+0100)/",
                            "Message": "running",
                            "Progress": 40,
                            "RemainingTimeSeconds": 12,
                            "StartDateTime": "/Date(1700000000000+0100)/",
                            "TokenStatus": 3,
                        },
                        "Status": 0,
                    }
                },
            )
        if path == "/downloadfile/out-1":
            return httpx.Response(
                200, content=b"a\tb\r\n" * 50000, headers={"content-type": "application/octet-stream"}
            )
        if path == "/deletefile/in-1":
            return httpx.Response(200, json={"Status": 0})
        if path == "/deletefile/out-1":
            return httpx.Response(200, json={"Status": 302})
        return httpx.Response(404)

    source = tmp_path / "input.txt"
    source.write_bytes("Name\tTownName\r\nMüller\tBiel\r\n".encode("cp1252"))
    async with make_client(handler) as client:
        assert await client.upload_file(source) == "in-1"
        assert await client.create_file() == "out-1"
        job = await client.run_batch("key_v1", "in-1", "out-1")
        assert (job.batch_token, job.settlement_id) == ("b-1", 9)
        job = await client.run_batch(
            "key_v1",
            "in-1",
            "out-1",
            billing_reference="RRN-1",
            client_identifier="C7",
            client_name="Shop AG",
        )
        status = await client.check_batch_status("b-1")
        content = await downloaded(client, "out-1")
        await client.delete_file("in-1")
        # Status 302 is "error accessing the database" (§7), not a deletion: it is raised as such.
        with pytest.raises(DatabaseStatusError) as refused:
            await client.delete_file("out-1")
        assert refused.value.status == 302 and refused.value.operation == "deletefile"

    assert seen[0][2] == source.read_bytes()
    runbatch = json.loads(seen[2][2])
    assert runbatch == {
        "key": "key_v1",
        "replaceItems": [
            {"Search": "{###INPUTFILE###}", "Replacement": "in-1"},
            {"Search": "{###OUTPUTFILE###}", "Replacement": "out-1"},
        ],
    }
    withclient = json.loads(seen[3][2])
    assert seen[3][1] == "/runbatchwithclient"
    assert (
        withclient["billingReferenceNumber"],
        withclient["clientIdentifier"],
        withclient["clientName"],
    ) == ("RRN-1", "C7", "Shop AG")
    assert status.token_status is TokenStatus.RUNNING and status.progress == 40
    assert status.remaining_time_seconds == 12
    assert status.start_date_time == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert status.last_update_date_time is not None and status.last_update_date_time.utcoffset() == timedelta(
        hours=1
    )
    assert content == b"a\tb\r\n" * 50000
    assert list(tmp_path.iterdir()) == [source]  # the download went nowhere but to the caller


async def test_upload_is_streamed_again_when_retried_after_status_501(tmp_path: Path) -> None:
    bodies: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(request.read())
        status = 501 if len(bodies) == 1 else 0
        return httpx.Response(200, json={"UploadFileResult": {"FileToken": "tok", "Status": status}})

    source = tmp_path / "big.txt"
    source.write_bytes(b"x" * 200_000)
    async with make_client(handler) as client:
        assert await client.upload_file(source) == "tok"
    assert len(bodies) == 2 and bodies[0] == bodies[1] == source.read_bytes()


async def test_runbatch_status_106_is_retried_but_103_is_not() -> None:
    statuses = iter([106, 106, 0])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json={"RunBatchResult": {"BatchToken": "b", "SettlementId": 1, "Status": next(statuses)}}
        )

    async with make_client(handler) as client:
        assert (await client.run_batch("k", "i", "o")).batch_token == "b"

    calls = 0

    def unknown_key(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(
            200, json={"RunBatchResult": {"BatchToken": None, "SettlementId": 0, "Status": 103}}
        )

    async with make_client(unknown_key) as client:
        with pytest.raises(AuthenticationStatusError, match="the key entered is unknown"):
            await client.run_batch("wrong", "i", "o")
    assert calls == 1


async def test_download_of_unfinished_job_raises_status_before_yielding_any_byte() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"Status": 302})

    received: list[bytes] = []
    async with make_client(handler, max_attempts=1) as client:
        with pytest.raises(DatabaseStatusError) as caught:
            async with client.download("nope") as chunks:
                received += [chunk async for chunk in chunks]
    assert caught.value.status == 302 and caught.value.operation == "downloadfile"
    assert received == []


async def test_download_is_retried_until_the_status_line_and_then_streamed() -> None:
    calls = 0

    async def body() -> AsyncIterator[bytes]:
        for _ in range(4):
            yield b"x" * 1000

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return httpx.Response(503)
        return httpx.Response(200, content=body(), headers={"content-type": "application/octet-stream"})

    async with make_client(handler) as client, client.download("out-1") as chunks:
        sizes = [len(chunk) async for chunk in chunks]
    assert calls == 2 and sum(sizes) == 4000


async def test_download_stops_reading_where_the_caller_stops() -> None:
    produced = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal produced
        while True:
            produced += 1
            yield b"y" * 1000

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=endless(), headers={"content-type": "application/octet-stream"})

    async with make_client(handler) as client, client.download("out-1") as chunks:
        async for _ in chunks:
            break
    assert produced * 1000 <= 2 * 65536  # one 64 KiB chunk read ahead at most, never the whole body


async def test_client_fields_without_billing_reference_are_refused_before_sending() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("must not be called")

    async with make_client(handler) as client:
        with pytest.raises(ValueError, match="billing reference"):
            await client.run_batch("k", "i", "o", client_name="Shop")


# -- individual query -------------------------------------------------------------------------------------


async def test_run_query_sends_field_list_and_reads_result() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append({"path": request.url.path, **json.loads(request.content)})
        return httpx.Response(
            200,
            json={
                "RunQuery2Result": {
                    "Result": {
                        "Id": 5,
                        "Data": [
                            {"FieldName": "QSTAT", "Value": "1"},
                            {"FieldName": "ShortReport", "Value": "-11-" + "-" * 20},
                        ],
                    },
                    "SettlementId": 77,
                    "Status": 0,
                }
            },
        )

    async with make_client(handler) as client:
        result = await client.run_query(
            "q_v1",
            5,
            {"Name_in": "Muster", "StreetName_in": "Hauptstrasse", "ZIPCode_in": "2502", "TownName_in": None},
        )
        await client.run_query(
            "q_v1", 6, {"Streetname_in": "Weg", "ZipCode_in": "2503"}, billing_reference="R"
        )
    assert seen[0]["path"].endswith("/runquery2")
    assert seen[0]["address"] == {
        "Id": 5,
        "Data": [
            {"FieldName": "Name_in", "Value": "Muster"},
            {"FieldName": "StreetName_in", "Value": "Hauptstrasse"},
            {"FieldName": "ZIPCode_in", "Value": "2502"},
            {"FieldName": "TownName_in", "Value": ""},
        ],
    }
    assert seen[0]["key"] == "q_v1" and seen[0]["timeout"] == 10000
    assert seen[1]["path"].endswith("/runquery2withclient") and seen[1]["billingReferenceNumber"] == "R"
    assert result.id == 5 and result.settlement_id == 77 and result.fields["QSTAT"] == "1"


async def test_a_client_query_answer_is_read_under_either_wrapper() -> None:
    """§4.2: runquery2withclient answers "same as /runquery2"; a wrapper named after the method is read too
    (the sandbox answers only the first)."""
    answers = iter(["RunQuery2Result", "RunQuery2WithClientResult"])

    def handler(request: httpx.Request) -> httpx.Response:
        result = {"Result": {"Id": 7, "Data": [{"FieldName": "QSTAT", "Value": "2"}]}, "Status": 0}
        return httpx.Response(200, json={next(answers): result})

    async with make_client(handler) as client:
        for _ in range(2):
            result = await client.run_query(
                "q_v1", 7, {"Name_in": "Muster"}, billing_reference="R", client_identifier="C-1"
            )
            assert (result.id, result.fields["QSTAT"]) == (7, "2")


JSON_TYPE = {"content-type": "application/json"}
TEXT_TYPE = {"content-type": "text/plain"}


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(200, text="OK", headers=TEXT_TYPE),
        httpx.Response(200),
        httpx.Response(200, headers=JSON_TYPE),
        httpx.Response(200, headers=TEXT_TYPE),
        httpx.Response(200, content=b"OK", headers=JSON_TYPE),
        httpx.Response(200, content=b'{"Status": 0', headers=JSON_TYPE),
        httpx.Response(200, json={"Available": True}),
        httpx.Response(200, json=["up"]),
        httpx.Response(200, json={"Status": 0}),
        httpx.Response(200, json={"PingResult": {"Status": 0}}),
    ],
    ids=[
        "plain text",
        "empty",
        "empty json",
        "empty text",
        "text as json",
        "broken json",
        "json without status",
        "json list",
        "status 0",
        "status 0 wrapped",
    ],
)
async def test_a_ping_answered_200_passes_whatever_its_body(answer: httpx.Response) -> None:
    async with make_client(lambda request: answer) as client:
        await client.ping()


@pytest.mark.parametrize(
    ("answer", "refusal", "status"),
    [
        (httpx.Response(200, json={"Status": 101}), AuthenticationStatusError, 101),
        (httpx.Response(200, json={"PingResult": {"Status": 201}}), InternalStatusError, 201),
        (httpx.Response(200, content=b'{"Status": 999}', headers=TEXT_TYPE), UnknownStatusError, 999),
    ],
    ids=["status 101", "status 201 wrapped", "status 999 as text"],
)
async def test_a_ping_answered_with_a_status_other_than_0_is_the_services_refusal(
    answer: httpx.Response, refusal: type[Exception], status: int
) -> None:
    async with make_client(lambda request: answer) as client:
        with pytest.raises(refusal) as caught:
            await client.ping()
    assert getattr(caught.value, "status", None) == status
    assert getattr(caught.value, "operation", None) == "ping"


def _query_answer(status: int) -> httpx.Response:
    result = {"Result": {"Id": 1, "Data": []}, "SettlementId": 0 if status else 4711, "Status": status}
    return httpx.Response(200, json={"RunQuery2Result": result})


def _lost(request: httpx.Request) -> httpx.Response:
    raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")


def _read_timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("timed out", request=request)


def _refused_connection(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


@pytest.mark.parametrize("billing_reference", [None, "RRN-0002"], ids=["runquery2", "runquery2withclient"])
@pytest.mark.parametrize(
    "failure",
    [
        _lost,
        _read_timeout,
        lambda request: _query_answer(201),
        lambda request: _query_answer(202),
        lambda request: _query_answer(203),
        lambda request: _query_answer(999),
        lambda request: httpx.Response(500, json={"error": "boom"}),
        lambda request: httpx.Response(503, text="unavailable"),
        lambda request: httpx.Response(
            200, text="<html>gateway</html>", headers={"content-type": "text/html"}
        ),
    ],
    ids=["lost-answer", "read-timeout", "201", "202", "203", "999", "http-500", "http-503", "unreadable"],
)
async def test_a_billed_query_is_sent_once_after_a_failure_that_may_follow_the_work(
    failure: Any, billing_reference: str | None
) -> None:
    """A query is billed (§4.2: its answer carries a SettlementId): after a lost answer, Status 201-203, a
    5xx or an unreadable answer it may have been answered and billed, so it is never sent again here."""
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        return failure(request) if len(sent) == 1 else _query_answer(0)

    async with make_client(handler, max_attempts=4) as client:
        with pytest.raises(ApiError) as failed:
            await client.run_query("k", 1, {}, billing_reference=billing_reference)
    assert failed.value.outcome_unknown
    assert len(sent) == 1


@pytest.mark.parametrize(
    "refusal",
    [
        lambda request: _query_answer(106),
        lambda request: httpx.Response(429, json={"error": "slow down"}),
        _refused_connection,
    ],
    ids=["status-106", "http-429", "connect-failure"],
)
async def test_a_billed_query_is_sent_again_after_an_answer_that_means_not_processed(refusal: Any) -> None:
    """Status 106 (per-minute limit), HTTP 429 and a connection never made certainly mean "not processed":
    the query is asked again and answered."""
    sent = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal sent
        sent += 1
        return refusal(request) if sent == 1 else _query_answer(0)

    async with make_client(handler) as client:
        result = await client.run_query("k", 1, {})
    assert result.id == 1 and result.settlement_id == 4711
    assert sent == 2


# -- auto-complete ------------------------------------------------------------------------------------------


VARIANT_CASES = [
    (
        AutocompleteQuery("towns", zip_code="60", town_name="K"),
        AutocompleteVariant.TOWNS,
        {"ZipCode": "60", "TownName": "K"},
    ),
    (
        AutocompleteQuery("streets", street_name="Linden"),
        AutocompleteVariant.STREETS_ANY_TOWN,
        {"StreetName": "Linden"},
    ),
    (
        AutocompleteQuery("streets", street_name="Linden", town_name="Kri"),
        AutocompleteVariant.STREETS_TOWN_TERMS,
        {"StreetName": "Linden", "TownName": "Kri"},
    ),
    (
        AutocompleteQuery("streets", street_name="Linden", onrp=1234, zip_code="6010"),
        AutocompleteVariant.STREETS_ONE_TOWN,
        {"StreetName": "Linden", "ONRP": 1234},
    ),
    (AutocompleteQuery("buildings", house_no="1"), AutocompleteVariant.BUILDINGS_ANY, {"HouseNo": "1"}),
    (
        AutocompleteQuery("buildings", street_name="Linden", house_no="1"),
        AutocompleteVariant.BUILDINGS_STREET_TERMS,
        {"StreetName": "Linden", "HouseNo": "1"},
    ),
    (
        AutocompleteQuery("buildings", zip_code="6010", house_no_addition="a"),
        AutocompleteVariant.BUILDINGS_TOWN_TERMS,
        {"ZipCode": "6010", "HouseNoAddition": "a"},
    ),
    (
        AutocompleteQuery("buildings", strid=777, street_name="ignored", town_name="ignored", house_no="3"),
        AutocompleteVariant.BUILDINGS_ONE_STREET,
        {"STRID": 777, "HouseNo": "3"},
    ),
    (
        AutocompleteQuery("buildings", street_name="Linden", town_name="Kriens", house_no="3"),
        AutocompleteVariant.BUILDINGS_STREET_AND_TOWN_TERMS,
        {"StreetName": "Linden", "TownName": "Kriens", "HouseNo": "3"},
    ),
]


@pytest.mark.parametrize(
    ("query", "variant", "filled"), VARIANT_CASES, ids=[c[1].name for c in VARIANT_CASES]
)
def test_query_builder_fills_exactly_the_fields_of_each_variant_row(
    query: AutocompleteQuery, variant: AutocompleteVariant, filled: dict[str, Any]
) -> None:
    from connectors.address_service.autocomplete import classify

    assert classify(query) is variant
    body = build_autocomplete_request(query, 4)
    request = body["request"]
    empty = {
        "ONRP": 0,
        "STRID": 0,
        "HouseKey": 0,
        "ZipCode": "",
        "ZipAddition": "",
        "TownName": "",
        "StreetName": "",
        "HouseNo": "",
        "HouseNoAddition": "",
    }
    assert request == {**empty, **filled}
    assert body["zipOrderMode"] == 0 and body["zipFilterMode"] == 0


def test_builder_version_field_names_and_modes() -> None:
    query = AutocompleteQuery("buildings", strid=5, house_no="2", zip_order_mode=ZipOrderMode.ZIP_PO_BOX)
    v3 = build_autocomplete_request(query, 3)
    assert "zipFilterMode" not in v3 and v3["zipOrderMode"] == 2 and v3["request"]["STRID"] == 5
    v2 = build_autocomplete_request(query, 2)
    assert set(v2["request"]) == {
        "Onrp",
        "Zipcode",
        "ZipAddition",
        "TownName",
        "StrId",
        "Streetname",
        "HouseKey",
        "HouseNumber",
        "HouseNumberAddition",
    }
    assert v2["request"]["StrId"] == 5 and v2["request"]["HouseNumber"] == "2"


@pytest.mark.parametrize(
    "query",
    [
        AutocompleteQuery("towns"),
        AutocompleteQuery("towns", zip_code="60", street_name="x"),
        AutocompleteQuery("streets"),
        AutocompleteQuery("streets", street_name="x", house_no="1"),
        AutocompleteQuery("buildings", street_name="x"),
        AutocompleteQuery("buildings", onrp=5, house_no="1"),
    ],
)
def test_builder_rejects_queries_no_variant_row_allows(query: AutocompleteQuery) -> None:
    with pytest.raises(AutocompleteQueryError):
        build_autocomplete_request(query)


ENTRY4 = {
    "Canton": "LU",
    "CountryCode": "CH",
    "HouseKey": "12345678",
    "HouseNo": "3",
    "HouseNoAddition": "",
    "ONRP": "4321",
    "STRID": "987",
    "StreetName": "Lindenstrasse",
    "TownName": "Kriens",
    "ZipAddition": "00",
    "ZipCode": "6010",
}


@pytest.mark.parametrize("version", [2, 3, 4])
async def test_autocomplete_reads_every_version_shape(version: int) -> None:
    if version == 4:
        entry, wrapper = ENTRY4, "QueryAutoComplete4Result"
    elif version == 3:
        entry = {**ENTRY4, "HouseKey": 12345678, "ONRP": 4321, "STRID": 987}
        wrapper = "QueryAutoComplete3Result"
    else:
        entry = {
            "HouseKey": 12345678,
            "HouseNumber": "3",
            "HouseNumberAddition": "",
            "Onrp": 4321,
            "StrId": 987,
            "Streetname": "Lindenstrasse",
            "TownName": "Kriens",
            "ZipAddition": "00",
            "Zipcode": "6010",
        }
        wrapper = "QueryAutoCompleteResult"
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        return httpx.Response(200, json={wrapper: {"AutoCompleteResult": [entry], "Status": 0}})

    async with make_client(handler) as client:
        variant, entries = await client.autocomplete(
            AutocompleteQuery("buildings", street_name="Linden", house_no="3"),
            version=version,  # type: ignore[arg-type]
        )
    assert paths == [f"/REST/v1/autocomplete{version}"]
    assert variant is AutocompleteVariant.BUILDINGS_STREET_TERMS
    (hit,) = entries
    assert (hit.house_key, hit.onrp, hit.strid, hit.zip_code, hit.zip_addition) == (
        12345678,
        4321,
        987,
        "6010",
        "00",
    )
    assert hit.street_name == "Lindenstrasse" and hit.house_no == "3"
    assert hit.canton == ("LU" if version > 2 else None)


async def test_building_verification_sends_query_parameters() -> None:
    seen: dict[str, str] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.update(dict(request.url.params))
        return httpx.Response(
            200,
            json={
                "QueryBuildingVerification2Result": {
                    "BuildingVerificationData": {
                        "Canton": "BE",
                        "CountryCode": "CH",
                        "HouseKey": 555,
                        "HouseNo": "10",
                        "HouseNoAddition": "",
                        "ONRP": 11,
                        "PSTAT": 1,
                        "STRID": 22,
                        "StreetName": "Bahnhofstrasse",
                        "TownName": "Biel/Bienne",
                        "ZipAddition": "00",
                        "ZipCode": "2502",
                    },
                    "Status": 0,
                }
            },
        )

    async with make_client(handler) as client:
        result = await client.verify_building(
            street_name="bahnhofstr", house_no="10", zip_code="2502", town_name="Biel"
        )
    assert seen == {
        "streetname": "bahnhofstr",
        "houseno": "10",
        "housenoaddition": "",
        "zipcode": "2502",
        "townName": "Biel",
    }
    assert result.pstat == 1 and result.street_name == "Bahnhofstrasse" and result.house_key == 555


async def test_ping_and_authentication_failure() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/ping"):
            return httpx.Response(200)
        return httpx.Response(200, json={"CreateFileResult": {"FileToken": None, "Status": 101}})

    async with make_client(handler) as client:
        await client.ping()
        with pytest.raises(AuthenticationStatusError) as caught:
            await client.create_file()
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    ("answer", "sends"),
    [
        (httpx.Response(200, text="<html>proxy error</html>", headers={"content-type": "text/html"}), 1),
        (httpx.Response(200, content=b"{not json", headers={"content-type": "application/json"}), 1),
        (httpx.Response(200, json=["a list"]), 1),
        (httpx.Response(200, json={"RunQuery2Result": {"Result": {"Data": [{"Value": "no name"}]}}}), 1),
    ],
    ids=["html", "broken-json", "not-an-object", "missing-field"],
)
async def test_an_unreadable_query_answer_is_a_typed_error(answer: httpx.Response, sends: int) -> None:
    """An answer that cannot be read may be that of a query answered and billed: reported, never asked
    again."""
    sent = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal sent
        sent += 1
        return httpx.Response(answer.status_code, content=answer.content, headers=answer.headers)

    async def no_sleep(seconds: float) -> None:
        pass

    client = AddressServiceClient(
        "https://service.example.test/REST/v1",
        username="user",
        password=SecretStr("pw"),
        options=ClientOptions(
            transport=httpx.MockTransport(handler), retry=RetryPolicy(max_attempts=2), sleep=no_sleep
        ),
    )
    with pytest.raises(MalformedResponse) as unreadable:
        await client.run_query("key", 1, {"Name_in": "Muster"})
    assert unreadable.value.outcome_unknown
    assert sent == sends


async def test_run_batch_sends_an_alignments_extra_replace_items_after_input_and_output() -> None:
    bodies: list[Any] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(
            200, json={"RunBatchResult": {"Status": 0, "BatchToken": "b-1", "SettlementId": 1}}
        )

    client = make_client(handler)
    await client.run_batch(
        "crm_maintenance_v1",
        "in-1",
        "out-1",
        extra_items={"{###STATISTICFILE_FR###}": "stat-1", "{###MOVEFILE###}": "moves-1"},
    )
    assert bodies[0]["replaceItems"] == [
        {"Search": "{###INPUTFILE###}", "Replacement": "in-1"},
        {"Search": "{###OUTPUTFILE###}", "Replacement": "out-1"},
        {"Search": "{###STATISTICFILE_FR###}", "Replacement": "stat-1"},
        {"Search": "{###MOVEFILE###}", "Replacement": "moves-1"},
    ]


# -- answers no model fits (found by tests/fuzz) ---------------------------------------------------------


@pytest.mark.parametrize("odd", [{}, [], float("inf")], ids=["object", "array", "infinite"])
def test_a_building_number_that_is_no_number_is_a_validation_error_naming_it(odd: Any) -> None:
    with pytest.raises(ValidationError, match="HouseKey"):
        AutocompleteEntry.model_validate({"HouseKey": odd})
    with pytest.raises(ValidationError, match="PSTAT"):
        BuildingVerification.model_validate({"PSTAT": odd})


async def test_answers_no_model_fits_are_malformed_responses() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/buildingverification2"):
            data = {"BuildingVerificationData": {"ONRP": {"x": 1}}, "Status": 0}
            return httpx.Response(200, json={"QueryBuildingVerification2Result": data})
        if request.url.path.endswith("/autocomplete4"):
            hits = {"AutoCompleteResult": ["not an object"], "Status": 0}
            return httpx.Response(200, json={"QueryAutoComplete4Result": hits})
        return httpx.Response(200, content=b'{"Status": 1e400}', headers={"content-type": "application/json"})

    async with make_client(handler) as client:
        with pytest.raises(MalformedResponse, match="buildingverification2"):
            await client.verify_building(street_name="a", house_no="1", zip_code="2502", town_name="Biel")
        with pytest.raises(MalformedResponse, match="autocomplete4"):
            await client.autocomplete(AutocompleteQuery("towns", zip_code="60", town_name="K"))
        with pytest.raises(MalformedResponse, match="Status"):
            await client.ping()
