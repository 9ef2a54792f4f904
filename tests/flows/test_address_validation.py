"""The address validation flow against the commerce sandbox: every row validated, refused, failed or rejected,
in input order; changed cells highlighted; a 5xx retried; an interrupted run resumed without asking twice."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook

import history
from connectors.errors import AuthFailed
from flows.address_validation import address_validation
from runtime.settings import get_settings
from tests.flows.calls import call
from tests.flows.conftest import Sandbox, dask_task_runner
from tests.outputs import read_output_csv

VALIDATION = "/addresses/validation"
MIXED = """KundenNr;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort
A-1;Hans;Muster;Lindenstrasse;12;6010;Kriens
A-2;Anna;Muster;lindenstrasse;12;6010;Krienz
A-3;Beat;Muster;Hauptstrasse;3;5070;Frick
A-4;Eva;Muster;Hauptstrasse;3;507;Frick
A-5;Urs;Muster;Irgendweg;1;9999;Nirgendwo
"""


def _mixed(tmp_path: Path) -> Path:
    path = tmp_path / "addresses.csv"
    path.write_text(MIXED, encoding="utf-8")
    return path


def _results(out: Path) -> pd.DataFrame:
    return read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)


async def test_every_row_is_validated_refused_or_rejected_in_input_order(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    # With one request at a time the fourth validation sent (row 5 of the file: row 4 is rejected) is refused.
    sandbox.inject(api="commerce", endpoint="*addresses/validation", kind="http_status", value=400, after=3)
    out = tmp_path / "out"
    summary = await call(address_validation, input_path=_mixed(tmp_path), output_dir=out, concurrency=1)

    assert summary.accepted_rows == 4 and summary.rejected_rows == 1
    assert summary.validated == 3 and summary.refused == 1 and summary.failed == 0
    results = _results(out)
    assert results["row"].tolist() == ["1", "2", "3", "5"]
    assert results["KundenNr"].tolist() == ["A-1", "A-2", "A-3", "A-5"]
    by_customer = results.set_index("KundenNr")
    assert by_customer.loc["A-1", "quality"] == "CERTIFIED"
    assert by_customer.loc["A-1", "ChangedFields"] == ""  # "lindenstrasse" vs "Lindenstrasse" is no change
    assert by_customer.loc["A-1", "houseKey"] != "" and by_customer.loc["A-1", "expires"] != ""
    # Each of the customer's columns with the certified value beside it, the rows named as rejected.csv does.
    assert results.columns.tolist()[:7] == [
        "KundenNr",
        "line",
        "row",
        "Vorname",
        "Vorname (Post)",
        "Nachname",
        "Nachname (Post)",
    ]
    assert (by_customer.loc["A-2", "Ort"], by_customer.loc["A-2", "Ort (Post)"]) == ("Krienz", "Kriens")
    assert by_customer.loc["A-2", "line"] == "3"
    assert by_customer.loc["A-2", "ChangedFields"] == "city"
    refused = by_customer.loc["A-5"]
    assert (refused["ValidationStatus"], refused["HttpStatus"]) == ("refused", "400")
    assert "injected HTTP 400" in refused["ValidationError"]
    rejected = read_output_csv(out / "rejected.csv", dtype=str)
    assert rejected[["KundenNr", "line", "row", "values"]].values.tolist() == [["A-4", "5", "4", "PLZ: 507"]]
    assert rejected.loc[0, "problems"] == "PLZ: zip must be exactly 4 digits"

    workbook = load_workbook(out / "results.xlsx")
    sheet = workbook["Results"]
    header = [cell.value for cell in sheet[1]]
    city = header.index("Ort (Post)") + 1
    street = header.index("Strasse (Post)") + 1
    status = header.index("ValidationStatus") + 1
    assert sheet.cell(row=3, column=city).fill.fgColor.rgb.endswith("FFEB9C")  # Krienz → Kriens
    assert sheet.cell(row=2, column=city).fill.fgColor.rgb in (None, "00000000")
    assert sheet.cell(row=3, column=street).fill.fgColor.rgb in (None, "00000000")
    assert sheet.cell(row=5, column=status).fill.fgColor.rgb.endswith("FFC7CE")  # the refused row
    counts = {row[0]: row[1] for row in workbook["Summary"].iter_rows(min_row=2, values_only=True)}
    assert counts["validated"] == 3 and counts["refused by the service (HTTP 400)"] == 1
    assert counts["rejected before sending (rejected.csv)"] == 1
    assert sum(v for k, v in counts.items() if str(k).startswith("quality ")) == 3

    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        run = history.get_run(session, summary.run_id)
        assert run is not None and run.state == "COMPLETED"
        assert {"results.csv", "results.xlsx", "rejected-rows"} <= {doc.kind for doc in run.documents}


async def test_a_server_error_on_one_validation_is_retried(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.inject(
        api="commerce", endpoint="address/v1/addresses/validation", kind="http_status", value=503, times=1
    )
    summary = await call(address_validation, input_path=_mixed(tmp_path), output_dir=tmp_path / "out")

    assert summary.validated == 4 and summary.failed == 0
    assert sandbox.transport.count(VALIDATION) == summary.requests_sent == 5  # one row asked twice
    assert set(_results(tmp_path / "out")["ValidationStatus"]) == {"validated"}


async def test_a_row_failing_after_its_retries_is_reported_and_the_rerun_asks_only_for_it(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    # Two attempts per request (flow_env): the second row sent fails both times, the others answer.
    sandbox.inject(
        api="commerce", endpoint="*addresses/validation", kind="http_status", value=503, after=1, times=2
    )
    source = _mixed(tmp_path)
    first = await call(address_validation, input_path=source, output_dir=tmp_path / "first", concurrency=1)

    assert (first.validated, first.failed) == (3, 1)
    failed = _results(tmp_path / "first").set_index("KundenNr").loc["A-2"]
    assert (failed["ValidationStatus"], failed["HttpStatus"]) == ("failed", "503")
    assert "503" in failed["ValidationError"]

    sent_before = sandbox.transport.count(VALIDATION)
    again = await call(address_validation, input_path=source, output_dir=tmp_path / "again", concurrency=1)
    assert sandbox.transport.count(VALIDATION) - sent_before == 1  # only the row that failed
    assert (again.validated, again.failed, again.resumed_rows) == (4, 0, 3)
    results = _results(tmp_path / "again")
    assert results["KundenNr"].tolist() == ["A-1", "A-2", "A-3", "A-5"]
    assert results.set_index("KundenNr").loc["A-2", "quality"] == "USUALLY_CERTIFIED"
    assert not list((flow_env / "resume").glob("*"))  # done: nothing left to resume

    sent_before = sandbox.transport.count(VALIDATION)
    await call(address_validation, input_path=source, output_dir=tmp_path / "third", concurrency=1)
    assert sandbox.transport.count(VALIDATION) - sent_before == 4  # a completed run is not resumed


async def test_on_dask_worker_processes_refused_credentials_stop_the_run_and_the_rerun_resumes(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks on two worker processes, each with the embedded sandbox (whose fault counts the processes
    share): the first validation is answered, then the service refuses our credentials. The error reaches
    the flow as itself, the answer a worker checkpointed is not asked again, and the results are those of a
    run that never stopped."""
    monkeypatch.setenv(
        "POSTFLOWS_SANDBOX_FAULTS",
        json.dumps([{"api": "commerce", "endpoint": "*addresses/validation", "kind": "http_status",
                     "value": 403, "after": 1, "times": None}]),
    )  # fmt: skip
    source = _mixed(tmp_path)
    on_dask = address_validation.with_options(task_runner=dask_task_runner(processes=True))
    with pytest.raises(AuthFailed):
        await call(on_dask, input_path=source, output_dir=tmp_path / "stopped", concurrency=16)
    assert sandbox.transport.count(VALIDATION) == 0  # every request came from the workers' processes

    again = await call(address_validation, input_path=source, output_dir=tmp_path / "again", concurrency=4)
    assert (again.validated, again.resumed_rows, again.requests_sent) == (4, 1, 3)
    assert sandbox.transport.count(VALIDATION) == 3

    reference = await call(address_validation, input_path=source, output_dir=tmp_path / "reference")
    assert reference.resumed_rows == 0
    resumed, fresh = _results(tmp_path / "again"), _results(tmp_path / "reference")
    assert resumed.drop(columns="expires").equals(fresh.drop(columns="expires"))  # expires: a year from now
    assert (resumed["expires"] != "").all()


async def test_a_street_line_with_its_house_number_is_sent_as_street_and_house_number(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    source = tmp_path / "crm.csv"
    source.write_text(
        "KundenNr;Vorname;Nachname;Strasse;PLZ;Ort\n"
        "A-1;Hans;Muster;Lindenstrasse 12;6010;Kriens\n"
        "A-2;Anna;Rossi;Via Nassa 12;6900;Lugano\n"
        "A-3;Beat;Frei;Bahnhofstrasse 12a;8001;Zürich\n"
        "A-4;Eva;Keller;Marktgasse 3-5-7;3011;Bern\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    summary = await call(address_validation, input_path=source, output_dir=out, concurrency=1)

    assert summary.accepted_rows == 3 and summary.rejected_rows == 1
    sent = [body for path, body in sandbox.transport.json_bodies if path.endswith(VALIDATION)]
    streets = sorted((_found(body, "street"), _found(body, "houseNumber")) for body in sent)
    assert streets == [("Bahnhofstrasse", "12a"), ("Lindenstrasse", "12"), ("Via Nassa", "12")]
    assert _results(out).set_index("KundenNr").loc["A-1", "quality"] == "CERTIFIED"
    rejected = read_output_csv(out / "rejected.csv", dtype=str)
    assert rejected["KundenNr"].tolist() == ["A-4"] and "Strasse" in rejected.loc[0, "problems"]


def _found(body: object, key: str) -> object:
    """The value of ``key`` wherever it is in a JSON body (None when nowhere)."""
    if isinstance(body, dict):
        if key in body:
            return body[key]
        body = list(body.values())
    if isinstance(body, list):
        return next((found for item in body if (found := _found(item, key)) is not None), None)
    return None


async def test_a_crm_export_from_across_the_country_comes_back_certified(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    """The sandbox's validation knows the country as the address service's does: a clerk's file of real
    towns with plausible streets is mostly certified, not "domicile unknown"."""
    source = Path(__file__).resolve().parents[1] / "data" / "crm-export.csv"
    out = tmp_path / "out"
    summary = await call(address_validation, input_path=source, output_dir=out, concurrency=8)

    results = _results(out)
    assert len(results) == summary.accepted_rows and summary.accepted_rows >= 250
    streets = results[~results["Adresse"].str.startswith("Postfach")]
    assert "Adresse (Post)" in results.columns
    certified = streets["quality"].isin(["CERTIFIED", "USUALLY_CERTIFIED"]).mean()
    assert certified >= 0.85, f"{certified:.0%} certified"
