"""Address-service sandbox with agreed alignments: a key's upload must have the agreed layout, its result
names the agreed id column, its declared extra outputs are written, downloaded and deleted like the output
file, moves go to a declared output — and keys without an alignment behave as before."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest

from sandbox.address_service import jobs
from sandbox.address_service.aligned_input import AlignmentMismatch, read_aligned_input
from sandbox.address_service.alignments import AlignmentError, SandboxAlignment, parse_alignments
from sandbox.config import SandboxConfig
from tests.sandbox.test_address_batch import SMALL_BATCH, as_records, parse_output
from tests.sandbox.test_address_support import (
    MAINTENANCE,
    Clock,
    address_client,
    batch_body,
    create_output,
    make_config,
    submit_batch,
    upload,
)

LEGACY_KEY = "crm_maintenance_v1"
GERMAN_COLUMNS = ["KDNR (QSTAT)", "Firma", "Vorname", "Nachname", "c/o", "Strasse", "Hausnummer", "Postfach",
                  "PLZ", "Ort"]  # fmt: skip
LEGACY_YAML = """\
name: legacy-de
upload:
  columns: [KDNR (QSTAT), Firma, Vorname, Nachname, c/o, Strasse, Hausnummer, Postfach, PLZ, Ort]
  record_id: KDNR (QSTAT)
  encoding: cp1252
  delimiter: "\\t"
  line_ending: "\\r\\n"
result:
  record_id: KDNR
"""
OUTPUTS_YAML = (
    LEGACY_YAML
    + """\
outputs:
  statistics_fr: "{###STATISTICFILE_FR###}"
  statistics_xml: "{###STATISTICFILE_XML###}"
  moves: "{###MOVEFILE###}"
moves: moves
"""
)
EXTRA_ITEMS = ("{###STATISTICFILE_FR###}", "{###STATISTICFILE_XML###}", "{###MOVEFILE###}")
GERMAN_ROWS = [
    ["1", "", "Hans", "Muster", "", "Lindenstrasse", "12", "", "6010", "Kriens"],
    ["2", "", "Peter", "Meier", "", "Bahnhofstrasse", "8", "", "5070", "Frick"],
    ["3", "", "Lisa", "Niemand", "", "Nirgendweg", "1", "", "6010", "Kriens"],
    ["4", "", "Jürg", "Zürcher", "", "Mühleweg", "7", "", "5073", "Gipf-Oberfrick"],
]


def german_file(header: list[str] = GERMAN_COLUMNS, delimiter: str = "\t", encoding: str = "cp1252") -> bytes:
    lines = [header, *GERMAN_ROWS]
    return "".join(delimiter.join(line) + "\r\n" for line in lines).encode(encoding)


def aligned_config(
    tmp_path: Path, text: str = LEGACY_YAML, key: str = LEGACY_KEY, **overrides: Any
) -> SandboxConfig:
    path = tmp_path / f"{key}.yaml"
    path.write_text(text, encoding="utf-8")
    return make_config(alignments=parse_alignments([f"{key}={path}"]), **overrides)


async def run_aligned(
    client: httpx.AsyncClient,
    clock: Clock,
    content: bytes,
    key: str = LEGACY_KEY,
    items: tuple[str, ...] = (),
) -> tuple[dict[str, Any], str, dict[str, str]]:
    """Run ``content`` to the end under ``key``: (final BatchStatus, output token, replace item → token)."""
    input_token, output_token = await upload(client, content), await create_output(client)
    extras = {item: await create_output(client) for item in items}
    body = batch_body(input_token, output_token, key)
    body["replaceItems"] += [{"Search": item, "Replacement": token} for item, token in extras.items()]
    started = (await client.post("/runbatch", json=body)).json()["RunBatchResult"]
    assert started["Status"] == 0
    clock.advance(10)
    status = (await client.get(f"/checkbatchstatus/{started['BatchToken']}")).json()
    return status["CheckBatchStatusResult"]["BatchStatus"], output_token, extras


async def test_an_aligned_key_reads_its_agreed_columns_and_names_the_result_id_as_agreed(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with address_client(aligned_config(tmp_path, clock=clock)) as client:
        status, output_token, _ = await run_aligned(client, clock, german_file())
        content = (await client.get(f"/downloadfile/{output_token}")).content
    assert status["TokenStatus"] == 4
    with zipfile.ZipFile(io.BytesIO(content)) as archive:  # a maintenance key: moves in the ZIP
        lines = parse_output(archive.read("result.txt"))
        moves = as_records(parse_output(archive.read("moves.txt")))
    assert lines[0][:10] == ["KDNR", *GERMAN_COLUMNS[1:]]
    assert lines[0][10] == "QSTAT"
    hans, peter, lisa, juerg = as_records(lines)
    assert (hans["KDNR"], hans["QSTAT"], hans["Vorname"]) == ("1", "1", "Hans")
    assert (peter["QSTAT"], peter["StreetName"]) == ("4", "Zentralstrasse")
    assert lisa["QSTAT"] == "51"
    assert (juerg["QSTAT"], juerg["Name"], juerg["StreetName"]) == ("1", "Zürcher", "Mühleweg")
    assert [(move["KDNR"], move["Name"]) for move in moves] == [("2", "Meier")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            german_file(header=["KDNR (QSTAT)", "Vorname", "Firma", *GERMAN_COLUMNS[3:]]),
            "header column 2 is 'Vorname', the alignment has 'Firma'",
        ),
        (german_file(header=["KDNR", *GERMAN_COLUMNS[1:]]), "header column 1 is 'KDNR', the alignment has"),
        (
            "\t".join(GERMAN_COLUMNS[:-1]).encode("cp1252") + b"\r\n",
            "header column 10 'Ort' is missing (the header has 9 of 10 columns)",
        ),
        (
            german_file(header=[*GERMAN_COLUMNS, "Telefon"]),
            "header column 11 'Telefon' is not one of the agreed columns",
        ),
        (
            german_file(delimiter=";"),
            "header column 1 is 'KDNR (QSTAT);Firma;",
        ),
        (german_file(encoding="utf-8"), "it is UTF-8 ('ü' on line 5), the alignment agrees on cp1252"),
        (b"\xef\xbb\xbf" + german_file(), "it starts with a UTF-8 byte order mark"),
        (b"PK\x03\x04 a workbook", "it is a workbook, the alignment agrees on a text file"),
        (
            german_file() + "5\t\tAnna\tSchmid\t\tWeg\t1\t\t6010\tKriens\textra\r\n".encode("cp1252"),
            "line 6 has 11 fields, the alignment has 10 columns",
        ),
    ],
)
async def test_an_upload_without_the_agreed_layout_fails_its_job_naming_the_difference(
    tmp_path: Path, content: bytes, message: str
) -> None:
    clock = Clock()
    async with address_client(aligned_config(tmp_path, clock=clock)) as client:
        status, output_token, _ = await run_aligned(client, clock, content)
        download = (await client.get(f"/downloadfile/{output_token}")).json()
    assert status["TokenStatus"] == 5
    assert status["Message"].startswith(
        f"Input file refused: the file does not have the layout agreed for key {LEGACY_KEY}: "
    )
    assert message in status["Message"]
    assert download == {"Status": 302}


def test_a_header_in_another_delimiter_says_so() -> None:
    alignment = SandboxAlignment.model_validate(
        {"upload": {"columns": GERMAN_COLUMNS, "record_id": "KDNR (QSTAT)", "encoding": "cp1252"}}
    )
    with pytest.raises(
        AlignmentMismatch, match=r"\(the header is separated by ';', the alignment by '\\t'\)"
    ):
        read_aligned_input(german_file(delimiter=";"), LEGACY_KEY, alignment)


async def test_declared_outputs_are_written_and_moves_go_to_their_own_output(tmp_path: Path) -> None:
    clock = Clock()
    async with address_client(aligned_config(tmp_path, OUTPUTS_YAML, clock=clock)) as client:
        status, output_token, extras = await run_aligned(client, clock, german_file(), items=EXTRA_ITEMS)
        result = await client.get(f"/downloadfile/{output_token}")
        french = await client.get(f"/downloadfile/{extras['{###STATISTICFILE_FR###}']}")
        xml = await client.get(f"/downloadfile/{extras['{###STATISTICFILE_XML###}']}")
        moves = await client.get(f"/downloadfile/{extras['{###MOVEFILE###}']}")
    assert status["TokenStatus"] == 4
    assert not result.content.startswith(b"PK")  # the moves are not in the output file
    assert [row["KDNR"] for row in as_records(parse_output(result.content))] == ["1", "2", "3", "4"]
    for response in (french, xml, moves):
        assert response.headers["content-type"] == "application/octet-stream"
    assert 'filename="moves.txt"' in moves.headers["content-disposition"]
    (move,) = as_records(parse_output(moves.content))
    assert (move["KDNR"], move["OldStreetName"], move["NewStreetName"]) == (
        "2",
        "Bahnhofstrasse",
        "Zentralstrasse",
    )

    text = french.content.decode("cp1252").split("\r\n")
    assert text[0] == "Statistique de l'alignement"
    assert text[1:4] == [f"Clé\t{LEGACY_KEY}", "Enregistrements\t4", "QSTAT\tNombre"]
    counts = dict(line.split("\t") for line in text[4:] if line)
    assert (counts["1"], counts["4"], counts["51"], counts["3"]) == ("2", "1", "1", "0")

    root = ElementTree.fromstring(xml.content)
    assert (root.tag, root.get("key"), root.get("records")) == ("Statistics", LEGACY_KEY, "4")
    assert {element.get("code"): element.get("count") for element in root}["1"] == "2"


@pytest.mark.parametrize(
    ("item", "first_line"),
    [
        ("{###STATISTICFILE_DE###}", "Statistik des Abgleichs"),
        ("{###STATISTICFILE_IT###}", "Statistica dell'allineamento"),
        ("{###STATISTICFILE_EN###}", "Alignment statistics"),
        ("{###STATISTICFILE###}", "Alignment statistics"),
        ("{###DOUBLEFILE###}", "{###DOUBLEFILE###}: the sandbox writes no content for this output"),
    ],
)
async def test_statistics_files_speak_the_language_of_their_name(
    tmp_path: Path, item: str, first_line: str
) -> None:
    clock = Clock()
    config = aligned_config(tmp_path, LEGACY_YAML + f'outputs:\n  extra: "{item}"\n', clock=clock)
    async with address_client(config) as client:
        _, _, extras = await run_aligned(client, clock, german_file(), items=(item,))
        content = (await client.get(f"/downloadfile/{extras[item]}")).content
    assert content.decode("cp1252").split("\r\n")[0] == first_line


async def test_runbatch_needs_a_created_file_for_every_declared_output(tmp_path: Path) -> None:
    async with address_client(aligned_config(tmp_path, OUTPUTS_YAML)) as client:
        input_token, output_token = await upload(client, german_file()), await create_output(client)
        created = [await create_output(client) for _ in EXTRA_ITEMS]

        async def status_with(tokens: list[str]) -> int:
            body = batch_body(input_token, output_token, LEGACY_KEY)
            body["replaceItems"] += [
                {"Search": item, "Replacement": token}
                for item, token in zip(EXTRA_ITEMS, tokens, strict=False)
            ]
            return int((await client.post("/runbatch", json=body)).json()["RunBatchResult"]["Status"])

        missing = await status_with(created[:2])
        twice = await status_with([created[0], created[0], created[2]])
        the_output_file = await status_with([created[0], created[1], output_token])
        unknown = await status_with([created[0], created[1], "no-such-token"])
        the_input_file = await status_with([created[0], created[1], input_token])
        an_upload = await status_with([created[0], created[1], await upload(client, german_file())])
        jobs_before = (await client.get("/checkbatchstatus/none")).json()
        accepted = await status_with(created)
    assert (missing, twice, the_output_file, the_input_file) == (801, 801, 801, 801)
    assert (unknown, an_upload) == (302, 302)
    assert jobs_before["CheckBatchStatusResult"]["Status"] == 302
    assert accepted == 0


async def test_extra_outputs_are_released_when_finished_and_deleted_like_files(tmp_path: Path) -> None:
    clock = Clock()
    async with address_client(aligned_config(tmp_path, OUTPUTS_YAML, clock=clock, job_seconds=20)) as client:
        input_token, output_token = await upload(client, german_file()), await create_output(client)
        extras = [await create_output(client) for _ in EXTRA_ITEMS]
        body = batch_body(input_token, output_token, LEGACY_KEY)
        body["replaceItems"] += [
            {"Search": i, "Replacement": t} for i, t in zip(EXTRA_ITEMS, extras, strict=True)
        ]
        batch_token = (await client.post("/runbatch", json=body)).json()["RunBatchResult"]["BatchToken"]
        early = (await client.get(f"/downloadfile/{extras[0]}")).json()
        clock.advance(30)
        assert (await client.get(f"/downloadfile/{extras[0]}")).content.startswith(b"Statistique")
        assert (await client.get(f"/deletefile/{extras[0]}")).json() == {"Status": 0}
        deleted = (await client.get(f"/downloadfile/{extras[0]}")).json()
        still_there = await client.get(f"/downloadfile/{extras[1]}")
        assert (await client.get(f"/deletefile/{batch_token}")).json() == {"Status": 0}
        after_job_deleted = [(await client.get(f"/downloadfile/{token}")).json() for token in extras[1:]]
    assert early == {"Status": 302}
    assert deleted == {"Status": 302}
    assert still_there.content.startswith(b"<?xml")
    assert after_job_deleted == [{"Status": 302}, {"Status": 302}]


async def test_extra_outputs_count_among_the_stored_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    async with address_client(aligned_config(tmp_path, OUTPUTS_YAML, clock=clock)) as client:
        _, _, extras = await run_aligned(client, clock, german_file(), items=EXTRA_ITEMS)
        monkeypatch.setattr(jobs, "MAX_FILES", 5)
        for _ in range(5):  # newer files push the oldest out, the extra outputs among them
            await create_output(client)
        gone = [(await client.get(f"/downloadfile/{token}")).json() for token in extras.values()]
    assert gone == [{"Status": 302}] * 3


async def test_keys_without_an_alignment_keep_their_behaviour(tmp_path: Path) -> None:
    clock = Clock()
    async with address_client(aligned_config(tmp_path, OUTPUTS_YAML, clock=clock)) as client:
        batch_token, output_token = await submit_batch(client, SMALL_BATCH.encode())  # ";", no extra items
        clock.advance(10)
        status = (await client.get(f"/checkbatchstatus/{batch_token}")).json()["CheckBatchStatusResult"]
        content = (await client.get(f"/downloadfile/{output_token}")).content
        renamed = german_file([*GERMAN_COLUMNS[:-1], "Wohnort"])
        german = await run_aligned(client, clock, renamed, key=MAINTENANCE)
        german_content = (await client.get(f"/downloadfile/{german[1]}")).content
    assert status["BatchStatus"]["TokenStatus"] == 4
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert archive.namelist() == ["result.txt", "moves.txt"]
        assert parse_output(archive.read("result.txt"))[0][0] == "KundenNr"
    # A German header that is no held alignment's: its columns are customer columns, and nothing is found.
    records = as_records(parse_output(german_content))
    assert records[0]["KDNR (QSTAT)"] == "1" and {record["QSTAT"] for record in records} == {"51"}


async def test_the_configured_keys_hold_the_built_in_profiles_alignments() -> None:
    clock = Clock()
    async with address_client(make_config(clock=clock)) as client:
        status, output_token, _ = await run_aligned(client, clock, german_file(), key=MAINTENANCE)
        content = (await client.get(f"/downloadfile/{output_token}")).content
    assert status["TokenStatus"] == 4
    with zipfile.ZipFile(io.BytesIO(content)) as archive:  # the maintenance key: moves in the ZIP
        lines = parse_output(archive.read("result.txt"))
    assert lines[0][:10] == ["KDNR", *GERMAN_COLUMNS[1:]]  # legacy-de's result names the id KDNR
    assert [(record["KDNR"], record["QSTAT"]) for record in as_records(lines)] == [
        ("1", "1"), ("2", "4"), ("3", "51"), ("4", "1")
    ]  # fmt: skip


async def test_an_aligned_key_naming_validation_only_validates(tmp_path: Path) -> None:
    clock = Clock()
    config = aligned_config(tmp_path, OUTPUTS_YAML, key="crm_validation_v1", clock=clock)
    async with address_client(config) as client:
        _, output_token, extras = await run_aligned(
            client, clock, german_file(), key="crm_validation_v1", items=EXTRA_ITEMS
        )
        result = (await client.get(f"/downloadfile/{output_token}")).content
        moves = (await client.get(f"/downloadfile/{extras['{###MOVEFILE###}']}")).content
    assert [record["QSTAT"] for record in as_records(parse_output(result))] == ["1", "", "", "1"]
    assert parse_output(moves)[1:] == []  # the declared moves output holds its header alone


async def test_a_fixed_width_alignment_without_header(tmp_path: Path) -> None:
    yaml_text = """\
upload:
  columns: [Nr, Name_in, StreetName_in, HouseNo_in, ZIPCode_in, TownName_in]
  record_id: Nr
  fixed_widths: {Nr: 4, Name_in: 10, StreetName_in: 16, HouseNo_in: 4, ZIPCode_in: 4, TownName_in: 10}
  header: false
  encoding: utf-8
"""
    row = "7".ljust(4) + "Muster".ljust(10) + "Lindenstrasse".ljust(16) + "12".ljust(4) + "6010Kriens"
    clock = Clock()
    async with address_client(aligned_config(tmp_path, yaml_text, key="fixed_v1", clock=clock)) as client:
        status, output_token, _ = await run_aligned(client, clock, f"{row}\n".encode(), key="fixed_v1")
        content = (await client.get(f"/downloadfile/{output_token}")).content
        too_long, _, _ = await run_aligned(client, clock, f"{row.ljust(48)}x\n".encode(), key="fixed_v1")
    assert status["TokenStatus"] == 4
    (record,) = as_records(parse_output(content))
    assert (record["Nr"], record["Name"], record["QSTAT"]) == ("7", "Muster", "2")
    assert too_long["TokenStatus"] == 5
    assert "line 1 is 49 characters long, the agreed widths add up to 48" in too_long["Message"]


async def test_a_fixed_width_header_holds_the_names_cut_to_their_widths(tmp_path: Path) -> None:
    yaml_text = """\
upload:
  columns: [Nummer, Name_in, StreetName_in, HouseNo_in, ZIPCode_in, TownName_in]
  record_id: Nummer
  fixed_widths: {Nummer: 3, Name_in: 10, StreetName_in: 16, HouseNo_in: 4, ZIPCode_in: 4, TownName_in: 10}
"""
    widths = (3, 10, 16, 4, 4, 10)
    header = "".join(name[:width].ljust(width) for name, width in zip(
        ("Nummer", "Name_in", "StreetName_in", "HouseNo_in", "ZIPCode_in", "TownName_in"), widths, strict=True
    ))  # fmt: skip
    wrong = header.replace("Hous", "Haus")
    row = "7".ljust(3) + "Muster".ljust(10) + "Lindenstrasse".ljust(16) + "12".ljust(4) + "6010Kriens"
    clock = Clock()
    async with address_client(aligned_config(tmp_path, yaml_text, key="fixed_v1", clock=clock)) as client:
        good, output_token, _ = await run_aligned(
            client, clock, f"{header}\r\n{row}\r\n".encode(), key="fixed_v1"
        )
        content = (await client.get(f"/downloadfile/{output_token}")).content
        bad, _, _ = await run_aligned(client, clock, f"{wrong}\r\n{row}\r\n".encode(), key="fixed_v1")
    assert good["TokenStatus"] == 4
    assert as_records(parse_output(content))[0]["Nummer"] == "7"  # the agreed name, not the cut one
    assert "header column 4 is 'Haus', the alignment has 'Hous'" in bad["Message"]


async def test_extra_outputs_outlive_the_app_in_a_state_directory(tmp_path: Path) -> None:
    clock = Clock()
    state = tmp_path / "state"
    async with address_client(aligned_config(tmp_path, OUTPUTS_YAML, clock=clock, state_dir=state)) as first:
        _, output_token, extras = await run_aligned(first, clock, german_file(), items=EXTRA_ITEMS)

    async with address_client(aligned_config(tmp_path, OUTPUTS_YAML, clock=clock, state_dir=state)) as second:
        moves = await second.get(f"/downloadfile/{extras['{###MOVEFILE###}']}")
        statistics = await second.get(f"/downloadfile/{extras['{###STATISTICFILE_FR###}']}")
        assert (await second.get(f"/deletefile/{extras['{###STATISTICFILE_FR###}']}")).json() == {"Status": 0}
        result = await second.get(f"/downloadfile/{output_token}")

    async with address_client(aligned_config(tmp_path, OUTPUTS_YAML, clock=clock, state_dir=state)) as third:
        deleted = (await third.get(f"/downloadfile/{extras['{###STATISTICFILE_FR###}']}")).json()
    assert 'filename="moves.txt"' in moves.headers["content-disposition"]
    assert as_records(parse_output(moves.content))[0]["KDNR"] == "2"
    assert statistics.content.startswith(b"Statistique")
    assert parse_output(result.content)[0][0] == "KDNR"
    assert deleted == {"Status": 302}


def test_alignment_files_are_read_leniently_and_refused_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(
        LEGACY_YAML + "comment: kept by the customer\nkey: crm_maintenance_v1\n", encoding="utf-8"
    )
    (alignment,) = parse_alignments([f"crm_maintenance_v1={path}"]).values()
    assert alignment.result_record_id == "KDNR" and alignment.upload.encoding == "cp1252"
    assert alignment.field_of("c/o") == "CoAddress" and alignment.field_of("KDNR (QSTAT)") is None

    broken = tmp_path / "broken.yaml"
    broken.write_text("upload:\n  columns: [A, B]\n  record_id: C\noutputs: {x: STATS}\n", encoding="utf-8")
    cases = {
        f"other_v1={path}": ["names key 'crm_maintenance_v1' but is given for 'other_v1'"],
        "no-separator": ["expected KEY=FILE"],
        f"k={tmp_path / 'missing.yaml'}": ["cannot be read as YAML"],
        f"k={broken}": [
            "upload: record_id 'C' is not one of the columns",
            "outputs: output x: 'STATS' is not a replace item",
        ],
    }
    for pair, reasons in cases.items():
        with pytest.raises(AlignmentError) as raised:
            parse_alignments([pair])
        message = str(raised.value)
        assert "\n" not in message
        for reason in reasons:
            assert reason in message


def test_the_clients_built_in_profiles_are_alignments_the_sandbox_holds(tmp_path: Path) -> None:
    from fileio.address_service.profiles import BUILTIN

    for name, profile in BUILTIN.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(profile.to_yaml(), encoding="utf-8")
        (alignment,) = parse_alignments([f"key_v1={path}"]).values()
        assert alignment.upload.columns == profile.upload.columns
        assert alignment.result_record_id == profile.result_record_id
