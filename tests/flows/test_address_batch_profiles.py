"""The address batch with an agreed alignment profile: only its columns are sent, results come back by our
id, a dry run sends nothing, and the profile is part of the work's identity."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from flows.address_batch import address_batch
from tasks.address_service.profiles import ProfileError
from tests.flows.conftest import Sandbox

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
    summary = await address_batch(input_path=path, output_dir=out, profile="standard", **FAST)
    assert summary["result_rows"] == summary["accepted_rows"] > 0

    upload = (out / "upload.txt").read_bytes().decode("utf-8")
    assert upload.split("\r\n")[0].startswith("CustomID_01_in\tCompany_in\tPrename_in")
    assert "079 555" not in upload and "1001" not in upload  # customer columns stay here
    results = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert results["Telefon"].str.startswith("079 555").all()  # merged back by our id
    assert results["KundenNr"].iloc[0] == "1001"
    first = results.iloc[0]
    assert (first["HouseNo_in"], first["HouseNoAddition_in"]) == ("12", "b")


async def test_a_dry_run_writes_the_upload_and_the_plan_and_sends_nothing(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = await address_batch(
        input_path=_customers(tmp_path), output_dir=out, profile="legacy-de", dry_run=True
    )
    assert summary["dry_run"] is True
    assert sum(sandbox.transport.calls.values()) == 0
    header = (out / "upload.txt").read_bytes().decode("cp1252").split("\r\n")[0]
    assert header == "KDNR (QSTAT)\tFirma\tVorname\tNachname\tc/o\tStrasse\tHausnummer\tPostfach\tPLZ\tOrt"
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["profile"]["name"] == "legacy-de" and plan["batch_key"] == "postflows_maintenance_v1"
    assert "Telefon" in plan["columns_kept_here"] and "Telefon" not in plan["columns_sent"]
    assert plan["rows"]["sent"] == summary["accepted_rows"]


async def test_the_profile_is_part_of_the_works_identity(sandbox: Sandbox, tmp_path: Path) -> None:
    path = _customers(tmp_path)
    plain = await address_batch(input_path=path, output_dir=tmp_path / "a", dry_run=True)
    standard = await address_batch(
        input_path=path, output_dir=tmp_path / "b", profile="standard", dry_run=True
    )
    legacy = await address_batch(
        input_path=path, output_dir=tmp_path / "c", profile="legacy-de", dry_run=True
    )
    assert len({plain["idempotency_key"], standard["idempotency_key"], legacy["idempotency_key"]}) == 3


async def test_declared_extra_outputs_are_refused_before_any_request(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    profile = tmp_path / "with-statistics.yaml"
    profile.write_text(
        "upload:\n  columns: [CustomID_01_in, Name_in, StreetName_in, HouseNo_in, ZIPCode_in, TownName_in]\n"
        "  record_id: CustomID_01_in\noutputs:\n  statistics_fr: '{###STATISTICFILE_FR###}'\n",
        encoding="utf-8",
    )
    with pytest.raises(ProfileError, match="statistics_fr"):
        await address_batch(
            input_path=_customers(tmp_path), output_dir=tmp_path / "out", profile=str(profile)
        )
    assert sum(sandbox.transport.calls.values()) == 0
