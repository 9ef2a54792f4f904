"""The submit-once guard: pending marker before the POST, the id after it, refusal after a lost answer."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from connectors.errors import AuthFailed, ServerError, TransportFailure
from connectors.newspaper import ApiResult, NewspaperMessage, NewspaperRejected
from tasks.newspaper.submissions import SubmissionUncertain, is_pending, nothing_was_created, submit_once
from tasks.run_history import RunRecorder

WARNING = NewspaperMessage(code="0900", message="0900 Late delivery registered")


def recorder(tmp_path: Path, key: str = "order-key") -> RunRecorder:
    return RunRecorder.start(
        f"sqlite:///{tmp_path / 'history.db'}", flow="test", idempotency_key=key, parameters={}
    )


class Service:
    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.posts = 0

    async def post(self) -> ApiResult[int]:
        self.posts += 1
        if self.failures:
            raise self.failures.pop(0)
        return ApiResult(7000000 + self.posts, (WARNING,))


async def submit(rec: RunRecorder, service: Service, *, resubmit: bool = False):  # type: ignore[no-untyped-def]
    return await submit_once(
        rec, kind="order", what="order", post=service.post, remote_id_of=str, resubmit=resubmit
    )


async def test_first_submission_records_the_id_and_its_warnings(tmp_path: Path) -> None:
    service = Service()
    submission = await submit(recorder(tmp_path), service)
    assert submission.job.remote_id == "7000001" and not submission.resumed
    assert submission.warnings == (WARNING,) and submission.answer == 7000001
    again = await submit(recorder(tmp_path), service)
    assert again.resumed and again.job.remote_id == "7000001" and again.answer is None
    assert service.posts == 1


async def test_other_key_posts_again(tmp_path: Path) -> None:
    service = Service()
    await submit(recorder(tmp_path, "a"), service)
    other = await submit(recorder(tmp_path, "b"), service)
    assert other.job.remote_id == "7000002" and service.posts == 2


async def test_ambiguous_failure_leaves_marker_and_refuses(tmp_path: Path) -> None:
    service = Service(ServerError("boom", api="newspaper", status_code=502))
    with pytest.raises(ServerError):
        await submit(recorder(tmp_path), service)
    pending = recorder(tmp_path).find_job(api="newspaper", kind="order")
    assert pending is not None and is_pending(pending) and pending.status == "SUBMITTING"
    with pytest.raises(SubmissionUncertain, match="--resubmit"):
        await submit(recorder(tmp_path), service)
    assert service.posts == 1
    resubmitted = await submit(recorder(tmp_path), service, resubmit=True)
    assert resubmitted.job.remote_id == "7000002" and service.posts == 2
    assert (await submit(recorder(tmp_path), service)).resumed


async def test_rejection_clears_the_marker(tmp_path: Path) -> None:
    rejected = NewspaperRejected([NewspaperMessage(code="0007", message="0007 Issue number used")])
    service = Service(rejected)
    with pytest.raises(NewspaperRejected):
        await submit(recorder(tmp_path), service)
    assert recorder(tmp_path).find_job(api="newspaper", kind="order") is None
    assert (await submit(recorder(tmp_path), service)).job.remote_id == "7000002"


@pytest.mark.parametrize(
    ("error", "created_nothing"),
    [
        (TransportFailure("no connection", api="newspaper", sent=False), True),
        (TransportFailure("read timeout", api="newspaper", sent=True), False),
        (AuthFailed("401", api="newspaper", status_code=401), True),
        (ServerError("500", api="newspaper", status_code=500), False),
        (httpx.ReadTimeout("raw"), False),
    ],
)
def test_nothing_was_created(error: BaseException, created_nothing: bool) -> None:
    assert nothing_was_created(error) is created_nothing
