"""The address-service connector against the in-process sandbox: every endpoint through
:class:`AddressServiceClient`, the Status table as typed errors, which failures are retried and which
requests are never sent twice (proved by the sandbox's own request counter).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import SecretStr

from connectors.address_service import (
    AddressServiceClient,
    AuthenticationStatusError,
    AutocompleteEntry,
    AutocompleteQuery,
    AutocompleteVariant,
    DatabaseStatusError,
    InternalStatusError,
    SettlementStatusError,
    ThrottledStatusError,
    TokenStatus,
    UnknownStatusError,
    ZipOrderMode,
)
from connectors.errors import ServerError, TransportFailure
from connectors.http import ClientOptions
from connectors.ratelimit import WindowGate
from connectors.retry import RetryPolicy
from sandbox.config import SandboxConfig
from sandbox.faults import FaultRule
from sandbox.inprocess import SandboxTransport, address_service_url
from sandbox.request_counter import RequestCounter

pytestmark = pytest.mark.asyncio

USER, PASSWORD = "sandbox-user", "sandbox-password"
MAINTENANCE, VALIDATION = "postflows_maintenance_v1", "postflows_validation_v1"
WINTER = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC, Zurich on +01:00
SUMMER = 1_720_000_000.0  # 2024-07-03 09:46:40 UTC, Zurich on +02:00
SMALL_BATCH = (
    "KundenNr;Prename;Name;Streetname;HouseNo;ZIPCode;TownName\r\n"
    "A1;Hans;Muster;Lindenstrasse;12;6010;Kriens\r\n"
    "A2;Peter;Meier;Bahnhofstrasse;8;5070;Frick\r\n"
    "A3;Lisa;Niemand;Nirgendweg;1;6010;Kriens\r\n"
)
# §2.3 output fields in table order (the sandbox spells them as its batch files do).
OUTPUT_FIELDS = [
    "QSTAT", "ShortReport", "CorrectionType", "TotalScore", "ValidFrom", "ValidTo", "BirthDate", "HouseKey",
    "Double_DoubleGroupNo", "Double_DSTAT", "Company", "Prename", "Prename2", "Name", "MaidenName",
    "AddressAddition", "CoAddress", "StreetName", "HouseNo", "HouseNoAddition", "Floor", "ZIPCode",
    "ZIPAddition", "TownName", "Canton", "CountryCode", "POBoxTerm", "POBoxNo", "POBoxZIP",
    "POBoxZIPAddition", "POBoxTownName",
]  # fmt: skip
HANS_MUSTER = {"Prename_in": "Hans", "Name_in": "Muster", "HouseNo_in": "12", "TownName_in": "Kriens"}
LINDEN_STREETS = {"Lindenstrasse", "Lindenweg", "Ausser-Lindenegg", "In der Linden"}
# Postcode 60 and town K: the spec's example (6010 Kriens, 6047 Kastanienbaum) among all the towns it matches.
TOWNS_60_K = ["6010 Kriens", "6010 Pilatus Kulm", "6047 Kastanienbaum", "6056 Kägiswil", "6064 Kerns"]
LINDENSTRASSE_1 = [f"Lindenstrasse {no}" for no in ("1", "10", "12", "14", "14a", "16")]
KRIENS_ONRP, LINDENSTRASSE_STRID, LINDENSTRASSE_12_HOUSE_KEY = 1070, 10001, 100000006


class Clock:
    """A controllable epoch-seconds clock for the sandbox."""

    def __init__(self, start: float = WINTER) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Service:
    """A connector wired to a fresh in-process sandbox; retry waits are recorded and pass sandbox time."""

    config: SandboxConfig
    clock: Clock
    transport: SandboxTransport
    client: AddressServiceClient
    sleeps: list[float] = field(default_factory=list)

    def inject(self, **rule: Any) -> None:
        self.config.faults.add(FaultRule.model_validate({"api": "address", **rule}))

    def count(self, endpoint: str, method: str | None = None) -> int:
        """Requests the sandbox received for ``endpoint`` (with or without a trailing token)."""
        counter: RequestCounter = self.transport.app.state.requests
        return sum(
            entry.count
            for entry in counter.counts()
            if entry.api == "address"
            and (entry.endpoint == endpoint or entry.endpoint.startswith(endpoint + "/"))
            and (method is None or entry.method == method)
        )


@asynccontextmanager
async def connected(
    *,
    user: str = USER,
    password: str = PASSWORD,
    retry: RetryPolicy | None = None,
    clock: Clock | None = None,
    **config: Any,
) -> AsyncIterator[Service]:
    clock = clock or Clock()
    sandbox_config = SandboxConfig(clock=clock, **{"job_seconds": 10.0, **config})
    transport = SandboxTransport(sandbox_config)
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.advance(seconds)

    client = AddressServiceClient(
        address_service_url(),
        username=user,
        password=SecretStr(password),
        options=ClientOptions(
            transport=transport,
            retry=retry or RetryPolicy(max_attempts=4),
            sleep=sleep,
            window_gate=WindowGate(clock=clock, sleep=sleep),
        ),
    )
    async with client:
        yield Service(sandbox_config, clock, transport, client, sleeps)


@pytest.fixture
async def service() -> AsyncIterator[Service]:
    async with connected() as connected_service:
        yield connected_service


async def submit(service: Service, key: str = MAINTENANCE, **billing: str) -> tuple[str, str, str]:
    """(input token, output token, batch token) of a job aligning SMALL_BATCH."""
    input_token = await service.client.upload_file(SMALL_BATCH.encode("cp1252"))
    output_token = await service.client.create_file()
    job = await service.client.run_batch(key, input_token, output_token, **billing)
    return input_token, output_token, job.batch_token


async def downloaded(client: AddressServiceClient, token: str) -> bytes:
    async with client.download(token) as chunks:
        return b"".join([chunk async for chunk in chunks])


def read_result_file(text_file: bytes) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the rows of a tab-separated, CRLF, Windows-1252 result file.

    Pass-through columns come first, so an output field named like an input column wins in the dicts.
    """
    lines = text_file.decode("cp1252").split("\r\n")
    assert lines[-1] == ""
    header = lines[0].split("\t")
    rows = [line.split("\t") for line in lines[1:-1]]
    return header, [dict(zip(header, row + [""] * (len(header) - len(row)), strict=True)) for row in rows]


# -- availability and batch ------------------------------------------------------------------------------


async def test_ping(service: Service) -> None:
    await service.client.ping()
    assert service.count("ping", "GET") == 1


@pytest.mark.parametrize(
    ("key", "billing", "endpoint", "zipped"),
    [
        (MAINTENANCE, {}, "runbatch", True),
        (
            VALIDATION,
            {"billing_reference": "RRN-0001", "client_identifier": "C-17", "client_name": "Muster AG"},
            "runbatchwithclient",
            False,
        ),
    ],
)
async def test_batch_lifecycle_from_upload_to_deletion(
    service: Service, tmp_path: Path, key: str, billing: dict[str, str], endpoint: str, zipped: bool
) -> None:
    source = tmp_path / "input.csv"
    source.write_bytes(SMALL_BATCH.encode("cp1252"))
    input_token = await service.client.upload_file(source)  # streamed from disk
    output_token = await service.client.create_file()
    job = await service.client.run_batch(key, input_token, output_token, **billing)
    assert job.batch_token not in (input_token, output_token)
    assert job.settlement_id is not None and job.settlement_id > 0
    assert service.count(endpoint, "POST") == 1
    assert service.count("runbatch" if endpoint != "runbatch" else "runbatchwithclient") == 0

    seen: list[TokenStatus] = []
    for _ in range(20):
        status = await service.client.check_batch_status(job.batch_token)
        seen.append(status.token_status)
        if status.token_status is TokenStatus.FINISHED:
            break
        assert status.token_status.is_pending
        assert status.remaining_time_seconds is not None and status.remaining_time_seconds > 0
        service.clock.advance(1.5)
    assert seen[0] is TokenStatus.NEW and seen[-1] is TokenStatus.FINISHED
    assert {TokenStatus.WAITING, TokenStatus.RUNNING} <= set(seen)
    assert status.progress == 100 and status.remaining_time_seconds == 0
    assert status.start_date_time == datetime.fromtimestamp(WINTER, UTC)

    content = await downloaded(service.client, output_token)
    assert len(content) > 0
    assert list(tmp_path.iterdir()) == [source]  # the connector writes nothing
    if zipped:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            assert archive.namelist() == ["result.txt", "moves.txt"]
            result_file = archive.read("result.txt")
    else:
        assert not zipfile.is_zipfile(io.BytesIO(content))
        result_file = content
    header, rows = read_result_file(result_file)
    assert header == [*SMALL_BATCH.split("\r\n", 1)[0].split(";"), *OUTPUT_FIELDS]
    hans = rows[0]
    assert (hans["KundenNr"], hans["QSTAT"], hans["TotalScore"]) == ("A1", "1", "100.00")
    assert len(hans["ShortReport"]) == 24 and hans["CorrectionType"] in ("0", "1")
    assert (hans["ZIPAddition"], hans["Canton"], hans["CountryCode"]) == ("00", "LU", "CH")
    assert all(row["QSTAT"] in ({"1", "3", ""} if key == VALIDATION else {"1", "4", "51"}) for row in rows)

    await service.client.delete_file(input_token)
    await service.client.delete_file(output_token)
    with pytest.raises(DatabaseStatusError) as gone:
        await service.client.delete_file(input_token)
    assert gone.value.status == 302
    assert service.count("deletefile", "GET") == 3


async def test_download_before_the_job_finished_raises_302_and_writes_nothing(
    service: Service, tmp_path: Path
) -> None:
    _, output_token, _ = await submit(service)
    received: list[bytes] = []
    with pytest.raises(DatabaseStatusError) as early:
        async with service.client.download(output_token) as chunks:
            received += [chunk async for chunk in chunks]
    assert early.value.status == 302 and early.value.operation == "downloadfile"
    assert received == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("start", "offset"),
    [(WINTER, timedelta(hours=1)), (SUMMER, timedelta(hours=2))],
    ids=["winter", "summer"],
)
async def test_batch_dates_are_aware_datetimes_in_the_zurich_offset(start: float, offset: timedelta) -> None:
    async with connected(clock=Clock(start)) as service:
        _, _, batch_token = await submit(service)
        service.clock.advance(5)
        status = await service.client.check_batch_status(batch_token)
    assert status.token_status is TokenStatus.RUNNING
    started, updated = status.start_date_time, status.last_update_date_time
    assert started is not None and updated is not None
    assert started.utcoffset() == updated.utcoffset() == offset
    assert started.timestamp() == start and updated.timestamp() == start + 5
    assert started.astimezone(UTC) == datetime.fromtimestamp(start, UTC)


# -- individual query ------------------------------------------------------------------------------------


@pytest.mark.parametrize("billing_reference", [None, "RRN-0002"], ids=["runquery2", "runquery2withclient"])
async def test_query_spellings_of_street_and_postcode_give_the_same_answer(
    service: Service, billing_reference: str | None
) -> None:
    answers = []
    for street_field, zip_field in (("StreetName_in", "ZipCode_in"), ("Streetname_in", "ZIPCode_in")):
        fields = {**HANS_MUSTER, street_field: "Lindenstrasse", zip_field: "6010"}
        answers.append(
            await service.client.run_query(MAINTENANCE, 4711, fields, billing_reference=billing_reference)
        )
    first, second = answers
    assert first.fields == second.fields and first.id == second.id == 4711
    assert first.fields["QSTAT"] == "1"
    assert (first.fields["Streetname"], first.fields["ZIPcode"], first.fields["TownName"]) == (
        "Lindenstrasse",
        "6010",
        "Kriens",
    )
    assert first.settlement_id is not None and second.settlement_id is not None
    assert first.settlement_id != second.settlement_id
    endpoint = "runquery2withclient" if billing_reference else "runquery2"
    assert service.count(endpoint, "POST") == 2


# -- address assistant -----------------------------------------------------------------------------------


def town_labels(entries: list[AutocompleteEntry]) -> list[str]:
    return [f"{entry.zip_code} {entry.town_name}" for entry in entries]


def building_labels(entries: list[AutocompleteEntry]) -> list[str]:
    return [f"{entry.street_name} {entry.house_no}{entry.house_no_addition}" for entry in entries]


@pytest.mark.parametrize("version", [4, 3, 2])
async def test_autocomplete_answers_the_spec_examples_in_every_version(
    service: Service, version: int
) -> None:
    variant, streets = await service.client.autocomplete(
        AutocompleteQuery(target="streets", street_name="Linden"),
        version=version,  # type: ignore[arg-type]
    )
    assert variant is AutocompleteVariant.STREETS_ANY_TOWN
    assert {entry.street_name for entry in streets} == LINDEN_STREETS
    assert len(streets) == len(LINDEN_STREETS)  # and not Dorflindenstrasse
    assert all(isinstance(entry.strid, int) and entry.strid > 0 for entry in streets)

    variant, towns = await service.client.autocomplete(
        AutocompleteQuery(target="towns", zip_code="60", town_name="K"),
        version=version,  # type: ignore[arg-type]
    )
    assert variant is AutocompleteVariant.TOWNS
    assert town_labels(towns) == TOWNS_60_K
    kriens = towns[0]
    assert kriens.onrp == KRIENS_ONRP and kriens.zip_addition == "00"
    # autocomplete2 entries omit Canton and CountryCode (§4.3).
    assert (kriens.canton, kriens.country_code) == ((None, None) if version == 2 else ("LU", "CH"))
    assert service.count(f"autocomplete{version}", "POST") == 2


def _exactly(expected: list[str], labels: Callable[[list[AutocompleteEntry]], list[str]]) -> Any:
    return lambda entries: labels(entries) == expected


def _kastanienbaum_buildings_2(entries: list[AutocompleteEntry]) -> bool:
    return (
        {"Lindenweg 2", "In der Linden 2"} <= set(building_labels(entries))
        and all(entry.town_name == "Kastanienbaum" and entry.house_no == "2" for entry in entries)
        and all(entry.house_key for entry in entries)
    )


VARIANT_ROWS: list[
    tuple[AutocompleteQuery, AutocompleteVariant, Callable[[list[AutocompleteEntry]], bool]]
] = [
    (
        AutocompleteQuery(target="towns", zip_code="60", town_name="K"),
        AutocompleteVariant.TOWNS,
        _exactly(TOWNS_60_K, town_labels),
    ),
    (
        AutocompleteQuery(target="streets", street_name="Linden"),
        AutocompleteVariant.STREETS_ANY_TOWN,
        lambda entries: {entry.street_name for entry in entries} == LINDEN_STREETS and len(entries) == 4,
    ),
    (
        AutocompleteQuery(target="streets", street_name="linden", town_name="Kast"),
        AutocompleteVariant.STREETS_TOWN_TERMS,
        lambda entries: (
            [e.street_name for e in entries] == ["Ausser-Lindenegg", "In der Linden", "Lindenweg"]
        ),
    ),
    (
        AutocompleteQuery(
            target="streets", street_name="Linden", onrp=KRIENS_ONRP, zip_code="9999", town_name="X"
        ),
        AutocompleteVariant.STREETS_ONE_TOWN,
        lambda entries: (
            [(e.street_name, e.strid) for e in entries] == [("Lindenstrasse", LINDENSTRASSE_STRID)]
        ),
    ),
    (
        AutocompleteQuery(target="buildings", house_no="14a"),
        AutocompleteVariant.BUILDINGS_ANY,
        _exactly(["Lindenstrasse 14a"], building_labels),
    ),
    (
        AutocompleteQuery(target="buildings", street_name="Lindenstr", house_no="1"),
        AutocompleteVariant.BUILDINGS_STREET_TERMS,
        _exactly(LINDENSTRASSE_1, building_labels),
    ),
    (
        AutocompleteQuery(target="buildings", town_name="Kastanienbaum", house_no="2"),
        AutocompleteVariant.BUILDINGS_TOWN_TERMS,
        _kastanienbaum_buildings_2,
    ),
    (
        AutocompleteQuery(
            target="buildings", strid=LINDENSTRASSE_STRID, street_name="Nirgendweg", house_no="1"
        ),
        AutocompleteVariant.BUILDINGS_ONE_STREET,
        _exactly(LINDENSTRASSE_1, building_labels),
    ),
    (
        AutocompleteQuery(target="buildings", street_name="Linden", town_name="Kriens", house_no="14"),
        AutocompleteVariant.BUILDINGS_STREET_AND_TOWN_TERMS,
        _exactly(["Lindenstrasse 14", "Lindenstrasse 14a"], building_labels),
    ),
]


def _comparable(entry: AutocompleteEntry) -> tuple[Any, ...]:
    """What every version reports alike (autocomplete2 has no Canton/CountryCode)."""
    return (
        entry.zip_code,
        entry.zip_addition,
        entry.town_name,
        entry.onrp,
        entry.street_name,
        entry.strid,
        entry.house_no,
        entry.house_no_addition,
        entry.house_key,
    )


@pytest.mark.parametrize(
    ("query", "variant", "expected"), VARIANT_ROWS, ids=[row[1].value for row in VARIANT_ROWS]
)
async def test_every_variant_row_through_the_query_builder(
    service: Service,
    query: AutocompleteQuery,
    variant: AutocompleteVariant,
    expected: Callable[[list[AutocompleteEntry]], bool],
) -> None:
    answers = {}
    versions: tuple[Literal[4, 3, 2], ...] = (4, 3, 2)
    for version in versions:
        used, entries = await service.client.autocomplete(query, version=version)
        assert used is variant
        answers[version] = entries
    assert answers[4], "the example must find something"
    assert expected(answers[4]), building_labels(answers[4])
    assert [_comparable(e) for e in answers[3]] == [_comparable(e) for e in answers[4]]
    assert [_comparable(e) for e in answers[2]] == [_comparable(e) for e in answers[4]]
    if query.target == "buildings":
        assert all(entry.house_key and entry.house_key > 0 for entry in answers[4])
    else:
        assert all(entry.house_key == 0 for entry in answers[4])


async def test_po_box_postcodes_order_by_zip_order_mode(service: Service) -> None:
    orders = {}
    for mode in ZipOrderMode:
        _, entries = await service.client.autocomplete(
            AutocompleteQuery(target="towns", zip_code="25", town_name="Biel", zip_order_mode=mode)
        )
        orders[mode] = [entry.zip_code or "" for entry in entries]
    assert orders[ZipOrderMode.NUMERIC_ASCENDING] == sorted(orders[ZipOrderMode.NUMERIC_ASCENDING])
    assert orders[ZipOrderMode.ZIP_TYPE_NOT_PO_BOX][-2:] == ["2501", "2510"]
    assert orders[ZipOrderMode.ZIP_PO_BOX][:2] == ["2501", "2510"]


async def test_building_verification(service: Service) -> None:
    exact = await service.client.verify_building(
        street_name="Lindenstrasse", house_no="12", zip_code="6010", town_name="Kriens"
    )
    assert exact.pstat == 1 and exact.house_key == LINDENSTRASSE_12_HOUSE_KEY
    assert (exact.street_name, exact.house_no, exact.zip_code, exact.town_name) == (
        "Lindenstrasse",
        "12",
        "6010",
        "Kriens",
    )
    assert (exact.onrp, exact.strid, exact.canton, exact.country_code) == (
        KRIENS_ONRP,
        LINDENSTRASSE_STRID,
        "LU",
        "CH",
    )
    official = await service.client.verify_building(
        street_name="muehleweg", house_no="7", zip_code="5073", town_name=""
    )
    assert (official.pstat, official.street_name, official.town_name) == (2, "Mühleweg", "Gipf-Oberfrick")
    missing = await service.client.verify_building(
        street_name="Lindenstrasse", house_no="13", zip_code="6010", town_name="Kriens"
    )
    assert missing.pstat == 3 and missing.house_key == 0
    assert service.count("buildingverification2", "GET") == 3


# -- refusals --------------------------------------------------------------------------------------------

Call = Callable[[AddressServiceClient, Path], Any]
CALLS: dict[str, tuple[str, Call]] = {
    "uploadfile": ("uploadfile", lambda c, _: c.upload_file(b"KundenNr;Name\r\n1;Muster\r\n")),
    "createfile": ("createfile", lambda c, _: c.create_file()),
    "runbatch": ("runbatch", lambda c, _: c.run_batch(MAINTENANCE, "in", "out")),
    "checkbatchstatus": ("checkbatchstatus", lambda c, _: c.check_batch_status("abc")),
    "downloadfile": ("downloadfile", lambda c, _: downloaded(c, "abc")),
    "deletefile": ("deletefile", lambda c, _: c.delete_file("abc")),
    "runquery2": ("runquery2", lambda c, _: c.run_query(MAINTENANCE, 1, HANS_MUSTER)),
    "autocomplete4": (
        "autocomplete4",
        lambda c, _: c.autocomplete(AutocompleteQuery(target="streets", street_name="Linden")),
    ),
    "buildingverification2": (
        "buildingverification2",
        lambda c, _: c.verify_building(street_name="x", house_no="1", zip_code="6010", town_name=""),
    ),
}


@pytest.mark.parametrize("operation", list(CALLS))
@pytest.mark.parametrize(("user", "password", "status"), [(USER, "wrong", 101), ("nobody", PASSWORD, 102)])
async def test_bad_credentials_raise_authentication_errors_without_retrying(
    tmp_path: Path, operation: str, user: str, password: str, status: int
) -> None:
    endpoint, call = CALLS[operation]
    async with connected(user=user, password=password) as service:
        with pytest.raises(AuthenticationStatusError) as refused:
            await call(service.client, tmp_path)
        assert service.count(endpoint) == 1
    assert refused.value.status == status and not refused.value.retryable
    assert f"Status {status}" in str(refused.value) and password not in str(refused.value)


async def test_unknown_key_is_status_103(service: Service) -> None:
    input_token = await service.client.upload_file(SMALL_BATCH.encode())
    output_token = await service.client.create_file()
    with pytest.raises(AuthenticationStatusError) as batch:
        await service.client.run_batch("no_such_key_v1", input_token, output_token)
    with pytest.raises(AuthenticationStatusError) as query:
        await service.client.run_query("no_such_key_v1", 1, HANS_MUSTER)
    assert batch.value.status == query.value.status == 103
    assert service.count("runbatch") == service.count("runquery2") == 1


@pytest.mark.parametrize(("reference", "status"), [("RRN 1/2", 402), ("RRN-0009", 403), ("RRN-7777", 404)])
async def test_billing_references_are_settlement_errors(
    service: Service, reference: str, status: int
) -> None:
    input_token, output_token, _ = await submit(service)
    with pytest.raises(SettlementStatusError) as batch:
        await service.client.run_batch(MAINTENANCE, input_token, output_token, billing_reference=reference)
    with pytest.raises(SettlementStatusError) as query:
        await service.client.run_query(MAINTENANCE, 1, HANS_MUSTER, billing_reference=reference)
    assert batch.value.status == query.value.status == status
    assert service.count("runbatchwithclient") == service.count("runquery2withclient") == 1


async def test_client_methods_without_permission_are_status_105() -> None:
    async with connected(address_client_methods_allowed=False) as service:
        with pytest.raises(AuthenticationStatusError) as refused:
            await service.client.run_query(MAINTENANCE, 1, HANS_MUSTER, billing_reference="RRN-0001")
    assert refused.value.status == 105


# -- what is retried, what is not ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "operation"),
    [
        (106, "runquery2"),
        (501, "uploadfile"),
        (201, "checkbatchstatus"),
        (202, "checkbatchstatus"),
    ],
)
async def test_transient_service_statuses_are_retried_until_success(
    service: Service, tmp_path: Path, status: int, operation: str
) -> None:
    _, _, batch_token = await submit(service)
    endpoint, call = CALLS[operation]
    if operation == "checkbatchstatus":
        call = lambda c, _: c.check_batch_status(batch_token)  # noqa: E731
    before = service.count(endpoint)
    service.inject(endpoint=f"{endpoint}*", kind="service_status", value=status, times=1)
    await call(service.client, tmp_path)
    assert service.count(endpoint) - before == 2
    assert len(service.sleeps) == 1
    if status in (106, 501):
        # A per-minute limit: the wait lasts until the next minute begins, not a back-off of seconds.
        assert service.clock.now % 60 == pytest.approx(0.05)


@pytest.mark.parametrize("status", [201, 202, 203])
@pytest.mark.parametrize("operation", ["uploadfile", "createfile", "runbatch", "runquery2"])
async def test_internal_errors_on_a_submission_are_not_resent(
    service: Service, tmp_path: Path, status: int, operation: str
) -> None:
    """Status 201-203 may come after the service acted: an upload, a created file, a billed batch or a billed
    query is never sent twice (a second file would leave the first one without its token)."""
    input_token = await service.client.upload_file(SMALL_BATCH.encode())
    output_token = await service.client.create_file()
    before = service.count(operation)
    service.inject(endpoint=operation, kind="service_status", value=status, times=1)
    with pytest.raises(InternalStatusError) as failed:
        if operation == "uploadfile":
            await service.client.upload_file(SMALL_BATCH.encode())
        elif operation == "createfile":
            await service.client.create_file()
        elif operation == "runquery2":
            await service.client.run_query(MAINTENANCE, 1, HANS_MUSTER)
        else:
            await service.client.run_batch(MAINTENANCE, input_token, output_token)
    assert failed.value.outcome_unknown
    assert service.count(operation) - before == 1
    assert service.sleeps == []


async def test_status_999_is_raised_at_once(service: Service) -> None:
    service.inject(endpoint="createfile", kind="service_status", value=999, times=1)
    with pytest.raises(UnknownStatusError) as unknown:
        await service.client.create_file()
    assert unknown.value.status == 999 and not unknown.value.retryable
    assert service.count("createfile") == 1 and service.sleeps == []


async def test_http_500_is_retried_on_a_get_but_createfile_and_runbatch_are_not_resent(
    service: Service,
) -> None:
    service.inject(endpoint="ping", kind="http_status", value=500, times=1)
    await service.client.ping()
    assert service.count("ping") == 2
    service.inject(endpoint="createfile", kind="http_status", value=500, times=1)
    with pytest.raises(ServerError):
        await service.client.create_file()
    assert service.count("createfile") == 1
    output_token = await service.client.create_file()

    input_token = await service.client.upload_file(SMALL_BATCH.encode())
    service.inject(endpoint="runbatch", kind="http_status", value=500, times=1)
    with pytest.raises(ServerError) as failed:
        await service.client.run_batch(MAINTENANCE, input_token, output_token)
    assert failed.value.status_code == 500
    assert service.count("runbatch") == 1


async def test_dropped_connection_is_retried_on_a_get_but_never_on_a_billed_query(service: Service) -> None:
    _, _, batch_token = await submit(service)
    service.inject(endpoint="checkbatchstatus/*", kind="drop", times=1)
    status = await service.client.check_batch_status(batch_token)
    assert status.token_status is TokenStatus.NEW
    assert service.count("checkbatchstatus") == 2

    # A query is billed: an answer lost after the service answered it is not asked for a second time.
    query = {**HANS_MUSTER, "StreetName_in": "Lindenstrasse", "ZIPCode_in": "6010"}
    for kind in ("drop", "lost_answer"):
        before = service.count("runquery2")
        service.inject(endpoint="runquery2", kind=kind, times=1)
        with pytest.raises(TransportFailure) as lost:
            await service.client.run_query(MAINTENANCE, 1, query)
        assert lost.value.outcome_unknown and service.count("runquery2") - before == 1
    answer = await service.client.run_query(MAINTENANCE, 1, query)
    assert answer.fields["QSTAT"] == "1"


async def test_dropped_runbatch_is_never_sent_twice(service: Service) -> None:
    input_token = await service.client.upload_file(SMALL_BATCH.encode())
    output_token = await service.client.create_file()
    service.inject(endpoint="runbatch", kind="drop", times=1)
    with pytest.raises(TransportFailure) as dropped:
        await service.client.run_batch(MAINTENANCE, input_token, output_token)
    assert dropped.value.sent is True
    assert service.count("runbatch") == 1 and service.sleeps == []


async def test_per_minute_query_limit_waits_for_the_next_minute() -> None:
    async with connected(max_queries_per_minute=2) as service:
        for record_id in (1, 2):
            await service.client.run_query(MAINTENANCE, record_id, HANS_MUSTER)
        answer = await service.client.run_query(MAINTENANCE, 3, HANS_MUSTER)
        assert answer.id == 3
        # Waits end where minutes begin, never a back-off of a second or two. The sandbox counts a sliding
        # minute, so the first boundary (WINTER + 40 s) is too early for it and the next one clears it.
        assert service.sleeps == [pytest.approx(40.05), pytest.approx(60.0)]
        assert service.clock.now % 60 == pytest.approx(0.05)
        assert service.count("runquery2") == 5


async def test_a_per_minute_limit_that_never_clears_fails_after_the_allowed_windows() -> None:
    patient = RetryPolicy(max_attempts=4, max_window_waits=3)
    async with connected(max_queries_per_minute=0, retry=patient) as service:
        with pytest.raises(ThrottledStatusError) as throttled:
            await service.client.run_query(MAINTENANCE, 1, HANS_MUSTER)
    assert throttled.value.status == 106 and throttled.value.retryable
    assert service.count("runquery2") == 1 + 3 + 3  # three windows waited out, then the ordinary retries
    assert all(wait >= 1.0 for wait in service.sleeps[:3])


async def test_upload_limit_501_waits_for_the_next_minute_and_uploads_once_more() -> None:
    async with connected(max_uploads_per_minute=1) as service:
        await service.client.upload_file(b"KundenNr;Name\r\n1;Muster\r\n")
        assert await service.client.upload_file(b"KundenNr;Name\r\n2;Meier\r\n")
    assert service.count("uploadfile") == 4  # the sliding minute clears at the second boundary
    assert service.sleeps == [pytest.approx(40.05), pytest.approx(60.0)]
