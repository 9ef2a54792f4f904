"""The Prefect task that transmits statistics records (§2.6); reading and checking the file is
:mod:`fileio.newspaper.statistics_input` (no Prefect there, so the CLI checks a file before Prefect loads).
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from connectors.newspaper import ApiResult, NewspaperClient, StatisticsSubmission
from fileio.newspaper.statistics_input import read_calendar, read_statistics_file
from history.jobs import JobData


class StatisticsJobData(JobData):
    """The facts of a statistics upload: the file and its records sent, the service's confirmation."""

    records: int | None = None
    file: str | None = None
    confirmation: str | None = None


# The flow takes its reading steps from here, beside the submission.
__all__ = ["read_calendar", "read_statistics_file", "submit_statistics"]


@task(name="newspaper-submit-statistics", cache_policy=NO_CACHE)
async def submit_statistics(client: NewspaperClient, submission: StatisticsSubmission) -> ApiResult[str]:
    """POST the statistics; returns the service's confirmation text."""
    return await client.submit_statistics(submission)
