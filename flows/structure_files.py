"""Structure files: download fileCode 1 (AZ/GZA), 2 (AZA/AZB) or 9 (both), record a file as new only when
its content changed, and optionally register the e-mail address for notices of new versions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from prefect import flow, get_run_logger
from pydantic import BaseModel

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from connectors.newspaper import NewspaperClient, StructureFileCode
from connectors.newspaper.errors import FieldProblem
from connectors.newspaper.validation import ensure_valid
from connectors.validation import email_problem
from fileio.lazy import lazy_module
from fileio.newspaper.outputs import summary_markdown
from fileio.reports import write_csv
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import run_name
from flows.requests import OwnOutputOptions, StructureFilesRequest
from flows.results import RunResult
from flows.runs import RunSummary, begin_run, recorded_run
from history.identity import named_key
from history.models import JobState
from history.recorder import RunRecorder
from runtime.run import Run
from tasks.newspaper.structure_files import (
    DOCUMENT_KIND,
    NoticeEmailJobData,
    StructureFile,
    confirmation_text,
    download_structure_files,
    register_notice_email,
)
from tasks.newspaper.submissions import API as NEWSPAPER_API
from tasks.newspaper.submissions import WarningLog, newspaper_context, submit_newspaper
from tasks.retrying import run_step
from tasks.submission import SubmissionJob

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

FLOW_NAME = "structure-files"


class ListedFile(BaseModel):
    """One structure file of a run: its name, where it was written, its SHA-256 and whether its content is
    new (differs from every earlier download)."""

    name: str
    path: str
    sha256: str
    new: bool


class StructureFilesResult(RunResult):
    """What a structure files run downloaded: the file code, each file, how many are new, the address
    registered for notices of new versions and the service's confirmation (both null when no address was
    given), and the API's warnings."""

    file_code: int
    structure_files: list[ListedFile]
    new_files: int
    notice_email: str | None
    confirmation: str | None
    warnings: list[str]

    def summary(self) -> dict[str, Any]:
        """The result as JSON values; ``notice_email`` and ``confirmation`` are there even when null."""
        return {**super().summary(), "notice_email": self.notice_email, "confirmation": self.confirmation}


@dataclass(frozen=True)
class _Notice:
    """The address a run registers for notices of new structure file versions (none: no registration),
    whether to register it again, and the service's confirmation once registered."""

    email: str | None
    resubmit: bool = False
    confirmation: str | None = None


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(FLOW_NAME, "request.file_code"),
)
async def structure_files(
    request: Annotated[
        StructureFilesRequest,
        form("Structure files", "Which files, and an address for notices of new versions."),
    ] = StructureFilesRequest(),  # noqa: B008 - an immutable part, the form's default
    output: Annotated[
        OwnOutputOptions, form("Output", "Where the files go on the worker.")
    ] = OwnOutputOptions(),  # noqa: B008
) -> StructureFilesResult:
    """Download the structure files of one file code.

    Args:
        request: the file code (1 = AZ/GZA, 2 = AZA/AZB, 9 = both, the default); an address to register
            as recipient of notices about new structure file versions (once: a later run with the same
            address does not send it again); whether to register it although an earlier request may have
            reached the service.
        output: where the files, structure-files.csv and summary.md go (default: data
            dir/structure-files/<file code>).

    Returns:
        The run's result: each file with its size, SHA-256 and whether it is new.
    """
    run = begin_run(FLOW_NAME)
    code = StructureFileCode(int(request.file_code))
    notice = _Notice(request.notify_email, request.resubmit)
    output_dir = output.folder_or(run.settings.data_dir / "structure-files" / str(int(code)))
    if notice.email is not None and (problem := email_problem(notice.email)):
        ensure_valid("structure file e-mail", [FieldProblem("email", problem)])
    parameters = {
        "file_code": int(code),
        "output_dir": output_dir,
        "notify_email": notice.email,
        "resubmit": notice.resubmit,
    }
    async with recorded_run(
        run,
        idempotency_key=named_key(f"{FLOW_NAME}:{int(code)}", endpoint=run.endpoint("newspaper")),
        parameters=parameters,
    ) as (recorder, summary):
        warnings = WarningLog(recorder)
        files, notice = await _download(run, recorder, warnings, code, output_dir, notice)
        await _record_files(run, recorder, files, output_dir)
        text = _summarise(summary, code, files, notice, warnings)
        await summary.publish(text, output_dir, description="Structure files")
        result = summary.result(StructureFilesResult)
        get_run_logger().info("%d structure files, %d new", len(files), result.new_files)
        return result


async def _download(
    run: Run,
    recorder: RunRecorder,
    warnings: WarningLog,
    code: StructureFileCode,
    output_dir: Path,
    notice: _Notice,
) -> tuple[list[StructureFile], _Notice]:
    """Download the files of ``code`` into ``output_dir`` and register the notice address (when given);
    the files, and the notice with the service's confirmation."""
    settings = run.settings
    async with run.newspaper(recorder.request_log) as client:
        files, file_warnings = await run_step(
            download_structure_files,
            client,
            code,
            output_dir,
            settings.effective_database_url,
            max_bytes=settings.download_max_bytes,
            max_ratio=settings.zip_max_ratio,
        )
        await warnings.add("structure files", file_warnings)
        if notice.email is not None:
            confirmation = await _register(client, recorder, warnings, notice.email, resubmit=notice.resubmit)
            notice = replace(notice, confirmation=confirmation)
    return files, notice


async def _record_files(
    run: Run, recorder: RunRecorder, files: list[StructureFile], output_dir: Path
) -> None:
    """Record the files, and write and record structure-files.csv."""
    for file in files:
        if file.new:
            await recorder.document(DOCUMENT_KIND, file.path)
        else:
            await recorder.document(f"{DOCUMENT_KIND}, unchanged", file.path)
            await recorder.message(
                "info", "unchanged", f"{file.name}: content unchanged ({file.sha256[:12]})"
            )
    listing = pd.DataFrame(
        [{"file": f.name, "size": f.size, "sha256": f.sha256, "new": f.new} for f in files],
        columns=["file", "size", "sha256", "new"],
    )
    listed = write_csv(listing, output_dir / "structure-files.csv", style=run.settings.csv_style)
    await recorder.document("listing", listed)


def _summarise(
    summary: RunSummary,
    code: StructureFileCode,
    files: list[StructureFile],
    notice: _Notice,
    warnings: WarningLog,
) -> str:
    """Fill the summary; the text of summary.md."""
    facts: dict[str, Any] = {"file code": f"{int(code)} ({code.name})"}
    facts.update({file.name: "new" if file.new else "unchanged" for file in files})
    if notice.email is not None:
        facts["notice e-mail"] = f"{notice.email}: {notice.confirmation}"
    summary.update(
        file_code=int(code),
        structure_files=[
            {"name": f.name, "path": str(f.path), "sha256": f.sha256, "new": f.new} for f in files
        ],
        new_files=sum(f.new for f in files),
        notice_email=notice.email,
        confirmation=notice.confirmation,
        warnings=warnings.lines,
    )
    return summary_markdown(f"Structure files, fileCode {int(code)}", facts, warnings.lines)


async def _register(
    client: NewspaperClient, recorder: RunRecorder, warnings: WarningLog, email: str, *, resubmit: bool
) -> str:
    """Register the notice address at most once per address, whatever the file code (each file code is
    its own work); returns the service's confirmation."""
    what = "notice e-mail registration"
    remote_id = f"notice-email:{email}"
    registered = await recorder.job_with_remote_id(
        api=NEWSPAPER_API, kind="notice-email", remote_id=remote_id
    )
    if registered is not None and registered.state is JobState.COMPLETED:
        recorder.note_reused(what, f"{email}, recorded by run {registered.run_id}")
        return str(registered.facts(NoticeEmailJobData).confirmation)
    submission = await submit_newspaper(
        newspaper_context(recorder, resubmit=resubmit),
        warnings,
        SubmissionJob(
            "notice-email",
            what,
            hint=f"check whether notices of new structure files reach {email}",
            data=NoticeEmailJobData(email=email),
            resumable=lambda job: (
                job.state is JobState.COMPLETED and job.facts(NoticeEmailJobData).email == email
            ),
        ),
        lambda: register_notice_email(client, email),
        lambda _confirmation: remote_id,
    )
    if submission.answer is None:
        return str(submission.job.facts(NoticeEmailJobData).confirmation)
    confirmation = confirmation_text(submission.answer.value)
    await recorder.update_job(
        submission.job,
        status=JobState.COMPLETED,
        finished=True,
        data=NoticeEmailJobData(confirmation=confirmation),
    )
    await recorder.message("info", "notice-email", f"{email} registered: {confirmation}")
    return confirmation
