"""The one retry policy of idempotent steps: which failures it retries, its waits, and that the settings
reach every step; a step called outside a run is a plain call."""

from __future__ import annotations

from typing import Any

import pytest
from prefect.states import Failed

from connectors.errors import (
    AuthFailed,
    DeadlineExceeded,
    HttpStatusError,
    JsonTooDeep,
    MalformedResponse,
    NotFound,
    RateLimited,
    RemoteRejected,
    ResponseTooLarge,
    ServerError,
    TransportFailure,
)
from fileio.errors import InputError
from tasks.address_service.batch import delete_file, download_output
from tasks.newspaper.orders import fetch_order_reports, fetch_order_status, submit_order
from tasks.newspaper.purchases import submit_purchase
from tasks.polling import PollTimedOut
from tasks.retrying import (
    StepRetries,
    current_step_retries,
    run_step,
    step_retries,
    transient_failure,
    with_retries,
)


def _retried(error: BaseException) -> bool:
    return transient_failure(download_output, None, Failed(data=error))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "error",
    [
        ServerError("down", api="a", status_code=503),
        RateLimited("slow down", api="a", status_code=429),
        TransportFailure("reset", api="a"),
        MalformedResponse("not JSON", api="a"),
        ResponseTooLarge("too large", api="a", max_bytes=10),
        JsonTooDeep("too deep", api="a"),
        DeadlineExceeded("too slow", api="a"),
    ],
)
def test_transient_typed_errors_are_retried(error: Exception) -> None:
    assert _retried(error)


@pytest.mark.parametrize(
    "error",
    [
        HttpStatusError("bad request", api="a", status_code=400),
        AuthFailed("no", api="a", status_code=401),
        NotFound("gone", api="a", status_code=404),
        RemoteRejected("refused", api="a", code="0000"),
        InputError("unreadable", path="x.csv"),
        PollTimedOut("job", 10.0, None),
        ValueError("a bug"),
    ],
)
def test_refusals_and_our_own_errors_are_not(error: Exception) -> None:
    assert not _retried(error)


def test_the_waits_grow_exponentially() -> None:
    assert StepRetries(retries=4, delay_s=10.0).delays() == [10.0, 20.0, 40.0, 80.0]
    assert StepRetries(retries=0).delays() == []


def test_the_policy_reaches_every_idempotent_step_and_no_submission() -> None:
    policy = StepRetries(retries=2, delay_s=0.5, jitter=0.1)
    for step in (download_output, delete_file, fetch_order_status, fetch_order_reports):
        retried = with_retries(step, policy)
        assert (retried.retries, retried.retry_delay_seconds, retried.retry_jitter_factor) == (
            2,
            [0.5, 1.0],
            0.1,
        )
        assert retried.retry_condition_fn is transient_failure
        assert step.retry_condition_fn is transient_failure
    for submission in (submit_order, submit_purchase):
        assert submission.retries == 0 and submission.retry_condition_fn is None


def test_a_run_sets_its_own_policy_and_leaves_none_behind() -> None:
    before = current_step_retries()
    policy = StepRetries(retries=1, delay_s=0.5, jitter=0.0)
    with step_retries(policy):
        assert current_step_retries() is policy
    assert current_step_retries() is before


async def test_outside_a_run_a_step_is_a_plain_call() -> None:
    class Service:
        deleted: list[str] = []

        async def delete_file(self, token: str) -> None:
            self.deleted.append(token)

    service: Any = Service()
    assert await run_step(delete_file, service, "t-1") is None
    assert service.deleted == ["t-1"]
