"""The address batch flow end to end against the in-process sandbox, under a real Prefect test server:
results, rejected rows, clean-up in every ending, and resume without a second runbatch.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from openpyxl import load_workbook

import history
from connectors.address_service import DatabaseStatusError
from connectors.errors import ServerError, TransportFailure
from fileio.sandbox_marks import BANNER_SHEET, SANDBOX_NOTICE, SUMMARY_NOTICE
from flows.address_batch import address_batch
from flows.address_results import AddressBatchResult
from flows.cleanup import cleanup
from runtime.settings import get_settings
from sandbox.address_service.jobs import JobStore
from sandbox.inprocess import address_service_url
from tasks.address_service.batch import BatchJobFailed
from tasks.polling import PollTimedOut
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


def _as_recorded(summary: dict[str, Any]) -> dict[str, Any]:
    """A run summary without its ``sandbox`` key: the history scrubs the registered secrets from keys too,
    and in these tests that key comes back masked."""
    return {key: value for key, value in summary.items() if key not in {"sandbox", "[redacted]"}}


def _runs() -> list[history.Run]:
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        return [history.get_run(session, run.id) for run in history.list_runs(session, limit=50)]  # type: ignore[misc]


async def _token_state(sandbox: Sandbox, token: str) -> int:
    """The Status the sandbox gives for deleting ``token`` again: 302 once it is gone."""
    async with httpx.AsyncClient(
        transport=sandbox.transport.inner, auth=("sandbox-user", "sandbox-password")
    ) as c:
        response = await c.get(f"{address_service_url()}/deletefile/{token}")
    return int(response.json()["Status"])


def _job(run: history.Run, kind: str) -> history.RemoteJob:
    (job,) = [job for job in run.remote_jobs if job.kind == kind]
    return job


async def _forget(sandbox: Sandbox, token: str) -> None:
    """Make the sandbox forget a batch job, as a service does once its files are deleted."""
    async with httpx.AsyncClient(
        transport=sandbox.transport.inner, auth=("sandbox-user", "sandbox-password")
    ) as c:
        await c.get(f"{address_service_url()}/deletefile/{token}")


def _file_tokens(run: history.Run) -> list[str]:
    return [job.remote_id for job in run.remote_jobs if job.kind in ("upload-file", "output-file")]


async def test_batch_writes_results_rejects_bad_rows_and_cleans_up(sandbox: Sandbox, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)

    source_rows = len(pd.read_csv(EXAMPLE, sep=";", dtype=str))
    assert summary.accepted_rows + summary.rejected_rows == source_rows
    assert summary.rejected_rows == 2
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert len(results) == summary.accepted_rows == summary.result_rows
    assert list(results.columns[:3]) == ["KundenNr", "line", "row"]
    first = results.loc[results["KundenNr"] == "1001"].iloc[0]
    assert first["QSTAT"] == "1" and first["QSTAT_Designation"] == "Person hit"
    assert float(first["TotalScore"]) == 100.0
    assert set(summary.qstat) >= {"1", "2", "3", "4", "25", "27", "50", "51"}

    rejected = read_output_csv(out / "rejected.csv", dtype=str)
    assert rejected.columns.tolist() == ["KundenNr", "line", "row", "problems", "values"]
    assert rejected[["KundenNr", "line", "row"]].values.tolist() == [
        ["1039", "40", "39"],
        ["1040", "41", "40"],
    ]
    assert (
        rejected.loc[1, "problems"]
        == "PLZ: ZIPCode missing (or PoBoxZIP for a P.O. box); Ort: TownName missing"
    )

    book = load_workbook(out / "results.xlsx", read_only=False)
    # A sandbox run: every file for people says so, and the write-back is not taken for the real one.
    assert book.sheetnames[:2] == [BANNER_SHEET, "Results"]
    assert book[BANNER_SHEET]["A1"].value == SANDBOX_NOTICE
    review = load_workbook(out / "review.xlsx", read_only=True)
    assert review.sheetnames[0] == BANNER_SHEET and len(review.sheetnames) >= 2
    first, _, rest = (out / "summary.md").read_text().partition("\n\n")
    assert first == SUMMARY_NOTICE and rest.startswith("# Address batch")
    assert summary.sandbox is True
    assert (out / "writeback-sandbox.csv").is_file() and not (out / "writeback.csv").exists()
    # CSV files keep their header as the first line: no banner.
    assert (out / "writeback-sandbox.csv").read_text(encoding="utf-8").startswith("KundenNr;Firma;")
    assert (out / "results.csv").read_text(encoding="utf-8-sig").startswith("KundenNr;line;row;")

    (run,) = _runs()
    assert run.state == "COMPLETED" and run.flow_run_id
    # The result is the run's summary: the history stores its fields under their names.
    assert isinstance(summary, AddressBatchResult) and run.summary is not None
    assert _as_recorded(run.summary) == _as_recorded(summary.summary())
    assert {"result_rows", "qstat", "moves", "corrected_rows", "writeback"} <= set(run.summary)
    kinds = {job.kind: job for job in run.remote_jobs}
    assert kinds["batch"].status == "COMPLETED" and kinds["batch"].finished_at is not None
    assert kinds["batch"].remote_status == "FINISHED"
    assert kinds["upload-file"].deleted_at is not None and kinds["output-file"].deleted_at is not None
    assert {doc.kind for doc in run.documents} >= {"rejected-rows", "download", "results"}
    assert any("runbatch" in step.name for step in run.steps)
    for token in _file_tokens(run):
        assert await _token_state(sandbox, token) == 302
    assert sandbox.transport.count("/runbatch") == 1
    assert sandbox.transport.count("/deletefile") == 2


@pytest.mark.parametrize("outcome", ["failed", "error", "canceled"])
async def test_failed_job_names_the_status_and_still_deletes_both_files(
    sandbox: Sandbox, tmp_path: Path, outcome: str
) -> None:
    sandbox.inject(api="address", endpoint="runbatch", kind="job_outcome", value=outcome)
    with pytest.raises(BatchJobFailed, match="TokenStatus"):
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    (run,) = _runs()
    assert run.state == "FAILED" and "TokenStatus" in (run.error or "")
    assert sandbox.transport.count("/deletefile") == 2
    for token in _file_tokens(run):
        assert await _token_state(sandbox, token) == 302


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ({"kind": "unlisted_status", "value": 9}, "TokenStatus 9, a status the specification does not list"),
        ({"kind": "unlisted_status", "value": 7}, "TokenStatus 7 Unknown"),
    ],
)
async def test_an_unknown_token_status_is_waited_out_and_leaves_the_job_with_its_files(
    sandbox: Sandbox, tmp_path: Path, fault: dict[str, object], said: str
) -> None:
    """§3 shows no transitions: a job in 7 Unknown, or in a status §2.6 does not list, may still end in a
    result, so it is no failure. The wait runs out naming the status; the job stays WAITING with its files,
    for the same command to pick up, and no second runbatch is sent."""
    sandbox.inject(api="address", endpoint="checkbatchstatus/*", times=None, **fault)
    with pytest.raises(PollTimedOut, match=said):
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", max_wait_s=0.5, **FAST)
    (run,) = _runs()
    assert said in (run.error or "")
    assert _job(run, "batch").status == "WAITING"
    assert sandbox.transport.count("/deletefile") == 0
    assert sandbox.transport.count("/runbatch") == 1


@pytest.mark.parametrize("endpoint", ["uploadfile", "createfile"])
async def test_a_file_whose_answer_was_lost_is_recorded_as_uncertain_and_never_sent_again(
    sandbox: Sandbox, tmp_path: Path, endpoint: str
) -> None:
    """The service made the file but its token never arrived: the history says a file may be left, the
    request is not repeated (that would leave the first file behind unnoticed), and no clean-up tries to
    delete a token nobody knows."""
    sandbox.inject(api="address", endpoint=endpoint, kind="read_timeout")
    with pytest.raises(TransportFailure, match="ReadTimeout"):
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert sandbox.transport.count(f"/{endpoint}") == 1
    (run,) = _runs()
    kind = "upload-file" if endpoint == "uploadfile" else "output-file"
    (lost,) = [job for job in run.remote_jobs if job.kind == kind and job.status == "UNCERTAIN"]
    assert lost.remote_id.startswith("pending:") and lost.deleted_at is None
    assert any("may be left on the service" in message.text for message in run.messages)
    # The upload made before a lost createfile is deleted; the lost file is not asked for by anyone.
    assert sandbox.transport.count("/deletefile") == (1 if endpoint == "createfile" else 0)
    summary = await call(cleanup, older_than_hours=0)
    assert summary.deleted == [] and summary.not_deleted == {}
    assert sandbox.transport.count("/deletefile") == (1 if endpoint == "createfile" else 0)


async def test_a_status_endpoint_down_past_the_deadline_leaves_the_job_waiting_with_its_files(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.config.job_seconds = 5
    sandbox.inject(
        api="address", endpoint="checkbatchstatus/*", kind="http_status", value=500, after=1, times=None
    )
    with pytest.raises(PollTimedOut):
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", max_wait_s=1.0, **FAST)
    (run,) = _runs()
    assert run.state == "FAILED"
    batch = _job(run, "batch")
    assert batch.status == "WAITING"
    assert sandbox.transport.count("/deletefile") == 0  # the job may still run: its files stay


async def test_a_timeout_keeps_the_files_and_the_same_command_picks_the_job_up(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.config.job_seconds = 2.5
    out = tmp_path / "out"
    with pytest.raises(PollTimedOut, match="not finished"):
        await call(address_batch, input_path=EXAMPLE, output_dir=out, max_wait_s=0.3, **FAST)
    (timed_out,) = _runs()
    assert _job(timed_out, "batch").status == "WAITING"
    assert sandbox.transport.count("/deletefile") == 0

    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert summary.result_rows == summary.accepted_rows
    assert sandbox.transport.count("/runbatch") == 1 and sandbox.transport.count("/uploadfile") == 1
    assert sandbox.transport.count("/deletefile") == 2
    assert _job(timed_out, "batch").status == "WAITING"  # the snapshot read before the second run
    (batch,) = [job for run in _runs() for job in run.remote_jobs if job.kind == "batch"]
    assert batch.status == "COMPLETED" and batch.remote_status == "FINISHED"
    for token in _file_tokens(timed_out):
        assert await _token_state(sandbox, token) == 302


async def test_cancellation_while_polling_keeps_the_job_for_the_next_run(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.config.job_seconds = 3
    out = tmp_path / "out"
    run = asyncio.ensure_future(call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST))
    while sandbox.transport.count("/checkbatchstatus") < 2:
        await asyncio.sleep(0.05)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    (cancelled,) = _runs()
    assert cancelled.state == "INTERRUPTED"
    assert _job(cancelled, "batch").status == "WAITING"
    assert sandbox.transport.count("/deletefile") == 0

    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert summary.result_rows == summary.accepted_rows
    assert sandbox.transport.count("/runbatch") == 1 and sandbox.transport.count("/deletefile") == 2


async def test_a_download_that_keeps_failing_is_fetched_by_the_next_run(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    sandbox.inject(api="address", endpoint="downloadfile/*", kind="http_status", value=503, times=None)
    with pytest.raises(ServerError):
        await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    (failed,) = _runs()
    assert _job(failed, "batch").status == "FINISHED"
    assert sandbox.transport.count("/deletefile") == 0

    sandbox.config.faults.clear()
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert summary.result_rows == summary.accepted_rows
    assert sandbox.transport.count("/runbatch") == 1
    assert sandbox.transport.count("/deletefile") == 2


async def test_a_job_the_service_cannot_find_is_never_replaced_without_resubmit(
    sandbox: Sandbox, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "out"
    sandbox.config.job_seconds = 2.5
    with pytest.raises(PollTimedOut):
        await call(address_batch, input_path=EXAMPLE, output_dir=out, max_wait_s=0.2, **FAST)
    (first,) = _runs()
    for token in _file_tokens(first):  # the service loses the job: its files are deleted elsewhere
        assert await _token_state(sandbox, token) == 0
    batch_token = _job(first, "batch").remote_id
    await _forget(sandbox, batch_token)  # checkbatchstatus now answers Status 302

    # Status 302 is "error accessing the database": it says nothing certain about the job, so the run keeps
    # asking until its wait ends, and the job stays this work's.
    with pytest.raises(DatabaseStatusError):
        await call(address_batch, input_path=EXAMPLE, output_dir=out, max_wait_s=0.5, **FAST)
    assert sandbox.transport.count("/runbatch") == 1
    assert sandbox.transport.count("/checkbatchstatus") >= 3
    assert [job.status for run in _runs() for job in run.remote_jobs if job.kind == "batch"] == ["WAITING"]

    sandbox.config.job_seconds = 0.4
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, resubmit=True, **FAST)
    assert summary.result_rows == summary.accepted_rows
    assert sandbox.transport.count("/runbatch") == 2
    assert summary.replaced == {"address batch": [f"{batch_token} (WAITING, run {first.id})"]}
    assert f"replacing batch job {batch_token}" in caplog.text
    jobs = [job for run in _runs() for job in run.remote_jobs if job.kind == "batch"]
    assert sorted(job.status for job in jobs) == ["COMPLETED", "SUPERSEDED"]
    assert "## Replaced" in (out / "summary.md").read_text(encoding="utf-8")


async def test_status_302_three_times_then_an_answer_bills_one_batch(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.inject(api="address", endpoint="checkbatchstatus/*", kind="service_status", value=302, times=3)
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert summary.result_rows == summary.accepted_rows > 0
    assert sandbox.transport.count("/runbatch") == 1
    assert sandbox.transport.count("/checkbatchstatus") >= 4
    assert sandbox.config.faults.rules[0].fired == 3


async def test_status_302_until_the_wait_ends_leaves_the_job_to_the_next_run(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.inject(api="address", endpoint="checkbatchstatus/*", kind="service_status", value=302, times=None)
    with pytest.raises(DatabaseStatusError):
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", max_wait_s=0.5, **FAST)
    (first,) = _runs()
    assert _job(first, "batch").status == "WAITING"
    held = set(JobStore(sandbox.transport.inner.app.state.sandbox_state).file_tokens())
    assert set(_file_tokens(first)) <= held, "the files of a job that may give a result stay"

    sandbox.config.faults.clear()
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert summary.resumed is True and summary.result_rows == summary.accepted_rows
    assert sandbox.transport.count("/runbatch") == 1


async def test_options_that_give_the_same_upload_are_one_batch(sandbox: Sandbox, tmp_path: Path) -> None:
    spellings = [{}, {"input_delimiter": ";"}, {"input_encoding": "utf-8", "upload_encoding": "cp1252"}]
    summaries = [
        await call(address_batch, input_path=EXAMPLE, output_dir=tmp_path / f"out-{n}", **options, **FAST)
        for n, options in enumerate(spellings)
    ]
    uploads = {(tmp_path / f"out-{n}" / "upload.txt").read_bytes() for n in range(len(spellings))}
    assert len(uploads) == 1, "the three spellings write one upload"
    assert sandbox.transport.count("/runbatch") == 1 and sandbox.transport.count("/uploadfile") == 1
    first, *later = summaries
    assert not first.resumed
    (batch_token,) = {job.remote_id for run in _runs() for job in run.remote_jobs if job.kind == "batch"}
    for summary in later:
        assert summary.resumed is True
        assert summary.idempotency_key == first.idempotency_key
        (reused,) = summary.reused["address batch"]
        assert reused.startswith(batch_token)
    for n, summary in enumerate(summaries):
        assert summary.result_rows == first.result_rows > 0
        assert (tmp_path / f"out-{n}" / "results.csv").is_file()


async def test_billing_reference_uses_runbatchwithclient(sandbox: Sandbox, tmp_path: Path) -> None:
    await call(
        address_batch,
        input_path=EXAMPLE,
        output_dir=tmp_path / "out",
        billing_reference="RRN-0001",
        client_identifier="C-1",
        client_name="Verlag AG",
        **FAST,
    )
    assert sandbox.transport.count("/runbatchwithclient") == 1


async def test_input_without_valid_rows_fails_before_any_remote_call(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("Name;Prename;Streetname;HouseNo;ZIPCode;TownName\nMuster;Hans;;;;\n", encoding="utf-8")
    with pytest.raises(Exception, match="no row passed"):
        await call(address_batch, input_path=bad, output_dir=tmp_path / "out", **FAST)
    assert sum(sandbox.transport.calls.values()) == 0
    assert (tmp_path / "out" / "rejected.csv").is_file()


async def test_fixed_width_cp1252_input_and_a_custom_upload_format(sandbox: Sandbox, tmp_path: Path) -> None:
    widths = {"Kunde": 6, "Vorname": 10, "Nachname": 12, "Strasse": 16, "Nr": 4, "PLZ": 5, "Ort": 15}
    rows = [
        ("K-1", "Hans", "Muster", "Lindenstrasse", "12", "6010", "Kriens"),
        ("K-2", "Jürg", "Zürcher", "Mühleweg", "7", "5073", "Gipf-Oberfrick"),
    ]
    lines = [
        "".join(value.ljust(width) for value, width in zip(row, widths.values(), strict=True)) for row in rows
    ]
    source = tmp_path / "export.txt"
    source.write_bytes(("\r\n".join(lines) + "\r\n").encode("cp1252"))

    out = tmp_path / "out"
    summary = await call(
        address_batch,
        input_path=source,
        output_dir=out,
        fixed_widths=widths,
        input_encoding="cp1252",
        column_mapping={"Kunde": "", "Nr": "HouseNo"},
        upload_delimiter=";",
        upload_encoding="utf-8",
        **FAST,
    )
    assert summary.accepted_rows == 2 and summary.rejected_rows == 0
    assert (out / "upload.txt").read_bytes().decode("utf-8").splitlines()[0].startswith("RecordId;Kunde;")
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False).set_index("Kunde")
    assert results.loc["K-1", "QSTAT"] == "1"
    assert results.loc["K-2", "QSTAT"] == "1" and results.loc["K-2", "Nachname (Post)"] == "Zürcher"
    (run,) = _runs()
    assert run.parameters["upload_delimiter"] == ";"


@pytest.mark.parametrize(("setting", "prefix"), [(None, "'"), ("false", "")])
async def test_the_csv_files_follow_the_formula_guard_setting(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, prefix: str
) -> None:
    if setting is not None:
        monkeypatch.setenv("POSTFLOWS_CSV_FORMULA_GUARD", setting)
    source = tmp_path / "kunden.csv"
    source.write_text(
        "KundenNr;Vorname;Nachname;Strasse;Hausnummer;PLZ;Ort\n"
        "=1+1;Hans;Muster;Lindenstrasse;12;6010;Kriens\n@A1;Hans;Muster;Lindenstrasse;12;-601;Kriens\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    await call(address_batch, input_path=source, output_dir=out, **FAST)
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert results["KundenNr"].tolist() == [f"{prefix}=1+1"]
    rejected = read_output_csv(out / "rejected.csv", dtype=str, keep_default_na=False)
    assert rejected[["KundenNr", "values"]].values.tolist() == [[f"{prefix}@A1", "PLZ: -601"]]
    assert rejected.loc[0, "problems"] == "PLZ: Swiss postcode must be exactly 4 digits"


async def test_a_symlinked_download_folder_is_replaced_and_its_target_left_untouched(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "download").symlink_to(target, target_is_directory=True)
    await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert not (out / "download").is_symlink()
    assert [path.name for path in (out / "download").iterdir()]  # the download landed in a folder of its own
    assert list(target.iterdir()) == []
