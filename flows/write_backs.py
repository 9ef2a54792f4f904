"""How a write-back into the customer's own file is said in a run's summary and recorded, for every flow
that writes one (the address batch's and the address validation's)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefect import get_run_logger

from fileio.errors import InputError
from fileio.writeback.report import WrittenBack
from flows.runs import RunSummary
from history.recorder import RunRecorder


def not_written(summary: RunSummary, policy: str, error: InputError | None) -> str:
    """A write-back that cannot be made (the input changed since it was read) is said, not a failure: the
    results are there."""
    get_run_logger().warning("write-back not written: %s", error)
    summary.update(writeback={"policy": policy, "error": str(error)})
    return f"\n\nWrite-back: not written ({error}).\n"


async def recorded(
    recorder: RunRecorder,
    summary: RunSummary,
    policy: str,
    written: WrittenBack,
    *,
    with_files: Iterable[tuple[str, Path]] = (),
) -> str:
    """Record the write-back's files (with ``with_files``, the run's other files of the step, in one
    transaction) and counts; the lines summary.md gets."""
    files = [("writeback", written.outcome.target)]
    if written.skipped_path is not None:
        files.append(("writeback-skipped", written.skipped_path))
    await recorder.documents([*files, *with_files])
    summary.update(writeback={"policy": policy, **written.summary()})
    return written.markdown(policy)
