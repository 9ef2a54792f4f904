"""Under umask 022 everything postflows writes in the data dir is its owner's alone (directories 0700, files
0600): the history and its WAL files, the resume checkpoints, the uploads, downloads and results, the sandbox
state; an output directory outside the data dir follows the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.address_batch import address_batch
from flows.address_query import address_query
from sandbox.state_file import SqliteState
from tests.flows.calls import call
from tests.flows.conftest import Sandbox

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
FAST = {"min_poll_interval_s": 0.05, "max_poll_interval_s": 0.2}


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _modes(root: Path) -> dict[Path, int]:
    """Every directory and file below ``root`` (``root`` included) → its permission bits."""
    found = {root: stat.S_IMODE(root.stat().st_mode)}
    for directory, names, files in os.walk(root):
        for name in [*names, *files]:
            path = Path(directory) / name
            found[path] = stat.S_IMODE(path.lstat().st_mode)
    return found


async def test_everything_in_the_data_dir_is_private_whatever_the_umask(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, umask_022: None
) -> None:
    await call(address_batch, input_path=EXAMPLE, output_dir=flow_env / "batch", **FAST)
    # One query is refused, so its run's checkpoint (names, addresses) stays for the next run.
    sandbox.inject(api="address", endpoint="runquery2", kind="service_status", value=801, after=3, times=1)
    await call(address_query, input_path=EXAMPLE, output_dir=flow_env / "query", concurrency=1)
    SqliteState(flow_env / "sandbox").next_id("orders", 1)

    modes = _modes(flow_env)
    names = {path.relative_to(flow_env).as_posix() for path in modes}
    # What the runs left: the history with its WAL files, checkpoints, upload, download and results.
    assert {"history.db", "history.db-wal", "batch/upload.txt", "batch/results.csv"} <= names
    assert any(name.startswith("resume/") for name in names)
    assert any(name.startswith("batch/download/") for name in names)
    assert {"sandbox/sandbox-state.db", "query/results.csv"} <= names
    loose = {
        path.relative_to(flow_env).as_posix() or ".": oct(mode)
        for path, mode in modes.items()
        if mode != (0o700 if path.is_dir() else 0o600)
    }
    assert not loose, loose


async def test_an_output_directory_outside_the_data_dir_follows_the_umask(
    sandbox: Sandbox, flow_env: Path, tmp_path: Path, umask_022: None
) -> None:
    out = tmp_path / "elsewhere" / "out"
    await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert stat.S_IMODE((out / "results.csv").stat().st_mode) == 0o644
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    assert stat.S_IMODE(flow_env.stat().st_mode) == 0o700
    assert stat.S_IMODE((flow_env / "history.db").stat().st_mode) == 0o600
