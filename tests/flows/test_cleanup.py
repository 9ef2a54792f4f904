"""The clean-up flow deletes what runs left behind, past an age, and records it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

import history
from flows import address_batch as batch_module
from flows.address_batch import address_batch
from flows.cleanup import cleanup
from postflows.settings import get_settings
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


class _Killed(BaseException):
    pass


async def test_cleanup_deletes_left_files_past_the_age_and_closes_their_job(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def crash(*args: object, **kwargs: object) -> None:
        raise _Killed

    async def no_cleanup(*args: object) -> None:
        return None

    with monkeypatch.context() as patched:
        patched.setattr(batch_module, "wait_for_batch", crash)
        patched.setattr(batch_module, "delete_key_files", no_cleanup)
        with pytest.raises(_Killed):
            await address_batch(input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)

    young = await cleanup(older_than_hours=1)
    assert young["deleted"] == [] and sandbox.transport.count("/deletefile") == 0

    factory = history.session_factory(get_settings().effective_database_url)
    with factory.begin() as session:
        for job in session.query(history.RemoteJob):
            job.created_at = history.utcnow() - timedelta(hours=2)
    summary = await cleanup(older_than_hours=1)
    assert len(summary["deleted"]) == 2 and summary["not_deleted"] == {}
    with factory() as session:
        jobs = {job.kind: job for job in session.query(history.RemoteJob)}
    assert jobs["upload-file"].deleted_at is not None and jobs["output-file"].deleted_at is not None
    assert jobs["batch"].status == "DELETED"

    # The next run with the same work starts a new job instead of resuming one whose files are gone.
    result = await address_batch(input_path=EXAMPLE, output_dir=tmp_path / "out", **FAST)
    assert result["result_rows"] == result["accepted_rows"]
    assert sandbox.transport.count("/runbatch") == 2
