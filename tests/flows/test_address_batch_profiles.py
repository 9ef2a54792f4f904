"""The address batch with an agreed alignment profile: only its columns are sent, results come back by our
id, a dry run sends nothing, and the profile is part of the work's identity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fileio.address_service.profiles import BUILTIN
from flows.address_batch import address_batch
from flows.address_results import AddressBatchPlan
from runtime.wiring import ConfigurationError
from sandbox.address_service.alignments import load_alignment
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


def _customers(tmp_path: Path) -> Path:
    """The example with a phone column and a split-able house number in its first row."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    rows = [lines[0] + ";Telefon"] + [line + f";079 555 00 {n:02d}" for n, line in enumerate(lines[1:])]
    rows[1] = rows[1].replace(";12;", ";12b;", 1)
    path = tmp_path / "customers.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


async def test_the_standard_profile_sends_only_its_columns_and_merges_by_our_id(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    path = _customers(tmp_path)
    out = tmp_path / "out"
    summary = await call(address_batch, input_path=path, output_dir=out, profile="standard", **FAST)
    assert summary.result_rows == summary.accepted_rows > 0

    upload = (out / "upload.txt").read_bytes().decode("utf-8")
    assert upload.split("\r\n")[0].startswith("CustomID_01_in\tCompany_in\tPrename_in")
    assert "079 555" not in upload and "1001" not in upload  # customer columns stay here
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert results["Telefon"].str.startswith("079 555").all()  # merged back by our id
    assert results["KundenNr"].iloc[0] == "1001"
    assert results["Hausnummer"].iloc[0] == "12b"  # as the customer wrote it; sent split:
    header, first = (line.split("\t") for line in upload.split("\r\n")[:2])
    sent = dict(zip(header, first, strict=False))
    assert (sent["HouseNo_in"], sent["HouseNoAddition_in"]) == ("12", "b")


async def test_a_dry_run_writes_the_upload_and_the_plan_and_sends_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = await call(
        address_batch, input_path=_customers(tmp_path), output_dir=out, profile="legacy-de", dry_run=True
    )
    assert isinstance(summary, AddressBatchPlan) and summary.dry_run is True
    assert {"dry_run", "upload", "plan", "accepted_rows"} <= set(summary.summary())
    assert "result_rows" not in summary.summary() and "problem" not in summary.summary()
    assert sum(sandbox.transport.calls.values()) == 0
    header = (out / "upload.txt").read_bytes().decode("cp1252").split("\r\n")[0]
    assert header == "KDNR (QSTAT)\tFirma\tVorname\tNachname\tc/o\tStrasse\tHausnummer\tPostfach\tPLZ\tOrt"
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["profile"]["name"] == "legacy-de" and plan["batch_key"] == "postflows_maintenance_v1"
    assert "Telefon" in plan["columns_kept_here"] and "Telefon" not in plan["columns_sent"]
    assert plan["rows"]["sent"] == summary.accepted_rows


async def test_the_profile_is_part_of_the_works_identity(sandbox: Sandbox, tmp_path: Path) -> None:
    path = _customers(tmp_path)
    plain = await call(address_batch, input_path=path, output_dir=tmp_path / "a", dry_run=True)
    standard = await call(
        address_batch, input_path=path, output_dir=tmp_path / "b", profile="standard", dry_run=True
    )
    legacy = await call(
        address_batch, input_path=path, output_dir=tmp_path / "c", profile="legacy-de", dry_run=True
    )
    assert len({plain.idempotency_key, standard.idempotency_key, legacy.idempotency_key}) == 3


CUSTOM = """\
key: crm_maintenance_v1
upload:
  columns: [CustomID_01_in, Prename_in, Name_in, StreetName_in, HouseNo_in, HouseNoAddition_in, ZIPCode_in,
            TownName_in, PassThrough_01]
  record_id: CustomID_01_in
  encoding: utf-8
  delimiter: "\\t"
  line_ending: "\\r\\n"
result:
  record_id: CustomID
outputs:
  statistics_fr: "{###STATISTICFILE_FR###}"
"""


async def test_a_custom_profile_with_a_renamed_result_id_and_an_extra_output(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    profile = tmp_path / "crm.yaml"
    profile.write_text(CUSTOM, encoding="utf-8")
    sandbox.config.alignments["crm_maintenance_v1"] = load_alignment(profile, "crm_maintenance_v1")
    out = tmp_path / "out"
    summary = await call(
        address_batch,
        input_path=_customers(tmp_path),
        output_dir=out,
        profile=str(profile),
        column_mapping={"KundenNr": "PassThrough_01"},
        **FAST,
    )
    assert summary.result_rows == summary.accepted_rows > 0
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert results["ReturnedByService"].eq("True").all() and results["QSTAT"].ne("").all()
    statistics = out / "download" / "statistics_fr.txt"
    assert statistics.is_file() and str(statistics) in summary.files
    upload = (out / "upload.txt").read_bytes().decode("utf-8").split("\r\n")
    assert upload[1].split("\t")[-1] == "1001"  # the mapped pass-through slot
    # Input, output and the extra output are all deleted on the service.
    assert sandbox.transport.count("/createfile") == 2 and sandbox.transport.count("/deletefile") == 3


async def test_the_legacy_profile_end_to_end_with_its_own_result_id(sandbox: Sandbox, tmp_path: Path) -> None:
    legacy = tmp_path / "legacy-de.yaml"
    legacy.write_text(BUILTIN["legacy-de"].to_yaml(), encoding="utf-8")
    sandbox.config.alignments["postflows_maintenance_v1"] = load_alignment(legacy, "postflows_maintenance_v1")
    out = tmp_path / "out"
    summary = await call(
        address_batch, input_path=_customers(tmp_path), output_dir=out, profile="legacy-de", **FAST
    )
    assert summary.result_rows == summary.accepted_rows > 0
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert results["ReturnedByService"].eq("True").all()
    assert results["Telefon"].str.startswith("079 555").all()


async def test_an_upload_that_differs_from_the_agreed_header_fails_naming_the_column(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    legacy = tmp_path / "legacy-de.yaml"
    legacy.write_text(BUILTIN["legacy-de"].to_yaml(), encoding="utf-8")
    sandbox.config.alignments["postflows_maintenance_v1"] = load_alignment(legacy, "postflows_maintenance_v1")
    # The sandbox would fail the job on the layout (tests/sandbox); the run sees before billing that the
    # agreed alignment returns the id as KDNR, not as the standard profile's CustomID_01_in: nothing is sent.
    with pytest.raises(
        ConfigurationError, match="'KDNR', while profile standard expects it in 'CustomID_01_in'"
    ):
        await call(
            address_batch,
            input_path=_customers(tmp_path),
            output_dir=tmp_path / "out",
            profile="standard",
            **FAST,
        )
    assert sum(sandbox.transport.calls.values()) == 0


async def test_upload_options_override_the_profile_and_change_the_key(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    path = _customers(tmp_path)
    agreed = await call(
        address_batch, input_path=path, output_dir=tmp_path / "a", profile="legacy-de", dry_run=True
    )
    overridden = await call(
        address_batch,
        input_path=path,
        output_dir=tmp_path / "b",
        profile="legacy-de",
        upload_delimiter=";",
        dry_run=True,
    )
    header = (tmp_path / "b" / "upload.txt").read_bytes().decode("cp1252").split("\r\n")[0]
    assert header.startswith("KDNR (QSTAT);Firma;Vorname")
    assert overridden.idempotency_key != agreed.idempotency_key
    # The agreed layout has tabs: read in any layout, the id would not come back as KDNR.
    assert agreed.problem is None and "comes back as 'KDNR (QSTAT)'" in overridden.problem
    assert sum(sandbox.transport.calls.values()) == 0


MOVES_PROFILE = """\
key: crm_maintenance_v1
upload:
  columns: [CustomID_01_in, Prename_in, Name_in, StreetName_in, HouseNo_in, ZIPCode_in, TownName_in]
  record_id: CustomID_01_in
outputs:
  moves: "{###MOVEFILE###}"
moves: moves
"""


async def test_moves_are_read_from_the_output_the_profile_declares(sandbox: Sandbox, tmp_path: Path) -> None:
    profile = tmp_path / "moves.yaml"
    profile.write_text(MOVES_PROFILE, encoding="utf-8")
    sandbox.config.alignments["crm_maintenance_v1"] = load_alignment(profile, "crm_maintenance_v1")
    people = tmp_path / "people.csv"
    people.write_text(
        "Kunde;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "A1;Hans;Muster;Lindenstrasse;12;6010;Kriens\n"
        "A2;Peter;Meier;Bahnhofstrasse;8;5070;Frick\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    summary = await call(address_batch, input_path=people, output_dir=out, profile=str(profile), **FAST)
    assert summary.moves == 1
    assert (out / "download" / "moves.txt").is_file()
    # The main output is the result alone (a text file, named by its content), no ZIP with the moves in it.
    assert (out / "download" / "result.txt").is_file() and not (out / "download" / "result.zip").exists()


async def test_a_result_id_the_sandbox_would_not_return_is_refused_before_anything_is_sent(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    profile = tmp_path / "crm.yaml"
    profile.write_text(CUSTOM, encoding="utf-8")  # its result renames the id; the sandbox holds no alignment
    with pytest.raises(
        ConfigurationError, match="POSTFLOWS_SANDBOX_ALIGNMENTS=crm_maintenance_v1="
    ) as refused:
        await call(
            address_batch,
            input_path=_customers(tmp_path),
            output_dir=tmp_path / "out",
            profile=str(profile),
            column_mapping={"KundenNr": "PassThrough_01"},
            **FAST,
        )
    assert "nothing was sent" in str(refused.value)
    assert sum(sandbox.transport.calls.values()) == 0


async def test_the_plan_and_the_summary_name_the_column_the_record_id_comes_back_in(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    summary = await call(
        address_batch,
        input_path=_customers(tmp_path),
        output_dir=tmp_path / "out",
        profile="legacy-de",
        dry_run=True,
        **FAST,
    )
    plan = json.loads((tmp_path / "out" / "plan.json").read_text(encoding="utf-8"))
    assert plan["record_id"] == {"sent_in": "KDNR (QSTAT)", "returned_in": "KDNR"}
    assert summary.record_id_returned_in == "KDNR"
