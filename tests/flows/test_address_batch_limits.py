"""A batch result over a limit on what is read: the run fails with the typed refusal instead of the worker,
the raw download stays, the remote files are deleted, and the same command says so at once until the limit
is raised (then it reads the download again)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

import history
from fileio.address_service import result_file
from fileio.errors import ResultUnreadable
from flows.address_batch import address_batch
from runtime.settings import get_settings
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.flows.test_address_batch import EXAMPLE, FAST, _file_tokens, _job, _runs, _token_state


class WidenedResults(httpx.AsyncBaseTransport):
    """The sandbox transport, with ``rows`` appended to the result file of every batch download (inside the
    ZIP, when the download is one)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, rows: bytes) -> None:
        self.inner = inner
        self.rows = rows

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if "/downloadfile/" not in request.url.path or response.status_code != 200:
            return response
        body = await response.aread()
        if body.lstrip().startswith(b"{"):  # the service's Status answer, no file
            return response
        headers = [
            (name, value) for name, value in response.headers.items() if name.lower() != "content-length"
        ]
        return httpx.Response(200, headers=headers, content=self._widened(body), request=request)

    def _widened(self, body: bytes) -> bytes:
        if not body.startswith(b"PK"):
            return body + self.rows
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            members = {name: archive.read(name) for name in archive.namelist()}
        result = max(
            (name for name in members if "move" not in name.lower()), key=lambda name: len(members[name])
        )
        members[result] += self.rows
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, content in members.items():
                archive.writestr(name, content)
        return buffer.getvalue()


def widen(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, *, short_rows: int, tabs: int) -> None:
    """Downloads whose result ends in ``short_rows`` rows of no uploaded record and one row of ``tabs``."""
    rows = b"".join(b"%d\t1\r\n" % (90_000 + number) for number in range(short_rows)) + b"\t" * tabs + b"\r\n"
    transport = WidenedResults(sandbox.transport, rows)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: transport)


def _batch_jobs() -> list[history.RemoteJob]:
    return [job for run in _runs() for job in run.remote_jobs if job.kind == "batch"]


async def test_a_row_of_100000_tabs_fails_the_run_keeps_the_download_and_deletes_the_files(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    widen(sandbox, monkeypatch, short_rows=1000, tabs=100_000)
    out = tmp_path / "out"
    with pytest.raises(ResultUnreadable) as refused:
        await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert (
        "has 100,001 columns, more than the limit of 1,000 columns per row (POSTFLOWS_TABLE_MAX_COLUMNS)"
        in (refused.value.problem)
    )
    assert refused.value.setting == "POSTFLOWS_TABLE_MAX_COLUMNS" and refused.value.limit == 1000

    (run,) = _runs()
    assert run.state == "FAILED" and "POSTFLOWS_TABLE_MAX_COLUMNS" in (run.error or "")
    batch = _job(run, "batch")
    assert batch.status == "COMPLETED"
    download = Path(batch.data["download"])
    assert download.is_file() and str(download) in refused.value.problem  # kept as it came
    assert batch.data["unreadable"]["setting"] == "POSTFLOWS_TABLE_MAX_COLUMNS"
    assert not (out / "results.csv").exists()
    assert sandbox.transport.count("/deletefile") == 2
    for token in _file_tokens(run):
        assert await _token_state(sandbox, token) == 302


async def test_the_same_command_says_so_at_once_and_reads_again_once_the_limit_is_raised(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    widen(sandbox, monkeypatch, short_rows=10, tabs=1500)
    out = tmp_path / "out"
    with pytest.raises(ResultUnreadable, match=r"1,501 columns, more than the limit of 1,000"):
        await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    (first,) = _runs()
    downloaded = sandbox.transport.count("/downloadfile")

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the download was read again under the same limits")

    with monkeypatch.context() as patched:
        patched.setattr(result_file, "read_result_file", never)
        with pytest.raises(ResultUnreadable) as again:
            await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert again.value.setting == "POSTFLOWS_TABLE_MAX_COLUMNS" and again.value.limit == 1000
    assert f"(found by run {first.id})" in again.value.problem
    assert "1,501 columns, more than the limit of 1,000 columns per row" in again.value.problem
    assert Path(_job(first, "batch").data["download"]).name in again.value.problem
    assert sandbox.transport.count("/runbatch") == 1
    assert sandbox.transport.count("/downloadfile") == downloaded

    monkeypatch.setenv("POSTFLOWS_TABLE_MAX_COLUMNS", "1200")  # raised, not enough: read and refused anew
    with pytest.raises(ResultUnreadable, match=r"more than the limit of 1,200 columns") as anew:
        await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert "found by run" not in anew.value.problem

    monkeypatch.setenv("POSTFLOWS_TABLE_MAX_COLUMNS", "2000")
    summary = await call(address_batch, input_path=EXAMPLE, output_dir=out, **FAST)
    assert summary.result_rows == summary.accepted_rows
    assert (out / "results.csv").is_file()
    (batch,) = _batch_jobs()
    assert batch.status == "COMPLETED" and not batch.data.get("unreadable")
    assert sandbox.transport.count("/runbatch") == 1
    assert get_settings().table_limits.max_columns == 2000
