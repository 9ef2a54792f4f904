"""Individual queries are billed: a row whose answer was lost or came as Status 203 is asked once, kept
uncertain by a plain re-run (exit 2, naming --resubmit), and asked again, alone, with --resubmit. Counted
from what the sandbox received and accepted, whatever the client saw.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import httpx
import pandas as pd
import pytest
from typer.testing import CliRunner

from flows.address_query import address_query
from postflows.cli import app
from sandbox.request_counter import RequestCount, RequestCounter
from tasks.address_service.query import QueriesUncertain
from tests.flows.calls import call
from tests.flows.conftest import Sandbox
from tests.outputs import read_output_csv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "address-batch.csv"
runner = CliRunner()


class _QueryIds(httpx.AsyncBaseTransport):
    """The sandbox transport, noting the record Id of every individual query sent."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.ids: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.rsplit("/", 1)[-1].startswith("runquery2"):
            self.ids.append(int(json.loads(request.content)["address"]["Id"]))
        return await self.inner.handle_async_request(request)


def _counted(sandbox: Sandbox) -> tuple[int, int]:
    """runquery2 requests the sandbox received, and those it accepted (answered, and so billed)."""
    counter: RequestCounter = sandbox.transport.inner.app.state.requests

    def queries(items: list[RequestCount]) -> int:
        return sum(item.count for item in items if item.endpoint == "runquery2")

    return queries(counter.counts()), queries(counter.accepted())


def _json_tail(output: str) -> dict[str, object]:
    lines = output.splitlines()
    start = max(number for number, line in enumerate(lines) if line == "{")
    end = next(number for number in range(start, len(lines)) if lines[number] == "}")
    return dict(json.loads("\n".join(lines[start : end + 1])))


def _uncertain(results: pd.DataFrame) -> dict[int, str]:
    rows = results[results["QueryError"].str.startswith("uncertain: ")]
    return {int(record_id): text for record_id, text in zip(rows["row"], rows["QueryError"], strict=True)}


def _failure_line(output: str) -> str:
    [line] = [line for line in output.splitlines() if line.startswith("failed:")]
    return line


@pytest.fixture
def recorded(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> _QueryIds:
    recording = _QueryIds(sandbox.transport)
    monkeypatch.setattr("runtime.wiring.embedded.sandbox_transport", lambda settings: recording)
    return recording


def test_a_lost_answer_and_a_203_are_asked_once_held_by_a_rerun_and_asked_again_only_with_resubmit(
    sandbox: Sandbox, recorded: _QueryIds, flow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    # Both processed by the service (and so billed), the third query's answer lost, the sixth's a Status 203.
    sandbox.inject(api="address", endpoint="runquery2", kind="lost_answer", after=2, times=1)
    sandbox.inject(api="address", endpoint="runquery2", kind="processed_status", value=203, after=4, times=1)
    out = tmp_path / "out"
    command = ["address-query", str(EXAMPLE), "--out", str(out), "--concurrency", "1"]

    first = runner.invoke(app, command)
    assert first.exit_code == 2, first.output
    summary = _json_tail(first.output)
    rows = int(str(summary["accepted_rows"]))
    assert summary["uncertain_rows"] == 2 and summary["failed_queries"] == 0
    assert _counted(sandbox) == (rows, rows), "each row asked once, every query answered by the service"
    assert sorted(Counter(recorded.ids).values()) == [1] * rows
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    uncertain = _uncertain(results)
    assert sorted(uncertain) == sorted(recorded.ids[i] for i in (2, 5))
    lost, slow = (uncertain[recorded.ids[i]] for i in (2, 5))
    assert lost.startswith("uncertain: answer lost") and slow.startswith("uncertain: Status 203")
    assert "--resubmit" in lost and (results["QueryError"] == "").sum() == rows - 2
    report = (out / "summary.md").read_text(encoding="utf-8")
    assert "Uncertain rows: 2" in report and "--resubmit" in report
    assert "--resubmit" in _failure_line(first.output) and "2 address query row(s)" in first.output

    again = runner.invoke(app, command)
    assert again.exit_code == 2, again.output
    assert "--resubmit" in _failure_line(again.output)
    assert _counted(sandbox) == (rows, rows), "a plain re-run asks nothing again"
    summary = _json_tail(again.output)
    assert (summary["uncertain_rows"], summary["query_sends"], summary["resumed_rows"]) == (2, 0, rows - 2)
    held = _uncertain(read_output_csv(out / "results.csv", dtype=str, keep_default_na=False))
    assert sorted(held) == sorted(uncertain) and all("(in an earlier run)" in text for text in held.values())

    resubmitted = runner.invoke(app, [*command, "--resubmit"])
    assert resubmitted.exit_code == 0, resubmitted.output
    assert _counted(sandbox) == (rows + 2, rows + 2)
    assert sorted(recorded.ids[rows:]) == sorted(uncertain), "--resubmit asks exactly the uncertain rows"
    summary = _json_tail(resubmitted.output)
    assert (summary["uncertain_rows"], summary["resubmitted_rows"], summary["resumed_rows"]) == (
        0,
        2,
        rows - 2,
    )
    assert summary["replaced"] == {"uncertain queries": ["2 records asked again (--resubmit)"]}
    results = read_output_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert (results["QueryError"] == "").all() and (results["QSTAT"] != "").all()


async def test_a_row_refused_again_after_resubmit_is_asked_again_by_a_plain_rerun(
    sandbox: Sandbox, recorded: _QueryIds, flow_env: Path, tmp_path: Path
) -> None:
    """--resubmit answered with a refusal that means "not processed" (Status 801): the row is no longer
    uncertain, and the next plain run asks it again."""
    sandbox.inject(api="address", endpoint="runquery2", kind="read_timeout", after=1, times=1)
    out = tmp_path / "out"
    with pytest.raises(QueriesUncertain) as first:
        await call(address_query, input_path=EXAMPLE, output_dir=out, concurrency=1)
    assert first.value.exit_code == 2 and first.value.rows == [recorded.ids[1]]
    assert "answer lost" in str(first.value) and "ReadTimeout" in str(first.value)
    rows = len(recorded.ids)

    sandbox.inject(api="address", endpoint="runquery2", kind="service_status", value=801, times=1)
    summary = await call(address_query, input_path=EXAMPLE, output_dir=out, concurrency=1, resubmit=True)
    assert recorded.ids[rows:] == first.value.rows
    assert (summary.uncertain_rows, summary.failed_queries) == (0, 1)

    summary = await call(address_query, input_path=EXAMPLE, output_dir=out, concurrency=1)
    assert recorded.ids[rows + 1 :] == first.value.rows
    assert (summary.uncertain_rows, summary.failed_queries, summary.query_sends) == (0, 0, 1)
