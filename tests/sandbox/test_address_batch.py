"""Address-service sandbox: the batch lifecycle, job timing and faults, billing references, the input
formats it reads and the result/moves files it delivers."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path

import pytest

from sandbox.faults import FaultRule
from tests.sandbox.test_address_support import (
    MAINTENANCE,
    START,
    VALIDATION,
    Clock,
    address_client,
    batch_body,
    create_output,
    make_config,
    submit_batch,
    upload,
)

pytestmark = pytest.mark.asyncio

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DATE = re.compile(r"^/Date\((\d+)([+-]\d{4})\)/$")
OUTPUT_HEADER = [
    "QSTAT", "ShortReport", "CorrectionType", "TotalScore", "ValidFrom", "ValidTo", "BirthDate", "HouseKey",
    "Double_DoubleGroupNo", "Double_DSTAT", "Company", "Prename", "Prename2", "Name", "MaidenName",
    "AddressAddition", "CoAddress", "StreetName", "HouseNo", "HouseNoAddition", "Floor", "ZIPCode",
    "ZIPAddition", "TownName", "Canton", "CountryCode", "POBoxTerm", "POBoxNo", "POBoxZIP",
    "POBoxZIPAddition", "POBoxTownName",
]  # fmt: skip
SMALL_BATCH = (
    "KundenNr;Prename;Name;Streetname;HouseNo;ZIPCode;TownName\r\n"
    "A1;Hans;Muster;Lindenstrasse;12;6010;Kriens\r\n"
    "A2;Peter;Meier;Bahnhofstrasse;8;5070;Frick\r\n"
    "A3;Lisa;Niemand;Nirgendweg;1;6010;Kriens\r\n"
)
# The client maps the CRM's German headers onto §2.3 names before uploading.
GERMAN_TO_SPEC = {
    "Firma": "Company",
    "Vorname": "Prename",
    "Nachname": "Name",
    "c/o": "CoAddress",
    "Strasse": "Streetname",
    "Hausnummer": "HouseNo",
    "Postfach": "PoBoxNo",
    "PLZ": "ZIPCode",
    "Ort": "TownName",
}
# Expected (QSTAT, Double_DSTAT) for the demo rows the client accepts (1039/1040 are rejected client-side).
EXAMPLE_OUTCOMES = {
    "1001": ("1", "K"), "1002": ("1", "K"), "1003": ("1", "F"), "1004": ("2", ""), "1005": ("1", "K"),
    "1006": ("3", "K"), "1007": ("3", ""), "1008": ("4", ""), "1009": ("4", ""), "1010": ("25", "K"),
    "1011": ("25", ""), "1012": ("27", ""), "1013": ("27", ""), "1014": ("50", ""), "1015": ("50", ""),
    "1016": ("51", ""), "1017": ("51", ""), "1018": ("1", "F"), "1019": ("1", ""), "1020": ("1", ""),
    "1021": ("1", ""), "1022": ("1", "K"), "1023": ("1", ""), "1024": ("1", ""), "1025": ("25", ""),
    "1026": ("1", ""), "1027": ("3", ""), "1028": ("1", ""), "1029": ("1", ""), "1030": ("1", ""),
    "1031": ("3", ""), "1032": ("3", ""), "1033": ("3", "F"), "1034": ("25", "F"), "1035": ("1", "F"),
    "1036": ("1", "F"), "1037": ("51", ""), "1038": ("1", "F"),
}  # fmt: skip


def parse_output(content: bytes) -> list[list[str]]:
    text = content.decode("cp1252")
    assert text.endswith("\r\n")
    assert "\n" not in text.replace("\r\n", "")
    return [line.split("\t") for line in text.split("\r\n")[:-1]]


def as_records(lines: list[list[str]]) -> list[dict[str, str]]:
    header = lines[0]
    return [dict(zip(header, row + [""] * (len(header) - len(row)), strict=True)) for row in lines[1:]]


async def run_to_end(content: bytes, key: str = MAINTENANCE) -> bytes:
    clock = Clock()
    async with address_client(make_config(clock=clock)) as client:
        batch_token, output_token = await submit_batch(client, content, key)
        clock.advance(10)
        status = (await client.get(f"/checkbatchstatus/{batch_token}")).json()
        assert status["CheckBatchStatusResult"]["BatchStatus"]["TokenStatus"] == 4
        response = await client.get(f"/downloadfile/{output_token}")
    assert response.headers["content-type"] == "application/octet-stream"
    return response.content


async def test_batch_lifecycle_follows_the_clock() -> None:
    clock = Clock()
    async with address_client(make_config(clock=clock, job_seconds=20)) as client:
        batch_token, output_token = await submit_batch(client, SMALL_BATCH.encode())
        seen: list[dict[str, object]] = []
        for _ in range(12):
            body = (await client.get(f"/checkbatchstatus/{batch_token}")).json()["CheckBatchStatusResult"]
            assert body["Status"] == 0
            seen.append(body["BatchStatus"])
            if body["BatchStatus"]["TokenStatus"] != 4:
                not_ready = await client.get(f"/downloadfile/{output_token}")
                assert not_ready.json() == {"Status": 302}
            clock.advance(2)
        by_batch_token = await client.get(f"/downloadfile/{batch_token}")
        by_output_token = await client.get(f"/downloadfile/{output_token}")

    statuses = [entry["TokenStatus"] for entry in seen]
    assert statuses[0] == 0
    assert statuses.index(2) < statuses.index(3) < statuses.index(4)
    assert statuses[-1] == 4
    assert sorted(statuses) == statuses
    running = [entry for entry in seen if entry["TokenStatus"] == 3]
    progress = [entry["Progress"] for entry in running]
    remaining = [entry["RemainingTimeSeconds"] for entry in running]
    assert progress == sorted(progress) and progress[0] < progress[-1] < 100
    assert remaining == sorted(remaining, reverse=True) and remaining[-1] > 0
    assert seen[-1]["Progress"] == 100 and seen[-1]["RemainingTimeSeconds"] == 0
    assert all(isinstance(entry["Message"], str) and entry["Message"] for entry in seen)
    assert by_output_token.content == by_batch_token.content
    assert by_output_token.content.startswith(b"PK")  # a move (Peter Meier) makes it a ZIP


async def test_batch_status_dates_use_the_ms_and_offset_format() -> None:
    clock = Clock(START)
    async with address_client(make_config(clock=clock)) as client:
        batch_token, _ = await submit_batch(client, SMALL_BATCH.encode())
        clock.advance(2.5)
        status = (await client.get(f"/checkbatchstatus/{batch_token}")).json()
    batch_status = status["CheckBatchStatusResult"]["BatchStatus"]
    start = DATE.match(batch_status["StartDateTime"])
    update = DATE.match(batch_status["LastUpdateDateTime"])
    assert start and update
    assert batch_status["StartDateTime"] == "/Date(1700000000000+0100)/"
    assert int(update.group(1)) == 1_700_000_002_500
    assert update.group(2) == "+0100"


async def test_summer_dates_carry_the_summer_offset() -> None:
    clock = Clock(1_720_000_000.0)  # July 2024
    async with address_client(make_config(clock=clock)) as client:
        batch_token, _ = await submit_batch(client, SMALL_BATCH.encode())
        status = (await client.get(f"/checkbatchstatus/{batch_token}")).json()
    assert status["CheckBatchStatusResult"]["BatchStatus"]["StartDateTime"] == "/Date(1720000000000+0200)/"


@pytest.mark.parametrize(
    ("outcome", "token_status"), [("failed", 5), ("error", 1), ("canceled", 6), ("unknown", 7)]
)
async def test_job_outcome_fault_ends_the_job_in_that_state(outcome: str, token_status: int) -> None:
    clock = Clock()
    config = make_config(clock=clock)
    config.faults.add(FaultRule(api="address", endpoint="runbatch", kind="job_outcome", value=outcome))
    async with address_client(config) as client:
        batch_token, output_token = await submit_batch(client, SMALL_BATCH.encode())
        clock.advance(1)
        midway = (await client.get(f"/checkbatchstatus/{batch_token}")).json()["CheckBatchStatusResult"]
        clock.advance(10)
        final = (await client.get(f"/checkbatchstatus/{batch_token}")).json()["CheckBatchStatusResult"]
        download = (await client.get(f"/downloadfile/{output_token}")).json()
    assert midway["BatchStatus"]["TokenStatus"] == 3
    assert final["Status"] == 0
    assert final["BatchStatus"]["TokenStatus"] == token_status
    assert download == {"Status": 302}


async def test_job_seconds_fault_sets_that_jobs_duration() -> None:
    clock = Clock()
    config = make_config(clock=clock, job_seconds=3)
    config.faults.add(FaultRule(api="address", endpoint="runbatch", kind="job_seconds", value=100))
    async with address_client(config) as client:
        slow, _ = await submit_batch(client, SMALL_BATCH.encode())
        normal, _ = await submit_batch(client, SMALL_BATCH.encode())
        clock.advance(50)
        slow_status = (await client.get(f"/checkbatchstatus/{slow}")).json()["CheckBatchStatusResult"]
        normal_status = (await client.get(f"/checkbatchstatus/{normal}")).json()["CheckBatchStatusResult"]
    assert slow_status["BatchStatus"]["TokenStatus"] == 3
    assert slow_status["BatchStatus"]["RemainingTimeSeconds"] == 50
    assert normal_status["BatchStatus"]["TokenStatus"] == 4


async def test_runbatch_refuses_an_unknown_key_and_unknown_tokens() -> None:
    async with address_client() as client:
        input_token = await upload(client, SMALL_BATCH.encode())
        output_token = await create_output(client)
        unknown_key = await client.post("/runbatch", json=batch_body(input_token, output_token, "nope_v1"))
        swapped = await client.post("/runbatch", json=batch_body(output_token, input_token))
        missing = await client.post("/runbatch", json={"key": MAINTENANCE, "replaceItems": []})
    assert unknown_key.json()["RunBatchResult"] == {"BatchToken": None, "SettlementId": 0, "Status": 103}
    assert swapped.json()["RunBatchResult"]["Status"] == 302
    assert missing.json()["RunBatchResult"]["Status"] == 801


@pytest.mark.parametrize(
    ("reference", "status"),
    [("RRN-0001", 0), ("RRN-0002", 0), ("RRN 0001!", 402), ("", 402), ("RRN-0009", 403), ("RRN-7777", 404)],
)
async def test_runbatchwithclient_validates_the_billing_reference(reference: str, status: int) -> None:
    async with address_client() as client:
        input_token = await upload(client, SMALL_BATCH.encode())
        output_token = await create_output(client)
        body = batch_body(
            input_token,
            output_token,
            billingReferenceNumber=reference,
            clientIdentifier="C-17",
            clientName="Verlag Muster AG",
        )
        response = (await client.post("/runbatchwithclient", json=body)).json()["RunBatchResult"]
    assert response["Status"] == status
    if status == 0:
        assert response["BatchToken"] and response["SettlementId"] > 0


async def test_runbatchwithclient_needs_the_permission() -> None:
    config = make_config(address_client_methods_allowed=False)
    async with address_client(config) as client:
        input_token = await upload(client, SMALL_BATCH.encode())
        output_token = await create_output(client)
        body = batch_body(input_token, output_token, billingReferenceNumber="RRN-0001")
        response = (await client.post("/runbatchwithclient", json=body)).json()
    assert response["RunBatchResult"]["Status"] == 105


async def test_result_file_layout() -> None:
    content = await run_to_end(SMALL_BATCH.encode(), key=MAINTENANCE)
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert archive.namelist() == ["result.txt", "moves.txt"]
        lines = parse_output(archive.read("result.txt"))
    header = lines[0]
    assert header == [
        "KundenNr",
        "Prename",
        "Name",
        "Streetname",
        "HouseNo",
        "ZIPCode",
        "TownName",
        *OUTPUT_HEADER,
    ]
    assert all(len(row) < len(header) for row in lines[1:])  # trailing empty fields are omitted
    records = as_records(lines)
    hans, peter, lisa = records
    assert hans["KundenNr"] == "A1" and hans["QSTAT"] == "1"
    assert hans["TotalScore"] == "100.00"
    assert hans["ShortReport"] == "-1-1---11--14144-----P-1"
    assert hans["CorrectionType"] == "0"
    assert (hans["ZIPAddition"], hans["Canton"], hans["CountryCode"]) == ("00", "LU", "CH")
    assert hans["BirthDate"] == "19750314" and hans["HouseKey"].isdigit()
    assert peter["QSTAT"] == "4" and peter["StreetName"] == "Zentralstrasse" and peter["ZIPCode"] == "2502"
    assert peter["ShortReport"][7] == "5" and peter["ShortReport"][23] == "H"
    assert peter["ValidFrom"] == "20240301"
    assert lisa["QSTAT"] == "51" and lisa["TotalScore"] == "0.00" and lisa["StreetName"] == "Nirgendweg"


async def test_moves_file_reports_old_and_new_address() -> None:
    content = await run_to_end(SMALL_BATCH.encode(), key=MAINTENANCE)
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        lines = parse_output(archive.read("moves.txt"))
    assert lines[0][:4] == ["RecordNo", "Name", "Prename", "BirthDate"]
    assert lines[0][-1] == "KundenNr"
    (move,) = as_records(lines)
    assert move["RecordNo"] == "2" and move["KundenNr"] == "A2"
    assert lines[1][3] == "19680521"  # column 4: date of birth
    assert (move["OldStreetName"], move["OldHouseNo"], move["OldZIPCode"]) == ("Bahnhofstrasse", "8", "5070")
    assert (move["NewStreetName"], move["NewHouseNo"], move["NewTownName"]) == (
        "Zentralstrasse",
        "40",
        "Biel/Bienne",
    )
    assert move["MoveDate"] == "20240301"


async def test_without_moves_the_plain_result_file_is_delivered() -> None:
    rows = [
        "Prename\tName\tStreetname\tHouseNo\tZIPCode\tTownName",
        "Hans\tMuster\tLindenstrasse\t12\t6010\tKriens",
    ]
    content = await run_to_end("\n".join(rows).encode())
    lines = parse_output(content)
    assert as_records(lines)[0]["QSTAT"] == "1"


async def test_validation_key_returns_only_person_and_company_hits() -> None:
    content = await run_to_end(SMALL_BATCH.encode(), key=VALIDATION)
    assert not content.startswith(b"PK")
    hans, peter, lisa = as_records(parse_output(content))
    assert hans["QSTAT"] == "1"
    for row in (peter, lisa):
        assert row["QSTAT"] == "" and row["ShortReport"] == "-" * 24 and row["TotalScore"] == ""
    assert peter["StreetName"] == "Bahnhofstrasse"  # input echoed, not the new address


@pytest.mark.parametrize(
    ("encoding", "delimiter", "bom"),
    [("utf-8", "\t", False), ("utf-8", ";", True), ("cp1252", ",", False), ("cp1252", "|", False)],
)
async def test_input_delimiters_and_encodings_are_detected(encoding: str, delimiter: str, bom: bool) -> None:
    rows = [
        ["Ref", "PRENAME_IN", "name_in", "StreetName", "HouseNo", "ZipCode", "townname"],
        ["1", "Jürg", "Zürcher", "Mühleweg", "7", "5073", "Gipf-Oberfrick"],
    ]
    content = "\r\n".join(delimiter.join(row) for row in rows).encode(encoding)
    content = (b"\xef\xbb\xbf" if bom else b"") + content
    (record,) = as_records(parse_output(await run_to_end(content)))
    assert record["Ref"] == "1" and record["PRENAME_IN"] == "Jürg"
    assert record["QSTAT"] == "1" and record["Name"] == "Zürcher" and record["StreetName"] == "Mühleweg"


async def test_the_demo_file_exercises_every_qstat() -> None:
    rows = list(
        csv.DictReader(io.StringIO((EXAMPLES / "address-batch.csv").read_text("utf-8")), delimiter=";")
    )
    assert len(rows) == 40
    accepted = [row for row in rows if row["KundenNr"] in EXAMPLE_OUTCOMES]
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\r\n")
    writer.writerow(["KundenNr", *GERMAN_TO_SPEC.values()])
    writer.writerows([[row["KundenNr"], *(row[german] for german in GERMAN_TO_SPEC)] for row in accepted])
    content = await run_to_end(buffer.getvalue().encode("cp1252"))
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        records = as_records(parse_output(archive.read("result.txt")))
        moves = as_records(parse_output(archive.read("moves.txt")))
    outcomes = {record["KundenNr"]: (record["QSTAT"], record["Double_DSTAT"]) for record in records}
    assert outcomes == EXAMPLE_OUTCOMES
    assert {"1", "2", "3", "4", "25", "27", "50", "51"} <= {qstat for qstat, _ in outcomes.values()}
    assert sorted(move["KundenNr"] for move in moves) == ["1008", "1009"]
    groups = {record["Double_DoubleGroupNo"] for record in records if record["Double_DSTAT"]}
    assert len(groups) == 6


async def test_xlsx_upload_is_read_like_text() -> None:
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    sheet.append(["Nr", "Company", "Streetname", "HouseNo", "ZIPCode", "TownName"])
    sheet.append([7, "Bäckerei Huber AG", "Hauptstrasse", "5", "5070", "Frick"])
    buffer = io.BytesIO()
    workbook.save(buffer)
    (record,) = as_records(parse_output(await run_to_end(buffer.getvalue())))
    assert record["Nr"] == "7" and record["QSTAT"] == "3" and record["ShortReport"][21] == "F"


async def test_demo_workbook_matches_the_csv() -> None:
    from openpyxl import load_workbook

    workbook = load_workbook(EXAMPLES / "address-batch.xlsx", read_only=True)
    cells = [
        ["" if value is None else str(value) for value in row]
        for row in workbook.active.iter_rows(values_only=True)
    ]
    workbook.close()
    text_rows = list(
        csv.reader(io.StringIO((EXAMPLES / "address-batch.csv").read_text("utf-8")), delimiter=";")
    )
    assert cells == text_rows


async def test_unreadable_input_fails_the_job() -> None:
    clock = Clock()
    async with address_client(make_config(clock=clock)) as client:
        batch_token, _ = await submit_batch(client, b"PK\x03\x04 broken workbook")
        clock.advance(10)
        status = (await client.get(f"/checkbatchstatus/{batch_token}")).json()["CheckBatchStatusResult"]
    assert status["BatchStatus"]["TokenStatus"] == 5
    assert "unreadable" in status["BatchStatus"]["Message"]


async def test_deleting_the_output_file_withdraws_the_download() -> None:
    clock = Clock()
    async with address_client(make_config(clock=clock)) as client:
        _, output_token = await submit_batch(client, SMALL_BATCH.encode())
        clock.advance(10)
        assert (await client.get(f"/downloadfile/{output_token}")).content.startswith(b"PK")
        assert (await client.get(f"/deletefile/{output_token}")).json() == {"Status": 0}
        gone = await client.get(f"/downloadfile/{output_token}")
    assert gone.json() == {"Status": 302}
