"""Statistics transmission: records from a .csv/.xlsx file, checked against §2.6 (rejected rows reported,
none lost) → POST once per file and key; whether the submission closes its AZ quarter, AZA semester or AZB
year is decided from the issue calendar.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from connectors.errors import PostflowsError
from flows.runs import recorded_run
from history.models import JobState
from postflows.settings import get_settings
from postflows.wiring import newspaper_client, newspaper_endpoint
from tasks.errors import InputError
from tasks.idempotency import derive_key
from tasks.newspaper.intervals import StatisticsInterval, closing_intervals, next_issue_in_period
from tasks.newspaper.outputs import summary_markdown, write_json
from tasks.newspaper.statistics import read_calendar, read_statistics_file, submit_statistics
from tasks.newspaper.submissions import WarningLog, body_fingerprint, submit_newspaper
from tasks.reports import write_csv

FLOW_NAME = "newspaper-statistics"


class StatisticsNotDue(PostflowsError):
    """The submission is not the last of its interval, so its statistics are not transmitted yet."""


@flow(name=FLOW_NAME, log_prints=False)
async def newspaper_statistics(
    input_path: Path,
    output_dir: Path | None = None,
    calendar_path: Path | None = None,
    issue_calendar: list[dt.date] | None = None,
    submission_date: dt.date | None = None,
    interval: StatisticsInterval | None = None,
    idempotency_key: str | None = None,
    resubmit: bool = False,
) -> dict[str, Any]:
    """Check and transmit a statistics file.

    Args:
        input_path: the statistics records (.csv or .xlsx, §2.6 column names or German aliases).
        output_dir: where rejected.csv, the body sent and summary.md go (default: data dir/statistics/<file>).
        calendar_path: the year's issue calendar (.csv/.xlsx, a deliveryDate/date column).
        issue_calendar: the issue calendar as dates (instead of a file).
        submission_date: the submission the statistics belong to (default: the latest deliveryDate).
        interval: AZ, AZA or AZB: refuse to transmit unless this submission is the last of its interval.
        idempotency_key: identifies the upload; defaults to a hash of the file, the submission date and the
            service's address and client id. The same key is never posted twice.
        resubmit: post even though an earlier POST of this upload may have reached the service.

    Returns:
        The run summary: accepted and rejected rows, interval decisions, the service's confirmation.
    """
    settings = get_settings()
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
            checked = read_statistics_file(input_path)
        files: list[Path] = []
        if len(checked.rejected):
            files.append(
                write_csv(
                    checked.rejected, output_dir / "rejected.csv", formula_guard=settings.csv_formula_guard
                )
            )
            await recorder.document("rejected-rows", files[-1])
            get_run_logger().warning("%d statistics rows rejected, see %s", checked.rejected_rows, files[-1])
        summary.update(
            idempotency_key=key,
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
            calendar += read_calendar(Path(calendar_path))
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
                raise StatisticsNotDue(
                    f"{day} is not the last submission of its {chosen.value} period; the next issue is on "
                    f"{following}, so nothing was sent"
                )
        files.append(write_json(output_dir, "statistics-body", checked.submission.to_body()))
        await recorder.document("statistics-body", files[-1])
        warnings = WarningLog(recorder)
        async with newspaper_client(settings, request_log=recorder.request_log) as client:
            body = checked.submission.to_body()
            submission = await submit_newspaper(
                recorder,
                warnings,
                kind="statistics",
                what="statistics",
                send=lambda: submit_statistics(client, checked.submission),
                remote_id_of=lambda _confirmation: f"uploaded:{key}",
                resubmit=resubmit,
                hint="ask the service whether the statistics of this file arrived",
                data={"records": len(checked.records), "file": str(input_path)},
                fingerprint=body_fingerprint(body),
            )
        if submission.answer is None:
            confirmation = submission.job.data.get("confirmation")
        else:
            confirmation = str(submission.answer.value)
            await recorder.update_job(
                submission.job,
                status=JobState.COMPLETED,
                finished=True,
                data={"confirmation": confirmation},
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
