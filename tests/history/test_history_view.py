"""The CLI's rendering of the history (the list of runs, rich for one run), from a real database, never
showing a secret."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import SecretStr
from rich.console import Console, RenderableType
from sqlalchemy.orm import Session, sessionmaker

from history import (
    Run,
    StepRecord,
    finish_run,
    get_run,
    list_runs,
    record_document,
    record_message,
    record_step,
    save_remote_job,
    start_run,
    update_remote_job,
)
from history.remote_jobs import JobChange, RemoteReport
from postflows.history_view import run_detail
from postflows.run_table import runs_text

SECRETS = ("hunter2-password", "client-secret-value", "wrapped-secret-value", "bearer-abc")


def _render(renderable: RenderableType) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(renderable)
    return console.export_text()


def _populated_run(factory: sessionmaker[Session], tmp_path: Path) -> Run:
    pdf = tmp_path / "invoice.pdf"
    pdf.write_bytes(b"x" * 3000)
    with factory.begin() as session:
        run = start_run(
            session,
            flow="purchase-newspapers",
            idempotency_key="order-2026-05",
            flow_run_id="3f1c-flow-run",
            parameters={
                "edition": "2026-05-01",
                "password": SECRETS[0],
                "newspaper": {"client_secret": SECRETS[1], "client_id": "cid"},
                "login": SecretStr(SECRETS[2]),
                "headers": {"Authorization": SECRETS[3]},
            },
        )
        record_step(
            session,
            run,
            StepRecord(name="newspaper.upload-file", outcome="retried", duration_s=0.4, detail="503"),
        )
        record_step(
            session, run, StepRecord(name="newspaper.upload-file", outcome="ok", duration_s=1.2, attempt=2)
        )
        job = save_remote_job(
            session,
            run,
            api="newspaper",
            kind="order",
            remote_id="ORD-77",
            change=JobChange(status="SUBMITTED", report=RemoteReport(progress=0)),
        )
        update_remote_job(
            session,
            job,
            JobChange(status="RUNNING", report=RemoteReport(remote_status="LOADED", progress=50)),
        )
        update_remote_job(
            session,
            job,
            JobChange(
                status="COMPLETED", report=RemoteReport(remote_status="DONE", progress=100), finished=True
            ),
        )
        record_document(session, run, kind="invoice-pdf", path=pdf, remote_job=job)
        record_message(session, run, level="warning", code="W-12", text="Edition delivered late")
        finish_run(session, run, state="FAILED", error="AuthFailed: client rejected", summary={"orders": 1})
    return run


def test_the_list_of_runs_shows_stored_runs(history_factory: sessionmaker[Session], tmp_path: Path) -> None:
    run = _populated_run(history_factory, tmp_path)
    with history_factory.begin() as session:
        start_run(session, flow="address-check")
        runs = list_runs(session)

    text = runs_text(runs)

    for column in ("id", "flow", "state", "started", "duration", "key", "flow run"):
        assert column in text
    assert "purchase-newspapers" in text and "address-check" in text
    assert "FAILED" in text and "RUNNING" in text
    assert "order-2026-05" in text and "3f1c-flow-run" in text
    assert run.started_at.strftime("%Y-%m-%d %H:%M") in text


def test_run_detail_shows_everything_but_secrets(
    history_factory: sessionmaker[Session], tmp_path: Path
) -> None:
    run = _populated_run(history_factory, tmp_path)
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
    assert stored is not None

    text = _render(run_detail(stored))

    assert f"Run {run.id}" in text and "purchase-newspapers" in text and "FAILED" in text
    assert "AuthFailed: client rejected" in text
    assert re.search(r"edition\s+2026-05-01", text)
    assert '"client_id": "cid"' in text and '"client_secret": "**********"' in text
    assert re.search(r"password\s+\*{10}", text)
    assert re.search(r"orders\s+1", text)
    assert "newspaper.upload-file" in text and "retried" in text and "503" in text
    assert "newspaper order ORD-77" in text
    # Our state of the job beside the service's own status, event by event.
    assert re.search(r"RUNNING\s+LOADED", text) and re.search(r"COMPLETED\s+DONE", text)
    assert "state COMPLETED" in text and "service status DONE" in text
    assert "50%" in text and "100%" in text
    assert "invoice-pdf" in text and "2.9 KiB" in text and stored.documents[0].sha256[:12] in text
    assert "W-12" in text and "Edition delivered late" in text
    for secret in SECRETS:
        assert secret not in text


def test_run_detail_of_a_bare_run(history_factory: sessionmaker[Session]) -> None:
    with history_factory.begin() as session:
        run = start_run(session, flow="bare")
    with history_factory.begin() as session:
        stored = get_run(session, run.id)
    assert stored is not None

    text = _render(run_detail(stored))

    assert "bare" in text and "RUNNING" in text
    assert "Steps" not in text and "Documents" not in text and "Messages" not in text
