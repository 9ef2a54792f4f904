"""Statistics transmission: records from a .csv/.xlsx file, checked against §2.6 (rejected rows reported,
none lost) → POST once per file and key; whether the submission closes its AZ quarter, AZA semester or AZB
year is decided from the issue calendar. Without a file (or given a folder) the flow sends what waits in the
statistics inbox, each file as its own run: that is what the scheduled runs do.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger

import flows.heap  # noqa: F401  (first: Prefect loaded, its heap frozen)
from core.errors import PostflowsError
from fileio.errors import InputError
from fileio.files import make_dirs
from fileio.newspaper.intervals import (
    StatisticsInterval,
    closing_intervals,
    last_issue_in_period,
    next_issue_in_period,
)
from fileio.newspaper.outputs import summary_markdown, write_json
from fileio.newspaper.statistics_inbox import inbox_calendar, inbox_files, move_to_sent, statistics_inbox
from fileio.newspaper.statistics_input import StatisticsInput
from fileio.rejected_rows import write_rejected
from flows.early_failures import ON_FAILURE
from flows.forms import form
from flows.naming import parameter_value, run_name
from flows.requests import OptionalOutputOptions, StatisticsRequest
from flows.requests.newspaper import ANY_INTERVAL
from flows.results import RunResult
from flows.runs import RunSummary, begin_run, recorded_run
from flows.sweep_results import SweepResult
from history.identity import body_key, derive_key
from history.models import JobState
from history.recorder import RunRecorder
from runtime.run import Run
from tasks.newspaper.statistics import (
    StatisticsJobData,
    read_calendar,
    read_statistics_file,
    submit_statistics,
)
from tasks.newspaper.submissions import WarningLog, body_fingerprint, newspaper_context, submit_newspaper
from tasks.submission import SubmissionJob

FLOW_NAME = "newspaper-statistics"


def _inbox_words(parameters: Mapping[str, Any]) -> str | None:
    """``inbox-AZ`` for a run that sends the statistics inbox, for the run's name."""
    if parameter_value(parameters, "request.input_path"):
        return None
    interval = str(parameter_value(parameters, "request.interval") or "")
    return f"inbox-{interval}" if interval and interval != ANY_INTERVAL else "inbox"


class InboxNotSent(PostflowsError):
    """Files of the statistics inbox failed; each keeps its place in the inbox for the next run."""


class StatisticsResult(RunResult):
    """What a statistics run did with its file: rows read, accepted and rejected, the submission's day and
    which periods it closes (interval → whether it is the last submission of its period); for a file sent,
    the service's confirmation and the API's warnings; for one not due, ``sent`` false, why (``not_due``)
    and the day the period's statistics are due on."""

    input_rows: int
    accepted_rows: int
    rejected_rows: int
    submission_date: str
    closes: dict[str, bool]
    confirmation: str | None = None
    warnings: list[str] | None = None
    sent: bool | None = None
    not_due: str | None = None
    due_on: str | None = None

    def summary(self) -> dict[str, Any]:
        """The result as JSON values; a file sent names its confirmation even when none is known."""
        values = super().summary()
        if self.not_due is None:
            values.setdefault("confirmation", None)
        return values


class StatisticsInboxResult(SweepResult):
    """What a run over a folder of statistics files did: per file, where it was moved once sent, or why it
    is not due yet (it stays); ``failed`` names the files that failed (the run then fails, so a result holds
    none)."""

    inbox: str
    sent: dict[str, str]
    not_due: dict[str, str]
    failed: dict[str, str]


@flow(
    on_failure=ON_FAILURE,
    name=FLOW_NAME,
    log_prints=False,
    flow_run_name=run_name(FLOW_NAME, "request.input_path", _inbox_words),
)
async def newspaper_statistics(
    request: Annotated[
        StatisticsRequest,
        form("Statistics", "The statistics file (or folder), the issue calendar and the interval to check."),
    ] = StatisticsRequest(),  # noqa: B008 - an immutable part, the form's default
    output: Annotated[
        OptionalOutputOptions, form("Output", "Where the results go on the worker.")
    ] = OptionalOutputOptions(),  # noqa: B008
) -> StatisticsResult | StatisticsInboxResult:
    """Check and transmit a statistics file.

    A folder, or no file, sends every file waiting there (no file: the statistics inbox), each as its own
    run, and moves each file sent into ``sent/``. With an interval (AZ, AZA or AZB), a file is sent only
    when its submission is the last of its period by the issue calendar. The key defaults to a hash of the
    statistics sent and the service; the same key is never posted twice.

    Args:
        request: the statistics file (§2.6 columns or German aliases) or a folder, the issue calendar, the
            submission date, the interval, the key and whether to post again.
        output: where rejected.csv, the body sent and summary.md go (default: data dir/statistics/<file>;
            for a folder, a sub-folder per file).

    Returns:
        One file: the run's result (accepted and rejected rows, interval decisions, the service's
        confirmation). A folder: per file, whether it was sent or is not due yet.
    """
    run = begin_run(FLOW_NAME)
    settings = run.settings
    input_path, interval = request.input_path, request.interval
    if input_path is None or Path(input_path).is_dir():
        inbox = (
            Path(input_path)
            if input_path is not None
            else statistics_inbox(settings.data_dir, StatisticsInterval(interval) if interval else None)
        )
        return await _send_inbox(inbox, request, output_dir=output.output_dir)
    input_path = Path(input_path)
    output_dir = output.folder_or(settings.data_dir / "statistics" / input_path.stem)
    if not input_path.is_file():
        raise InputError("statistics file not found", path=input_path)
    return await _send_file(run, request, input_path, output_dir)


async def _send_file(
    run: Run, request: StatisticsRequest, input_path: Path, output_dir: Path
) -> StatisticsResult:
    """Check one statistics file and post it once, when due (a run of its own)."""
    interval = request.interval
    key = request.idempotency_key or derive_key(
        FLOW_NAME,
        endpoint=run.endpoint("newspaper"),
        files=(input_path,),
        parameters=request.identity(),
    )
    parameters: dict[str, Any] = {"input_path": input_path, "output_dir": output_dir, "interval": interval}
    parameters.update(calendar_path=request.calendar_path, resubmit=request.resubmit)
    async with recorded_run(run, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        checked = await _read(run, recorder, summary, input_path, output_dir)
        calendar, day = _calendar_and_day(run, request, checked)
        closes = closing_intervals(calendar, day) if calendar else {}
        summary.update(submission_date=day.isoformat(), closes={str(k): v for k, v in closes.items()})
        if interval is not None and not _closes(closes, StatisticsInterval(interval), input_path):
            chosen = StatisticsInterval(interval)
            await _not_due(recorder, summary, calendar, day, chosen, input_path, output_dir)
            return summary.result(StatisticsResult)
        body = checked.submission.to_body()
        await recorder.document("statistics-body", write_json(output_dir, "statistics-body", body))
        if request.idempotency_key is None:
            await recorder.rekey(body_key(FLOW_NAME, endpoint=run.endpoint("newspaper"), body=body))
            key = recorder.idempotency_key or key
        summary.update(idempotency_key=key)
        warnings = WarningLog(recorder)
        resumed, confirmation = await _submit(
            run, recorder, warnings, checked, key, input_path, request.resubmit
        )
        facts = _facts(
            input_path, checked, day, closes, sent="no, uploaded by an earlier run" if resumed else "yes"
        )
        summary.update(confirmation=confirmation, warnings=warnings.lines)
        text = summary_markdown(
            f"Statistics {input_path.name}", {**facts, "confirmation": confirmation}, warnings.lines
        )
        await summary.publish(text, output_dir, description="Statistics")
        return summary.result(StatisticsResult)


def _closes(closes: Mapping[StatisticsInterval, bool], chosen: StatisticsInterval, input_path: Path) -> bool:
    """Whether the submission is the last of its ``chosen`` period (an empty ``closes``: no calendar)."""
    if not closes:
        raise InputError("an interval needs the issue calendar (calendar file or dates)", path=input_path)
    return closes[chosen]


def _facts(
    input_path: Path,
    checked: StatisticsInput,
    day: dt.date,
    closes: Mapping[StatisticsInterval, bool],
    *,
    sent: str,
) -> dict[str, Any]:
    """What summary.md tells of a file sent."""
    return {
        "file": input_path.name,
        "rows": checked.input_rows,
        "accepted": len(checked.records),
        "rejected": checked.rejected_rows,
        "submission date": day.isoformat(),
        "sent": sent,
        **{f"last of its {k.value} period": "yes" if v else "no" for k, v in closes.items()},
    }


def _calendar_and_day(
    run: Run, request: StatisticsRequest, checked: StatisticsInput
) -> tuple[list[dt.date], dt.date]:
    """The issue calendar (the dates given and the calendar file's) and the submission's day (given, else
    the file's latest deliveryDate)."""
    calendar = list(request.issue_calendar or [])
    if request.calendar_path is not None:
        calendar += read_calendar(Path(request.calendar_path), limits=run.settings.table_limits)
    day = request.submission_date or max(
        record.delivery_date for _, record in checked.records if record.delivery_date
    )
    return calendar, day


async def _read(
    run: Run, recorder: RunRecorder, summary: RunSummary, input_path: Path, output_dir: Path
) -> StatisticsInput:
    """Read and check the statistics file; rejected rows into rejected.csv. Fails when no row passed."""
    settings = run.settings
    async with recorder.step("read statistics"):
        checked = read_statistics_file(input_path, limits=settings.table_limits)
    rejected_path = write_rejected(
        checked.rejected_report, output_dir / "rejected.csv", style=settings.csv_style
    )
    if rejected_path is not None:
        await recorder.document("rejected-rows", rejected_path)
        get_run_logger().warning("%d statistics rows rejected, see %s", checked.rejected_rows, rejected_path)
    summary.update(
        input_rows=checked.input_rows,
        accepted_rows=len(checked.records),
        rejected_rows=checked.rejected_rows,
    )
    if not checked.records:
        raise InputError(
            f"no statistics row passed the checks; see {output_dir / 'rejected.csv'}", path=input_path
        )
    return checked


async def _not_due(
    recorder: RunRecorder,
    summary: RunSummary,
    calendar: list[dt.date],
    day: dt.date,
    chosen: StatisticsInterval,
    input_path: Path,
    output_dir: Path,
) -> None:
    """End the run without sending: ``day`` is not the last submission of its period."""
    following = next_issue_in_period(calendar, day, chosen)
    due = last_issue_in_period(calendar, day, chosen)
    note = (
        f"not due: {day} is not the last submission of its {chosen.value} period, so nothing was sent; the "
        f"next issue is on {following}, and the period's statistics are due with the submission of {due}"
    )
    summary.update(sent=False, not_due=note, due_on=due.isoformat())
    await recorder.message("info", "not-due", note)
    get_run_logger().info("%s", note)
    await summary.publish(
        summary_markdown(f"Statistics {input_path.name}: not due", {"not due": note}, []),
        output_dir,
        description="Statistics",
    )


async def _submit(
    run: Run,
    recorder: RunRecorder,
    warnings: WarningLog,
    checked: StatisticsInput,
    key: str,
    input_path: Path,
    resubmit: bool,
) -> tuple[bool, Any]:
    """Post the statistics once (or find the recorded upload); whether it was resumed, and the service's
    confirmation."""
    body = checked.submission.to_body()
    async with run.newspaper(recorder.request_log) as client:
        submission = await submit_newspaper(
            newspaper_context(recorder, resubmit=resubmit),
            warnings,
            SubmissionJob(
                "statistics",
                "statistics",
                hint="ask the service whether the statistics of this file arrived",
                data=StatisticsJobData(records=len(checked.records), file=str(input_path)),
                fingerprint=body_fingerprint(body),
            ),
            lambda: submit_statistics(client, checked.submission),
            lambda _confirmation: f"uploaded:{key}",
        )
    if submission.answer is None:
        return submission.resumed, submission.job.facts(StatisticsJobData).confirmation
    confirmation = str(submission.answer.value)
    await recorder.update_job(
        submission.job,
        status=JobState.COMPLETED,
        finished=True,
        data=StatisticsJobData(confirmation=confirmation),
    )
    await recorder.message("info", "statistics", f"service confirmation: {confirmation}")
    return submission.resumed, confirmation


async def _send_inbox(
    inbox: Path, request: StatisticsRequest, *, output_dir: Path | None
) -> StatisticsInboxResult:
    """Send every file of ``inbox``, oldest first, each as a run of this flow; sent files move to ``sent/``,
    files not due yet or failing stay. Fails when one failed (the others are sent all the same)."""
    logger = get_run_logger()
    make_dirs(inbox)
    calendar = request.calendar_path if request.calendar_path is not None else inbox_calendar(inbox)
    files = inbox_files(inbox)
    sent: dict[str, str] = {}
    not_due: dict[str, str] = {}
    failed: dict[str, str] = {}
    if not files:
        logger.info("the statistics inbox %s is empty: nothing to send", inbox)
    for path in files:
        try:
            outcome = await newspaper_statistics(
                request=request.model_copy(update={"input_path": path, "calendar_path": calendar}),
                output=OptionalOutputOptions(
                    output_dir=None if output_dir is None else output_dir / path.stem
                ),
            )
        except Exception as error:  # noqa: BLE001 - one file's failure must not stop the others
            failed[path.name] = f"{type(error).__name__}: {error}"
            logger.error("%s failed and stays in the inbox: %s", path.name, error)
            continue
        if isinstance(outcome, StatisticsResult) and outcome.not_due:
            not_due[path.name] = outcome.not_due
            logger.info("%s stays in the inbox: %s", path.name, outcome.not_due)
        else:
            sent[path.name] = str(move_to_sent(path))
            logger.info("%s sent; moved to %s", path.name, sent[path.name])
    if failed:
        names = ", ".join(sorted(failed))
        raise InboxNotSent(f"{len(failed)} of {len(files)} statistics files in {inbox} failed: {names}")
    return StatisticsInboxResult(inbox=str(inbox), sent=sent, not_due=not_due, failed=failed)
