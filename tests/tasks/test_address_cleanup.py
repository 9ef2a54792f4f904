"""The clean-up of recorded address-service files: what it deletes past an age, and what it keeps because a
batch job still owes its result (until the service's retention has passed, or when forced)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy.orm import Session, sessionmaker

import history
from connectors.address_service import AddressServiceClient
from connectors.http import ClientOptions
from connectors.retry import RetryPolicy
from history.models import JobState, RemoteJob
from tasks.address_service.cleanup import (
    JOB_MAY_STILL_RUN,
    RESULT_NOT_DOWNLOADED,
    CleanupReport,
    KeptFile,
    delete_recorded_files,
)

API = "address-service"
RETENTION = timedelta(days=92)
AGE = timedelta(days=7)


@dataclass
class Service:
    """A mock address service that answers /deletefile with ``status`` (or with HTTP ``http_status`` when
    given) and records the tokens asked for."""

    status: int = 0
    deleted: list[str] = field(default_factory=list)
    http_status: int | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path.startswith("/REST/v1/deletefile/"), request.url.path
        self.deleted.append(request.url.path.rsplit("/", 1)[1])
        if self.http_status is not None:
            return httpx.Response(self.http_status, text="unavailable")
        return httpx.Response(200, json={"Status": self.status})


@pytest.fixture
def factory(tmp_path: Path) -> sessionmaker[Session]:
    return history.session_factory(f"sqlite:///{tmp_path / 'history.db'}")


def record_batch(
    factory: sessionmaker[Session],
    state: JobState,
    *,
    age: timedelta,
    name: str = "b-1",
    data: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """A batch job in ``state`` with its upload and output file, all recorded ``age`` ago; the file tokens."""
    tokens = (f"{name}-in", f"{name}-out")
    created = history.utcnow() - age
    with factory.begin() as session:
        run = history.start_run(session, flow="address-batch", idempotency_key=f"key-{name}")
        jobs = [
            history.save_remote_job(
                session,
                run,
                api=API,
                kind=kind,
                remote_id=token,
                change=history.JobChange(status=JobState.SUBMITTED.value),
            )
            for kind, token in zip(("upload-file", "output-file"), tokens, strict=True)
        ]
        jobs.append(
            history.save_remote_job(
                session,
                run,
                api=API,
                kind="batch",
                remote_id=name,
                change=history.JobChange(
                    status=state.value,
                    data={"input_token": tokens[0], "output_token": tokens[1], **(data or {})},
                ),
            )
        )
        for job in jobs:
            job.created_at = created
    return tokens


async def clean(
    factory: sessionmaker[Session], service: Service, *, force: bool = False, now: datetime | None = None
) -> CleanupReport:
    now = now or history.utcnow()

    async def no_sleep(seconds: float) -> None:
        return None

    async with AddressServiceClient(
        "https://aws.example.test/REST/v1",
        username="tech-user",
        password=SecretStr("pw"),
        options=ClientOptions(
            transport=httpx.MockTransport(service), retry=RetryPolicy(max_attempts=1), sleep=no_sleep
        ),
    ) as client:
        return await delete_recorded_files(
            client,
            str(factory.kw["bind"].url),
            older_than=now - AGE,
            retention_cutoff=now - RETENTION,
            force=force,
        )


def recorded(factory: sessionmaker[Session]) -> dict[str, RemoteJob]:
    with factory() as session:
        return {job.remote_id: job for job in session.query(RemoteJob)}


async def test_a_finished_job_without_its_download_keeps_its_files_and_says_why(
    factory: sessionmaker[Session],
) -> None:
    tokens = record_batch(factory, JobState.FINISHED, age=timedelta(days=8))
    service = Service()
    report = await clean(factory, service)
    kept = KeptFile(job="b-1", state="FINISHED", reason=RESULT_NOT_DOWNLOADED)
    assert report.kept == {token: kept for token in tokens}
    assert report.deleted == [] and report.gone == [] and report.failed == {}
    assert service.deleted == []
    jobs = recorded(factory)
    assert all(jobs[token].deleted_at is None for token in tokens)
    assert jobs["b-1"].status == "FINISHED"


async def test_force_deletes_the_files_of_a_finished_job_and_closes_it(
    factory: sessionmaker[Session],
) -> None:
    tokens = record_batch(factory, JobState.FINISHED, age=timedelta(days=8))
    service = Service()
    report = await clean(factory, service, force=True)
    assert sorted(report.deleted) == sorted(tokens) and report.kept == {}
    assert sorted(service.deleted) == sorted(tokens)
    jobs = recorded(factory)
    assert all(jobs[token].deleted_at is not None for token in tokens)
    assert jobs["b-1"].status == "DELETED"


async def test_a_finished_job_past_the_services_retention_is_cleaned_without_force(
    factory: sessionmaker[Session],
) -> None:
    tokens = record_batch(factory, JobState.FINISHED, age=RETENTION + timedelta(days=1))
    service = Service(status=302)  # the service deleted them itself after three months
    report = await clean(factory, service)
    assert sorted(report.gone) == sorted(tokens) and report.kept == {} and report.deleted == []
    jobs = recorded(factory)
    assert all(jobs[token].deleted_at is not None for token in tokens)
    assert jobs["b-1"].status == "DELETED"


async def test_a_completed_jobs_files_are_deleted_as_before(factory: sessionmaker[Session]) -> None:
    tokens = record_batch(
        factory,
        JobState.COMPLETED,
        age=timedelta(days=8),
        data={"download": "/out/download/output.bin", "download_sha256": "0" * 64},
    )
    service = Service()
    report = await clean(factory, service)
    assert sorted(report.deleted) == sorted(tokens) and report.kept == {}
    assert recorded(factory)["b-1"].status == "COMPLETED"


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        (JobState.PENDING, JOB_MAY_STILL_RUN),
        (JobState.UNCERTAIN, JOB_MAY_STILL_RUN),
        (JobState.SUBMITTED, JOB_MAY_STILL_RUN),
        (JobState.RUNNING, JOB_MAY_STILL_RUN),
        (JobState.WAITING, JOB_MAY_STILL_RUN),
        (JobState.FINISHED, RESULT_NOT_DOWNLOADED),
        (JobState.COMPLETED, None),
        (JobState.FAILED, None),
        (JobState.CANCELLED, None),
        (JobState.DELETED, None),
        (JobState.SUPERSEDED, None),
    ],
)
async def test_only_a_job_that_may_still_give_a_result_keeps_its_files(
    factory: sessionmaker[Session], state: JobState, reason: str | None
) -> None:
    tokens = record_batch(factory, state, age=timedelta(days=30))
    report = await clean(factory, Service())
    if reason is None:
        assert report.kept == {} and sorted(report.deleted) == sorted(tokens)
    else:
        assert {token: kept.reason for token, kept in report.kept.items()} == dict.fromkeys(tokens, reason)
        assert report.deleted == []


async def test_young_files_are_neither_deleted_nor_reported_and_other_jobs_go_on(
    factory: sessionmaker[Session],
) -> None:
    young = record_batch(factory, JobState.FINISHED, age=timedelta(days=1), name="young")
    owed = record_batch(factory, JobState.WAITING, age=timedelta(days=8), name="owed")
    done = record_batch(factory, JobState.FAILED, age=timedelta(days=8), name="done")
    service = Service()
    report = await clean(factory, service)
    assert sorted(report.deleted) == sorted(done)
    assert set(report.kept) == set(owed) and {kept.job for kept in report.kept.values()} == {"owed"}
    assert not set(young) & set(service.deleted)


@pytest.mark.parametrize("status", [302, 301, 201, 999])
async def test_only_status_0_deletes_any_other_answer_leaves_the_file_recorded_on_the_service(
    factory: sessionmaker[Session], status: int
) -> None:
    """302 is DatabaseItemNotFound, "error accessing the database" (§7) as 301 is: no proof of a deletion."""
    tokens = record_batch(factory, JobState.COMPLETED, age=timedelta(days=8))
    report = await clean(factory, Service(status=status))
    assert report.deleted == [] and report.gone == [] and sorted(report.failed) == sorted(tokens)
    assert all(f"Status {status}" in reason for reason in report.failed.values())
    jobs = recorded(factory)
    for token in tokens:
        assert jobs[token].deleted_at is None and jobs[token].status == "SUBMITTED"
        assert jobs[token].remote_status == f"deletefile Status {status}"
        assert f"Status {status}" in jobs[token].data["not_deleted"]
    line = report.still_on_service()
    assert line is not None and line.startswith("2 remote files still on the address service")
    assert all(token in line for token in tokens) and "`postflows cleanup` asks again" in line


async def test_a_file_left_on_the_service_is_asked_for_again_whatever_its_age(
    factory: sessionmaker[Session],
) -> None:
    tokens = record_batch(factory, JobState.COMPLETED, age=timedelta(hours=1))
    first = await clean(factory, Service(status=302), now=history.utcnow() + AGE + timedelta(hours=1))
    assert sorted(first.failed) == sorted(tokens)
    # An hour old, far below the clean-up's age: asked for again because the last answer was not Status 0.
    service = Service()
    again = await clean(factory, service)
    assert sorted(again.deleted) == sorted(tokens) and again.failed == {}
    assert again.still_on_service() is None
    assert sorted(service.deleted) == sorted(tokens)
    jobs = recorded(factory)
    for token in tokens:
        assert jobs[token].deleted_at is not None and jobs[token].status == "DELETED"
        assert jobs[token].data.get("not_deleted") is None
    assert await clean(factory, Service()) == CleanupReport()


async def test_past_the_services_retention_only_a_database_status_reads_as_gone(
    factory: sessionmaker[Session],
) -> None:
    tokens = record_batch(factory, JobState.COMPLETED, age=RETENTION + timedelta(days=1))
    down = await clean(factory, Service(http_status=503))
    assert sorted(down.failed) == sorted(tokens) and down.gone == []
    assert all(recorded(factory)[token].deleted_at is None for token in tokens)
    refused = await clean(factory, Service(status=999))
    assert sorted(refused.failed) == sorted(tokens) and refused.gone == []
    gone = await clean(factory, Service(status=301))
    assert sorted(gone.gone) == sorted(tokens) and gone.failed == {}
    assert all(recorded(factory)[token].deleted_at is not None for token in tokens)


async def test_each_deletion_is_recorded_before_the_next_request_leaves(
    factory: sessionmaker[Session],
) -> None:
    """A run stopped between two deletions leaves no file deleted on the service but recorded as there."""
    tokens = record_batch(factory, JobState.COMPLETED, age=timedelta(days=8))
    seen: dict[str, list[str]] = {}

    @dataclass
    class Watching(Service):
        def __call__(self, request: httpx.Request) -> httpx.Response:
            seen[request.url.path.rsplit("/", 1)[1]] = sorted(
                token for token, job in recorded(factory).items() if job.deleted_at is not None
            )
            return super().__call__(request)

    report = await clean(factory, Watching())
    first, second = report.deleted
    assert sorted(report.deleted) == sorted(tokens)
    assert seen == {first: [], second: [first]}
