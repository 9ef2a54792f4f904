"""The address purchase flow against the sandbox: output addresses, documents, progress, resuming without a
second POST, rejected rows, validation before any request.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from sqlalchemy import select

import history
from connectors.errors import ServerError
from connectors.newspaper import OrderInvalid
from fileio.errors import InputError
from fileio.sandbox_marks import BANNER_SHEET
from flows.address_purchase import address_purchase
from history.models import JobEvent, RemoteJob
from tasks.newspaper.purchases import PurchaseFailed
from tasks.polling import PollTimedOut
from tasks.progress import listening
from tasks.submission import SubmissionUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ADDRESSES = EXAMPLES / "purchase-addresses.csv"
PARAMETERS = EXAMPLES / "purchase.json"
QUICK = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.1, "max_wait_s": 10.0}
PURCHASES = "/v1/purchases"


def posts(sandbox: Sandbox) -> int:
    return sum(
        n
        for (method, path), n in sandbox.transport.calls.items()
        if method == "POST" and path.endswith(PURCHASES)
    )


async def test_purchase_end_to_end(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    seen: list[float] = []
    out = tmp_path / "out"
    with listening(lambda label, percent, detail: seen.append(percent)):
        summary = await call(address_purchase, ADDRESSES, PARAMETERS, out, **QUICK)

    assert summary.accepted_rows == 6 and summary.rejected_rows == 0
    assert summary.output_addresses == 6
    assert summary.status_codes == {"OK": 4, "CORRECTED": 1, "UNKNOWN": 1}
    frame = read_output_csv(out / "output-addresses.csv", dtype=str)
    assert frame.columns.tolist()[:4] == ["statusCode", "bundleId", "bundleInfo", "id"]
    assert set(frame["id"]) == {f"A-00{n}" for n in range(1, 7)}
    corrected = frame.set_index("id").loc["A-001"]
    assert corrected["statusCode"] == "CORRECTED" and corrected["street"] == "Hauptstrasse"
    assert load_workbook(out / "output-addresses.xlsx", read_only=True).sheetnames == [
        BANNER_SHEET,
        "output addresses",
    ]
    assert json.loads((out / "output-addresses.json").read_text())["outputAddresses"]
    documents = sorted(path.name for path in (out / "documents").iterdir())
    assert documents == [
        "bundle-labels.pdf",
        "container-labels.pdf",
        "non-reusable-addresses.pdf",
        "order-confirmation.pdf",
        "original-addresse.pdf",
        "output-addresses.pdf",
        "sort-protocol.pdf",
    ]
    assert all(path.read_bytes().startswith(b"%PDF") for path in (out / "documents").iterdir())
    assert seen[-1] == 100.0 and min(seen) < 100.0
    assert posts(sandbox) == 1

    factory = history.session_factory(f"sqlite:///{flow_env / 'history.db'}")
    with factory() as session:
        job = session.scalars(select(RemoteJob).where(RemoteJob.remote_id == str(summary.purchase_id))).one()
        progress = [e.progress for e in session.scalars(select(JobEvent).where(JobEvent.job_id == job.id))]
    assert job.finished_at is not None and progress[-1] == 100.0


async def test_rerun_resumes_after_failure_without_second_post(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.inject(api="newspaper", endpoint="*/progress", kind="http_status", value=500, times=None)
    with pytest.raises(ServerError):  # the progress is read until the run's wait is over
        await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", **{**QUICK, "max_wait_s": 1.0})
    assert posts(sandbox) == 1
    sandbox.config.faults.clear()
    summary = await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", **QUICK)
    assert summary.resumed is True and summary.output_addresses == 6
    assert posts(sandbox) == 1


async def test_lost_answer_refuses_until_resubmit(sandbox: Sandbox, flow_env: Path, tmp_path: Path) -> None:
    sandbox.inject(api="newspaper", endpoint="*purchases", method="POST", kind="drop")
    with pytest.raises(Exception, match="RemoteProtocolError"):
        await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", **QUICK)
    with pytest.raises(SubmissionUncertain, match="--resubmit"):
        await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", **QUICK)
    assert posts(sandbox) == 1
    summary = await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", resubmit=True, **QUICK)
    assert summary.resumed is False and posts(sandbox) == 2


async def test_rejected_rows_and_aliases_without_clean_up(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    path = tmp_path / "adressen.csv"
    path.write_text(
        "Kundennummer;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort;Land\n"
        "K1;Anna;Muster;Hauptstrasse;12;6280;Hochdorf;CH\n"
        "K2;Beat;Keller;Seestrasse;5;63x3;Weggis;CH\n"
        "K3;;;Seestrasse;7;6353;Weggis;CH\n"
        "K1;Carla;Rossi;Via Nassa;3;6900;Lugano;CH\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    summary = await call(address_purchase, path, PARAMETERS, out, address_clean_up=False, **QUICK)
    assert (summary.input_rows, summary.accepted_rows, summary.rejected_rows) == (4, 1, 3)
    rejected = read_output_csv(out / "rejected.csv")
    assert rejected[["Kundennummer", "line", "row"]].values.tolist() == [
        ["K2", 3, 2],
        ["K3", 4, 3],
        ["K1", 5, 4],
    ]
    assert rejected["problems"].str.split(":").str[0].tolist() == ["zipCode", "lastName", "id"]
    assert rejected.loc[0, "values"] == "zipCode: 63x3"
    assert not (out / "documents" / "non-reusable-addresses.pdf").exists()
    assert sandbox.transport.count("/non-reusable-addresses") == 0


async def test_invalid_parameters_fail_before_any_request(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    parameters = json.loads(PARAMETERS.read_text())
    parameters["depositDate"] = "2020-01-01"
    parameters["sortingModule"]["simplifiedConfiguration"]["bundle"]["max"] = 10
    path = tmp_path / "purchase.json"
    path.write_text(json.dumps(parameters))
    with pytest.raises(OrderInvalid) as caught:
        await call(address_purchase, ADDRESSES, path, tmp_path / "out", **QUICK)
    assert "depositDate" in str(caught.value)
    assert "sortingModule.simplifiedConfiguration.bundle.max" in str(caught.value)
    assert sum(sandbox.transport.calls.values()) == 0


def purchase_jobs(data_dir: Path) -> list[RemoteJob]:
    factory = history.session_factory(f"sqlite:///{data_dir / 'history.db'}")
    with factory() as session:
        return list(
            session.scalars(select(RemoteJob).where(RemoteJob.kind == "purchase").order_by(RemoteJob.id))
        )


async def test_failed_sorting_closes_the_job_and_the_next_run_orders_anew(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.inject(api="newspaper", endpoint="*purchases", method="POST", kind="job_outcome", value="failed")
    with pytest.raises(PurchaseFailed, match="FAILED"):
        await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", **QUICK)
    [failed] = purchase_jobs(flow_env)
    assert failed.status == "FAILED" and failed.finished_at is not None

    sandbox.config.faults.clear()
    summary = await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", **QUICK)
    assert summary.resumed is False and posts(sandbox) == 2
    assert summary.purchase_id != int(failed.remote_id)


async def test_time_out_leaves_the_purchase_waiting_and_a_rerun_resumes_it(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.config.job_seconds = 1.5
    with pytest.raises(PollTimedOut):
        await call(
            address_purchase,
            ADDRESSES,
            PARAMETERS,
            tmp_path / "out",
            min_poll_interval_s=0.05,
            max_poll_interval_s=0.1,
            max_wait_s=0.1,
        )
    [waiting] = purchase_jobs(flow_env)
    assert waiting.status == "WAITING" and waiting.finished_at is None
    summary = await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", **QUICK)
    assert summary.resumed is True and summary.purchase_id == int(waiting.remote_id)
    assert posts(sandbox) == 1


async def test_the_clean_up_option_is_part_of_the_purchase_identity(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    without = await call(
        address_purchase, ADDRESSES, PARAMETERS, tmp_path / "a", address_clean_up=False, **QUICK
    )
    with_clean_up = await call(
        address_purchase, ADDRESSES, PARAMETERS, tmp_path / "b", address_clean_up=True, **QUICK
    )
    assert with_clean_up.resumed is False and posts(sandbox) == 2
    assert with_clean_up.idempotency_key != without.idempotency_key
    assert "non-reusable-addresses" in with_clean_up.documents
    assert "non-reusable-addresses" not in without.documents


async def test_formula_like_cells_are_neutralised_in_the_csv_files(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    lines = ADDRESSES.read_text(encoding="utf-8").splitlines()
    header, first = lines[0], lines[1].split(",")
    first[1] = '"=HYPERLINK(""http://x.test"")"'
    path = tmp_path / "addresses.csv"
    path.write_text("\n".join([header, ",".join(first), *lines[2:]]) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    await call(address_purchase, path, PARAMETERS, out, **QUICK)
    frame = read_output_csv(out / "output-addresses.csv", dtype=str)
    assert frame.set_index("id").loc[first[0], "firstName"] == '\'=HYPERLINK("http://x.test")'
    assert set(frame["statusCode"]) <= {"OK", "CORRECTED", "UNKNOWN"}


async def test_a_validation_only_purchase_does_not_wait_for_sorting(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    parameters = json.loads(PARAMETERS.read_text())
    del parameters["sortingModule"]
    path = tmp_path / "validation-only.json"
    path.write_text(json.dumps(parameters))
    out = tmp_path / "out"
    summary = await call(address_purchase, ADDRESSES, path, out, **QUICK)
    assert summary.output_addresses == 6
    documents = sorted(p.name for p in (out / "documents").iterdir())
    assert documents == [
        "non-reusable-addresses.pdf",
        "order-confirmation.pdf",
        "original-addresse.pdf",
        "output-addresses.pdf",
    ]
    assert sandbox.transport.count("/sort-protocol") == 0
    [job] = purchase_jobs(flow_env)
    assert job.status == "COMPLETED"


async def test_purchase_parameters_filled_in_the_form(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    parameters = json.loads(PARAMETERS.read_text(encoding="utf-8"))
    summary = await call(address_purchase, ADDRESSES, purchase=parameters, **QUICK)
    out = flow_env / "address-purchases" / ADDRESSES.name
    assert summary.output_addresses == 6 and (out / "output-addresses.csv").is_file()
    assert "non-reusable-addresses" in summary.documents  # addressCleanUp of the form's object
    assert posts(sandbox) == 1

    with pytest.raises(InputError, match="not both"):
        await call(address_purchase, ADDRESSES, PARAMETERS, tmp_path / "out", purchase=parameters, **QUICK)
    with pytest.raises(InputError, match="no purchase parameters"):
        await call(address_purchase, ADDRESSES, purchase={"sortingModule": {}}, **QUICK)
    assert posts(sandbox) == 1
