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
from pydantic import BeforeValidator, WithJsonSchema

from connectors.errors import PostflowsError
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
from fileio.rejected_rows import write_rejected
from flows.forms import Blank, BlankDate, blank_to_none, form
from flows.naming import run_name
from flows.runs import recorded_run
from history.identity import body_key, derive_key
from history.models import JobState
from postflows.settings import get_settings
from postflows.wiring import newspaper_client, newspaper_endpoint
from tasks.newspaper.statistics import (
    StatisticsJobData,
    read_calendar,
    read_statistics_file,
    submit_statistics,
)
from tasks.newspaper.submissions import WarningLog, body_fingerprint, submit_newspaper

FLOW_NAME = "newspaper-statistics"


ANY_INTERVAL = "any"


def _interval(value: Any) -> Any:
    return None if isinstance(value, str) and value.strip().lower() == ANY_INTERVAL else blank_to_none(value)


IntervalChoice = Annotated[
    StatisticsInterval | None,
    BeforeValidator(_interval),
    WithJsonSchema({"type": "string", "enum": [ANY_INTERVAL, *(i.value for i in StatisticsInterval)]}),
]


def _inbox_words(parameters: Mapping[str, Any]) -> str | None:
    """``inbox-AZ`` for a run that sends the statistics inbox, for the run's name."""
    if parameters.get("input_path"):
        return None
    interval = str(parameters.get("interval") or "")
    return f"inbox-{interval}" if interval and interval != ANY_INTERVAL else "inbox"


class InboxNotSent(PostflowsError):
    """Files of the statistics inbox failed; each keeps its place in the inbox for the next run."""


@flow(name=FLOW_NAME, log_prints=False, flow_run_name=run_name(FLOW_NAME, "input_path", _inbox_words))
async def newspaper_statistics(
    input_path: Annotated[
        Blank[Path],
        form(
            "Statistics file",
            "The statistics records, a .csv or .xlsx file on the worker (§2.6 column names or German "
            "aliases). A folder, or empty, sends every file waiting there, each as its own run; empty is the "
            "statistics inbox <data dir>/inbox/newspaper-statistics/<interval>.",
            blank="",
        ),
    ] = None,
    output_dir: Annotated[
        Blank[Path],
        form(
            "Output folder",
            "Folder on the worker for rejected.csv, the body sent and summary.md. Empty: "
            "<data dir>/statistics/<file name>.",
            blank="",
        ),
    ] = None,
    calendar_path: Annotated[
        Blank[Path],
        form(
            "Issue calendar file",
            "The year's issue calendar (.csv/.xlsx with a deliveryDate or date column), needed to check an "
            "interval. Empty: none, or for a folder its calendar.csv or calendar.xlsx.",
            blank="",
        ),
    ] = None,
    issue_calendar: Annotated[
        Blank[list[dt.date]],
        form(
            "Issue dates", "The issue calendar as dates, instead of (or besides) a calendar file.", blank=[]
        ),
    ] = None,
    submission_date: Annotated[
        BlankDate,
        form(
            "Submission date",
            "The submission the statistics belong to, YYYY-MM-DD. Empty: the file's latest deliveryDate.",
            blank="",
        ),
    ] = None,
    interval: Annotated[
        IntervalChoice,
        form(
            "Interval",
            "AZ (quarter), AZA (semester) or AZB (year): send only when this submission is the last of its "
            "period. any: no such check.",
            blank=ANY_INTERVAL,
        ),
    ] = None,
    idempotency_key: Annotated[
        Blank[str],
        form(
            "Idempotency key",
            "Identifies the upload. Empty: a hash of the statistics sent (the JSON body) and the service. "
            "The same key is never posted twice.",
            blank="",
        ),
    ] = None,
    resubmit: Annotated[
        bool,
        form("Send again", "Post although an earlier POST of this upload may have reached the service."),
    ] = False,
) -> dict[str, Any]:
    """Check and transmit a statistics file.

    Args:
        input_path: the statistics records (.csv or .xlsx, §2.6 column names or German aliases); a folder,
            or none, sends every file waiting there, each as its own run, and moves each file sent into
            ``sent/`` (none: the statistics inbox, data dir/inbox/newspaper-statistics/<interval>).
        output_dir: where rejected.csv, the body sent and summary.md go (default: data dir/statistics/<file>;
            for a folder, a sub-folder per file).
        calendar_path: the year's issue calendar (.csv/.xlsx, a deliveryDate/date column); for a folder,
            its calendar.csv or calendar.xlsx when not given.
        issue_calendar: the issue calendar as dates (instead of a file).
        submission_date: the submission the statistics belong to (default: the latest deliveryDate).
        interval: AZ, AZA or AZB: refuse to transmit unless this submission is the last of its interval
            (``any``: no check).
        idempotency_key: identifies the upload; defaults to a hash of the statistics sent (the canonical
            JSON body) and the service's address and client id. The same key is never posted twice.
        resubmit: post even though an earlier POST of this upload may have reached the service.

    Returns:
        The run summary: accepted and rejected rows, interval decisions, the service's confirmation.
    """
    settings = get_settings()
    if input_path is None or Path(input_path).is_dir():
        inbox = (
            Path(input_path)
            if input_path is not None
            else statistics_inbox(settings.data_dir, StatisticsInterval(interval) if interval else None)
        )
        return await _send_inbox(
            inbox,
            output_dir=None if output_dir is None else Path(output_dir),
            calendar_path=calendar_path,
            issue_calendar=issue_calendar,
            submission_date=submission_date,
            interval=interval,
            resubmit=resubmit,
        )
    input_path = Path(input_path)
    output_dir = (
        Path(output_dir) if output_dir is not None else settings.data_dir / "statistics" / input_path.stem
    )
    if not input_path.is_file():
        raise InputError("statistics file not found", path=input_path)
    key = idempotency_key or derive_key(
        FLOW_NAME,
        endpoint=newspaper_endpoint(settings),
        files=(input_path,),
        parameters={"submission_date": submission_date},
    )
    parameters = {
        "input_path": input_path,
        "output_dir": output_dir,
        "calendar_path": calendar_path,
        "interval": interval,
        "resubmit": resubmit,
    }
    async with recorded_run(settings, flow=FLOW_NAME, idempotency_key=key, parameters=parameters) as (
        recorder,
        summary,
    ):
        async with recorder.step("read statistics"):
            checked = read_statistics_file(input_path, limits=settings.table_limits)
        files: list[Path] = []
        rejected_path = write_rejected(
            checked.rejected_report, output_dir / "rejected.csv", style=settings.csv_style
        )
        if rejected_path is not None:
            files.append(rejected_path)
            await recorder.document("rejected-rows", rejected_path)
            get_run_logger().warning(
                "%d statistics rows rejected, see %s", checked.rejected_rows, rejected_path
            )
        summary.update(
            input_rows=checked.input_rows,
            accepted_rows=len(checked.records),
            rejected_rows=checked.rejected_rows,
        )
        if not checked.records:
            raise InputError(
                f"no statistics row passed the checks; see {output_dir / 'rejected.csv'}", path=input_path
            )
        calendar = list(issue_calendar or [])
        if calendar_path is not None:
            calendar += read_calendar(Path(calendar_path), limits=settings.table_limits)
        day = submission_date or max(
            record.delivery_date for _, record in checked.records if record.delivery_date
        )
        closes = closing_intervals(calendar, day) if calendar else {}
        summary.update(submission_date=day.isoformat(), closes={str(k): v for k, v in closes.items()})
        if interval is not None:
            chosen = StatisticsInterval(interval)
            if not calendar:
                raise InputError(
                    "an interval needs the issue calendar (calendar file or dates)", path=input_path
                )
            if not closes[chosen]:
                following = next_issue_in_period(calendar, day, chosen)
                due = last_issue_in_period(calendar, day, chosen)
                note = (
                    f"not due: {day} is not the last submission of its {chosen.value} period, so nothing "
                    f"was sent; the next issue is on {following}, and the period's statistics are due with "
                    f"the submission of {due}"
                )
                summary.update(sent=False, not_due=note, due_on=due.isoformat())
                await recorder.message("info", "not-due", note)
                get_run_logger().info("%s", note)
                await summary.publish(
                    summary_markdown(f"Statistics {input_path.name}: not due", {"not due": note}, []),
                    output_dir,
                    description="Statistics",
                )
                return dict(summary)
        body = checked.submission.to_body()
        files.append(write_json(output_dir, "statistics-body", body))
        await recorder.document("statistics-body", files[-1])
        if idempotency_key is None:
            await recorder.rekey(body_key(FLOW_NAME, endpoint=newspaper_endpoint(settings), body=body))
            key = recorder.idempotency_key or key
        summary.update(idempotency_key=key)
        warnings = WarningLog(recorder)
        async with newspaper_client(settings, request_log=recorder.request_log) as client:
            submission = await submit_newspaper(
                recorder,
                warnings,
                kind="statistics",
                what="statistics",
                send=lambda: submit_statistics(client, checked.submission),
                remote_id_of=lambda _confirmation: f"uploaded:{key}",
                resubmit=resubmit,
                hint="ask the service whether the statistics of this file arrived",
                data=StatisticsJobData(records=len(checked.records), file=str(input_path)),
                fingerprint=body_fingerprint(body),
            )
        if submission.answer is None:
            confirmation = submission.job.facts(StatisticsJobData).confirmation
        else:
            confirmation = str(submission.answer.value)
            await recorder.update_job(
                submission.job,
                status=JobState.COMPLETED,
                finished=True,
                data=StatisticsJobData(confirmation=confirmation),
            )
            await recorder.message("info", "statistics", f"service confirmation: {confirmation}")
        facts: dict[str, Any] = {
            "file": input_path.name,
            "rows": checked.input_rows,
            "accepted": len(checked.records),
            "rejected": checked.rejected_rows,
            "submission date": day.isoformat(),
            "sent": "no, uploaded by an earlier run" if submission.resumed else "yes",
            "confirmation": confirmation,
        }
        facts.update({f"last of its {k.value} period": "yes" if v else "no" for k, v in closes.items()})
        text = summary_markdown(f"Statistics {input_path.name}", facts, warnings.lines)
        summary.update(confirmation=confirmation, warnings=warnings.lines)
        await summary.publish(text, output_dir, description="Statistics")
        return dict(summary)


async def _send_inbox(
    inbox: Path,
    *,
    output_dir: Path | None,
    calendar_path: Path | None,
    issue_calendar: list[dt.date] | None,
    submission_date: dt.date | None,
    interval: StatisticsInterval | None,
    resubmit: bool,
) -> dict[str, Any]:
    """Send every file of ``inbox``, oldest first, each as a run of this flow; sent files move to ``sent/``,
    files not due yet or failing stay. Fails when one failed (the others are sent all the same)."""
    logger = get_run_logger()
    make_dirs(inbox)
    calendar = calendar_path if calendar_path is not None else inbox_calendar(inbox)
    files = inbox_files(inbox)
    sent: dict[str, str] = {}
    not_due: dict[str, str] = {}
    failed: dict[str, str] = {}
    if not files:
        logger.info("the statistics inbox %s is empty: nothing to send", inbox)
    for path in files:
        try:
            outcome = await newspaper_statistics(
                input_path=path,
                output_dir=None if output_dir is None else output_dir / path.stem,
                calendar_path=calendar,
                issue_calendar=issue_calendar,
                submission_date=submission_date,
                interval=interval,
                resubmit=resubmit,
            )
        except Exception as error:  # noqa: BLE001 - one file's failure must not stop the others
            failed[path.name] = f"{type(error).__name__}: {error}"
            logger.error("%s failed and stays in the inbox: %s", path.name, error)
            continue
        if outcome.get("not_due"):
            not_due[path.name] = str(outcome["not_due"])
            logger.info("%s stays in the inbox: %s", path.name, outcome["not_due"])
        else:
            sent[path.name] = str(move_to_sent(path))
            logger.info("%s sent; moved to %s", path.name, sent[path.name])
    summary: dict[str, Any] = {"inbox": str(inbox), "sent": sent, "not_due": not_due, "failed": failed}
    if failed:
        names = ", ".join(sorted(failed))
        raise InboxNotSent(f"{len(failed)} of {len(files)} statistics files in {inbox} failed: {names}")
    return summary
