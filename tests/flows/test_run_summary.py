"""Every run summary (returned, summary.md, the markdown artifact) lists each file the run wrote, where it
went, and the earlier work the run took up; the progress artifact keeps one key per flow."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey, FlowRunFilter, FlowRunFilterId

import history
from fileio.sandbox_marks import SUMMARY_NOTICE
from flows.address_batch import address_batch
from flows.address_validation import address_validation
from flows.newspaper_statistics import newspaper_statistics
from flows.results import RunResult
from flows.runs import recorded_run
from history.recorder import RunRecorder
from runtime.run import Run
from runtime.settings import Settings, get_settings
from tasks import progress
from tasks.progress import Progress, listening
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


def _documents(run_id: int) -> set[str]:
    """The files the history records for a run, as absolute paths."""
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        run = history.get_run(session, run_id)
        assert run is not None
        return {str(Path(document.path).resolve()) for document in run.documents}


async def _artifact(key: str) -> str:
    async with get_client() as client:
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]))
        )
    assert artifacts, key
    latest = max(artifacts, key=lambda artifact: artifact.created)
    return str(latest.data)


def _check_files(result: RunResult | dict[str, Any], out: Path) -> None:
    """Every file the run recorded is listed (absolute, existing, summary.md last) and named in summary.md."""
    summary = result.summary() if isinstance(result, RunResult) else result
    files = summary["files"]
    assert files[-1] == str((out / "summary.md").resolve())
    assert all(Path(name).is_absolute() and Path(name).is_file() for name in files)
    assert set(files) == _documents(summary["run_id"])
    text = (out / "summary.md").read_text()
    assert all(f"`{name}`" in text for name in files)


async def test_a_batch_lists_every_file_and_says_when_it_took_up_an_earlier_job(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    first = await call(address_batch, EXAMPLES / "address-batch.csv", tmp_path / "first", **FAST)
    _check_files(first, tmp_path / "first")
    names = {Path(name).name for name in first.files}
    assert {
        "upload.txt",
        "rejected.csv",
        "result.zip",
        "results.csv",
        "results.xlsx",
        "qstat.png",
        "summary.md",
    } <= names
    assert first.resumed is False and first.reused == {}
    assert "_nothing: this run did all of its work itself_" in (tmp_path / "first" / "summary.md").read_text()

    again = await call(address_batch, EXAMPLES / "address-batch.csv", tmp_path / "again", **FAST)
    _check_files(again, tmp_path / "again")
    assert again.resumed is True
    [(what, [which])] = again.reused.items()
    assert what == "address batch" and which.endswith(f"recorded by run {first.run_id}")
    text = (tmp_path / "again" / "summary.md").read_text()
    assert f"- address batch: {which}" in text
    # The artifact is summary.md without the picture beside it, which it cannot show: its bars stay.
    picture = "![QSTAT classes](qstat.png)\n\n"
    assert picture in text and (tmp_path / "again" / "qstat.png").is_file()
    assert await _artifact("address-batch-summary") == text.replace(picture, "")
    assert "| 1 Person hit |" in text


async def test_statistics_list_the_body_sent_and_a_rerun_says_it_was_uploaded_before(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = await call(newspaper_statistics, EXAMPLES / "statistics.csv", out)
    _check_files(first, out)
    assert {Path(name).name for name in first.files} == {"statistics-body.json", "summary.md"}
    again = await call(newspaper_statistics, EXAMPLES / "statistics.csv", out)
    assert again.resumed is True and list(again.reused) == ["statistics"]
    assert await _artifact("newspaper-statistics-summary") == (out / "summary.md").read_text()


async def test_rows_answered_by_an_interrupted_run_are_named_as_taken_up(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path
) -> None:
    sandbox.inject(
        api="commerce", endpoint="*addresses/validation", kind="http_status", value=503, after=1, times=2
    )
    source = EXAMPLES / "commerce-addresses.csv"
    first = await call(address_validation, input_path=source, output_dir=tmp_path / "first", concurrency=1)
    assert first.failed == 1 and first.resumed is False
    again = await call(address_validation, input_path=source, output_dir=tmp_path / "again", concurrency=1)
    _check_files(again, tmp_path / "again")
    assert again.resumed is True
    assert again.reused == {
        "validation answers": [f"{again.resumed_rows} rows from an interrupted run's checkpoint"]
    }


async def test_a_run_without_an_output_dir_still_lists_what_it_recorded(
    flow_env: Path, tmp_path: Path
) -> None:
    written = tmp_path / "elsewhere" / "note.txt"
    written.parent.mkdir()
    written.write_text("x")

    @flow(name="summary-probe")
    async def probe() -> dict[str, Any]:
        async with recorded_run(Run.begin("summary-probe"), idempotency_key=None, parameters={}) as (
            recorder,
            summary,
        ):
            await recorder.document("note", written)
            await recorder.document("note again", written)  # one file is listed once
            assert await summary.publish("# Probe\n", None, description="probe") is None
            return dict(summary)

    summary = await probe()
    assert summary["files"] == [str(written.resolve())] and summary["resumed"] is False
    artifact = await _artifact("summary-probe-summary")
    assert artifact.startswith("# Probe\n\n## Output files\n") and f"`{written.resolve()}` (note)" in artifact


async def _progress_artifacts(runs: list[Any]) -> list[Any]:
    """The progress artifacts of these runs only: the server holds every flow test's artifacts."""
    async with get_client() as client:
        artifacts = await client.read_artifacts(
            flow_run_filter=FlowRunFilter(
                id=FlowRunFilterId(any_=[run.state_details.flow_run_id for run in runs])
            )
        )
    return [artifact for artifact in artifacts if artifact.type == "progress"]


async def test_progress_keeps_one_artifact_key_per_flow(
    flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.0)

    @flow(name="progress-probe")
    async def probe() -> None:
        for label in ("address queries (12 records)", "batch job 3f2a"):
            tracked = await Progress.start(label)
            await tracked.update(100.0)

    artifacts = await _progress_artifacts([await probe(return_state=True), await probe(return_state=True)])
    assert {artifact.key for artifact in artifacts} == {"progress-probe-progress"}
    assert len(artifacts) >= 2


async def test_progress_is_shown_only_for_work_that_lasts(
    flow_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Work done sooner than ``SHOW_AFTER_S`` makes no progress artifact (its listeners still hear every
    update); work that lasts shows from its first update after that and ends on 100 %."""
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.3)
    heard: list[tuple[str, float]] = []

    @flow(name="progress-short")
    async def short() -> None:
        tracked = await Progress.start("batch job 1")
        await tracked.update(50.0)
        await tracked.update(100.0)

    @flow(name="progress-long")
    async def long() -> None:
        tracked = await Progress.start("batch job 2")
        await tracked.update(10.0)
        await asyncio.sleep(0.35)
        await tracked.update(60.0)
        await tracked.update(100.0)

    with listening(lambda label, percent, _detail: heard.append((label, percent))):
        short_run = await short(return_state=True)
        long_run = await long(return_state=True)
    assert await _progress_artifacts([short_run]) == []
    shown = await _progress_artifacts([long_run])
    assert [(artifact.key, artifact.data) for artifact in shown] == [("progress-long-progress", 100.0)]
    assert heard == [
        ("batch job 1", 0.0),
        ("batch job 1", 50.0),
        ("batch job 1", 100.0),
        ("batch job 2", 0.0),
        ("batch job 2", 10.0),
        ("batch job 2", 60.0),
        ("batch job 2", 100.0),
    ]


@pytest.mark.parametrize("service_url", [None, "https://real.example/REST/v1"])
async def test_a_sandbox_run_says_so_first_and_a_run_against_the_service_does_not(
    service_url: str | None, flow_env: Path, tmp_path: Path
) -> None:
    settings = Settings(address_service_url=service_url) if service_url else Settings()
    sandbox = service_url is None
    run = Run.begin("sandbox-probe", ("address-service",), settings)
    assert run.sandbox is sandbox
    assert Run.begin("history-report", (), settings).sandbox is False  # a flow that calls no API

    @flow(name="sandbox-probe")
    async def probe() -> dict[str, Any]:
        async with recorded_run(run, idempotency_key=None, parameters={}) as (recorder, summary):
            assert recorder.outputs.sandbox is summary.sandbox is sandbox
            await summary.publish("# Probe\n", tmp_path / "out", description="probe")
            return dict(summary)

    (tmp_path / "out").mkdir()
    summary = await probe()
    assert summary["sandbox"] is sandbox
    text = (tmp_path / "out" / "summary.md").read_text()
    artifact = await _artifact("sandbox-probe-summary")
    if sandbox:
        assert text.startswith(SUMMARY_NOTICE + "\n\n# Probe\n") and artifact.startswith(SUMMARY_NOTICE)
    else:
        assert text.startswith("# Probe\n") and SUMMARY_NOTICE not in artifact


async def test_a_failed_artifact_request_still_leaves_the_summary_recorded(
    flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The artifact's request goes out beside the summary's history write: when it fails at once, the
    write still ends before the run fails with the request's error."""

    async def refused(markdown: str, *, key: str, description: str) -> None:
        raise RuntimeError("artifact refused")

    slow_write = RunRecorder.document

    async def slow_document(self: RunRecorder, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.2)  # the write still under way when the artifact's request fails
        return await slow_write(self, *args, **kwargs)

    monkeypatch.setattr("flows.runs._artifact", refused)
    monkeypatch.setattr(RunRecorder, "document", slow_document)
    run_ids: list[int] = []

    @flow(name="summary-refused-probe")
    async def probe() -> None:
        async with recorded_run(Run.begin("summary-refused-probe"), idempotency_key=None, parameters={}) as (
            recorder,
            summary,
        ):
            run_ids.append(recorder.run_id)
            try:
                await summary.publish("# Probe\n", tmp_path, description="probe")
            except RuntimeError:
                recorded_when_raised.append(_documents(recorder.run_id))
                raise

    recorded_when_raised: list[set[str]] = []
    with pytest.raises(RuntimeError, match="artifact refused"):
        await probe()
    [run_id] = run_ids
    assert recorded_when_raised == [{str((tmp_path / "summary.md").resolve())}]
    factory = history.session_factory(get_settings().effective_database_url)
    with factory() as session:
        run = history.get_run(session, run_id)
        assert run is not None and run.state == "FAILED" and "artifact refused" in (run.error or "")
